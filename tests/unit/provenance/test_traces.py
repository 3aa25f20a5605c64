from __future__ import annotations

from provgraph.provenance import (
    EdgeChoice,
    LlmCall,
    agent_question_quads,
    analysis_quads,
    conclusion_quads,
    docrag_exploration_quads,
    docrag_question_quads,
    exploration_quads,
    focus_quads,
    grounding_quads,
    question_quads,
    synthesis_quads,
)
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from tests.unit.provenance.helpers import nq

from .test_subgraph import T, T_LIT

R = "@urn:graph:retrieval"
Q, G, X, F, A = (Iri(f"urn:q:{n}") for n in "qgxfa")
CALL = LlmCall(model="m1", input_tokens=120, output_tokens=30)
CALL_QUADS = lambda s: {  # noqa: E731
    f'<{s}> <tg:inToken> "120"^^int {R}', f'<{s}> <tg:outToken> "30"^^int {R}', f'<{s}> <tg:llmModel> "m1" {R}'
}


def test_question() -> None:
    assert nq(question_quads(Q, query='What "is" {x}?', started=T)) == {
        f"<urn:q:q> <rdf:type> <prov:Activity> {R}",
        f"<urn:q:q> <rdf:type> <tg:Question> {R}",
        f"<urn:q:q> <rdf:type> <tg:GraphRagQuestion> {R}",
        f'<urn:q:q> <rdfs:label> "GraphRAG Question" {R}',
        f'<urn:q:q> <tg:query> "What \\"is\\" {{x}}?" {R}',
        f"<urn:q:q> <prov:startedAtTime> {T_LIT} {R}",
    }
    informed = question_quads(Q, query="q", started=T, informed_by=Iri("urn:agent:1"))
    assert f"<urn:q:q> <prov:wasInformedBy> <urn:agent:1> {R}" in nq(informed)


def test_grounding_with_and_without_llm_usage() -> None:
    base = {
        f"<urn:q:g> <rdf:type> <prov:Entity> {R}", f"<urn:q:g> <rdf:type> <tg:Grounding> {R}",
        f'<urn:q:g> <rdfs:label> "Grounding" {R}', f"<urn:q:g> <prov:wasGeneratedBy> <urn:q:q> {R}",
        f'<urn:q:g> <tg:concept> "war" {R}', f'<urn:q:g> <tg:concept> "terror" {R}',
    }
    assert nq(grounding_quads(G, question=Q, concepts=["war", "terror"], llm=None)) == base
    assert nq(grounding_quads(G, question=Q, concepts=["war", "terror"], llm=CALL)) == base | CALL_QUADS("urn:q:g")


def test_exploration_grounded_and_not() -> None:
    plain = {
        f"<urn:q:x> <rdf:type> <prov:Entity> {R}", f"<urn:q:x> <rdf:type> <tg:Exploration> {R}",
        f'<urn:q:x> <rdfs:label> "Exploration" {R}', f"<urn:q:x> <prov:wasGeneratedBy> <urn:q:q> {R}",
        f'<urn:q:x> <tg:edgeCount> "50"^^int {R}', f"<urn:q:x> <tg:entity> <urn:e:1> {R}",
    }
    assert nq(exploration_quads(X, question=Q, edge_count=50, entities=[Iri("urn:e:1")])) == plain
    grounded = exploration_quads(X, question=Q, edge_count=50, entities=[Iri("urn:e:1")], derived_from=G)
    assert nq(grounded) == plain | {f"<urn:q:x> <prov:wasDerivedFrom> <urn:q:g> {R}"}


def test_focus_with_edge_selections_keeps_original_terms() -> None:
    edge = TripleTerm(Iri("urn:e:a"), Iri("urn:p:b"), Literal("lit", language="en"))
    choices = [EdgeChoice(Iri("urn:es:0"), edge, "because", 0.83), EdgeChoice(Iri("urn:es:1"), edge, "again")]
    assert nq(focus_quads(F, question=Q, exploration=X, selections=choices, llm=CALL)) == {
        f"<urn:q:f> <rdf:type> <prov:Entity> {R}", f"<urn:q:f> <rdf:type> <tg:Focus> {R}",
        f'<urn:q:f> <rdfs:label> "Focus" {R}', f"<urn:q:f> <prov:wasGeneratedBy> <urn:q:q> {R}",
        f"<urn:q:f> <prov:wasDerivedFrom> <urn:q:x> {R}",
        f"<urn:q:f> <tg:selectedEdge> <urn:es:0> {R}", f"<urn:q:f> <tg:selectedEdge> <urn:es:1> {R}",
        f"<urn:es:0> <rdf:type> <tg:EdgeSelection> {R}", f"<urn:es:1> <rdf:type> <tg:EdgeSelection> {R}",
        f'<urn:es:0> <tg:edge> <<( <urn:e:a> <urn:p:b> "lit"@en )>> {R}',
        f'<urn:es:1> <tg:edge> <<( <urn:e:a> <urn:p:b> "lit"@en )>> {R}',
        f'<urn:es:0> <tg:reasoning> "because" {R}', f'<urn:es:1> <tg:reasoning> "again" {R}',
        f'<urn:es:0> <tg:score> "0.83"^^dbl {R}',
    } | CALL_QUADS("urn:q:f")


def test_synthesis() -> None:
    base = {
        f"<urn:q:a> <rdf:type> <prov:Entity> {R}", f"<urn:q:a> <rdf:type> <tg:Synthesis> {R}",
        f"<urn:q:a> <rdf:type> <tg:Answer> {R}", f'<urn:q:a> <rdfs:label> "Synthesis" {R}',
        f"<urn:q:a> <prov:wasGeneratedBy> <urn:q:q> {R}", f"<urn:q:a> <prov:wasDerivedFrom> <urn:q:f> {R}",
        f"<urn:q:a> <tg:document> <urn:ans:1> {R}", f'<urn:q:a> <tg:content> "The answer." {R}',
    }
    kw = dict(question=Q, derived_from=F, document=Iri("urn:ans:1"), content="The answer.")
    assert nq(synthesis_quads(A, llm=None, **kw)) == base  # type: ignore[arg-type]
    cited = synthesis_quads(A, llm=CALL, cited=[Iri("urn:chunk:1")], **kw)  # type: ignore[arg-type]
    assert nq(cited) == base | CALL_QUADS("urn:q:a") | {f"<urn:q:a> <tg:selectedChunk> <urn:chunk:1> {R}"}


def test_docrag_question_and_exploration() -> None:
    q = nq(docrag_question_quads(Q, query="q", started=T))
    assert f"<urn:q:q> <rdf:type> <tg:DocRagQuestion> {R}" in q
    assert f'<urn:q:q> <rdfs:label> "Document RAG Question" {R}' in q
    assert nq(docrag_exploration_quads(X, question=Q, chunks=[Iri("urn:chunk:1"), Iri("urn:chunk:2")])) == {
        f"<urn:q:x> <rdf:type> <prov:Entity> {R}", f"<urn:q:x> <rdf:type> <tg:Exploration> {R}",
        f'<urn:q:x> <rdfs:label> "Exploration" {R}', f"<urn:q:x> <prov:wasGeneratedBy> <urn:q:q> {R}",
        f'<urn:q:x> <tg:chunkCount> "2"^^int {R}',
        f"<urn:q:x> <tg:selectedChunk> <urn:chunk:1> {R}", f"<urn:q:x> <tg:selectedChunk> <urn:chunk:2> {R}",
    }


def test_agent_steps() -> None:
    assert f"<urn:q:q> <rdf:type> <tg:AgentQuestion> {R}" in nq(agent_question_quads(Q, query="q", started=T))
    i1, i2 = Iri("urn:a:i1"), Iri("urn:a:i2")
    first = analysis_quads(i1, question=Q, step=1, thought="t", action="knowledge-query",
                           arguments='{"question": "x"}', observation="obs", previous=None,
                           sub_trace=Iri("urn:sub:synth"))
    assert nq(first) == {
        f"<urn:a:i1> <rdf:type> <prov:Entity> {R}", f"<urn:a:i1> <rdf:type> <tg:Analysis> {R}",
        f'<urn:a:i1> <rdfs:label> "Analysis 1" {R}', f'<urn:a:i1> <tg:stepNumber> "1"^^int {R}',
        f'<urn:a:i1> <tg:thought> "t" {R}', f'<urn:a:i1> <tg:action> "knowledge-query" {R}',
        f'<urn:a:i1> <tg:arguments> "{{\\"question\\": \\"x\\"}}" {R}', f'<urn:a:i1> <tg:observation> "obs" {R}',
        f"<urn:a:i1> <prov:wasGeneratedBy> <urn:q:q> {R}", f"<urn:a:i1> <prov:wasDerivedFrom> <urn:sub:synth> {R}",
    }
    failed = nq(analysis_quads(i2, question=Q, step=2, thought="t2", action=None, arguments=None,
                               observation="bad step", previous=i1, error=True, llm=CALL))
    assert f"<urn:a:i2> <rdf:type> <tg:Error> {R}" in failed
    assert f"<urn:a:i2> <prov:wasDerivedFrom> <urn:a:i1> {R}" in failed
    assert not any("<tg:action>" in line for line in failed)
    final = nq(conclusion_quads(Iri("urn:a:final"), question=Q, answer="42", termination_reason="max-iterations",
                                previous=i2, document=Iri("urn:a:answer")))
    assert final == {
        f"<urn:a:final> <rdf:type> <prov:Entity> {R}", f"<urn:a:final> <rdf:type> <tg:Conclusion> {R}",
        f"<urn:a:final> <rdf:type> <tg:Answer> {R}", f'<urn:a:final> <rdfs:label> "Conclusion" {R}',
        f'<urn:a:final> <tg:answer> "42" {R}', f"<urn:a:final> <prov:wasGeneratedBy> <urn:q:q> {R}",
        f"<urn:a:final> <prov:wasDerivedFrom> <urn:a:i2> {R}",
        f'<urn:a:final> <tg:terminationReason> "max-iterations" {R}', f"<urn:a:final> <tg:document> <urn:a:answer> {R}",
    }
