from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from provgraph.errors import NotFound
from provgraph.events import Source
from provgraph.explain import (
    AgentTrace,
    ChunkRef,
    DocRagTrace,
    GraphRagTrace,
    LabelledTerm,
    SelectedEdge,
    SourceRef,
    load_trace,
)
from provgraph.explain.build import trace_type
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.provenance import (
    agent_question_quads,
    analysis_quads,
    conclusion_quads,
    docrag_question_quads,
    question_quads,
)
from provgraph.provenance.common import LlmCall
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, TG
from tests.unit.explain.conftest import CountingStore
from tests.unit.explain.scenario import (
    A_ANSWER,
    CA,
    CALL,
    CC,
    CHUNK_A,
    DOC1,
    DOC2,
    F1,
    F2,
    F4,
    G_ANSWER,
    G_REASONS,
    JOURNAL,
    MC,
    P2,
    PC,
    PO,
    S_ANSWER,
    SID_A,
    SID_D,
    SID_G,
    SID_S,
    T0,
    Scenario,
    graph_rag_quads,
)

SUB_A = ids.subgraph_iri(CA, "cooccurrence", "0.1.0", None).value
SUB_C = ids.subgraph_iri(CC, "cooccurrence", "0.1.0", None).value
SRC_A = Source(document=DOC1.value, title="Radioactivity Notes", chunk=CA.value, chunk_index=1, offset=0,
               length=len(CHUNK_A), page=P2.value, page_number=2, subgraph=SUB_A)
SRC_C = Source(document=DOC2.value, title="Lab Journal", chunk=CC.value, chunk_index=1, offset=0,
               length=len(JOURNAL), subgraph=SUB_C)


def test_graph_rag_trace_reads_back_every_step(store: CountingStore, scenario: Scenario) -> None:
    trace = load_trace(store, SID_G)
    assert isinstance(trace, GraphRagTrace) and trace.type == "GraphRAG"
    q = trace.question
    assert (q.iri, q.session_id, q.started, q.informed_by) == (scenario.graph_rag, SID_G, T0 + timedelta(hours=1), None)
    assert trace.grounding is not None and trace.grounding.concepts == ("discovery", "polonium")
    assert trace.grounding.llm == LlmCall("scripted", 50, 8)
    assert trace.exploration is not None and trace.exploration.edge_count == 12
    assert trace.exploration.entities == (
        LabelledTerm(MC, "Marie Curie"), LabelledTerm(PC, "Pierre Curie"), LabelledTerm(PO, "polonium"))
    assert trace.focus is not None and trace.focus.llm == CALL
    assert trace.focus.edges == (
        SelectedEdge(ids.edge_selection_iri(SID_G, 0), 0, F1, ("Marie Curie", "discovered", "polonium"), G_REASONS[0], 0.83),
        SelectedEdge(ids.edge_selection_iri(SID_G, 1), 1, F2, ("polonium", "named after", "Poland"), G_REASONS[1], 0.71),
        SelectedEdge(ids.edge_selection_iri(SID_G, 2), 2, F4, ("polonium", "discovered in", "1898"), G_REASONS[2], None),
    )
    assert trace.synthesis is not None
    assert (trace.synthesis.content, trace.synthesis.document) == (G_ANSWER, ids.graph_rag_answer_iri(SID_G))
    assert trace.synthesis.llm == LlmCall("scripted", 300, 25)
    assert trace.answer == G_ANSWER


def test_a_full_question_iri_works_like_its_session_id(store: CountingStore, scenario: Scenario) -> None:
    assert load_trace(store, scenario.graph_rag.value) == load_trace(store, SID_G)
    assert load_trace(store, f"  {SID_D} ").question.iri == scenario.doc_rag


def test_provenance_resolves_every_supporting_chunk_with_offsets_and_excerpts(
    store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario
) -> None:
    trace = load_trace(store, SID_G, librarian=librarian, provenance=True)
    assert isinstance(trace, GraphRagTrace) and trace.focus is not None
    first, second, third = trace.focus.edges
    assert first.sources == (SourceRef(replace(SRC_C, edge=F1), JOURNAL), SourceRef(replace(SRC_A, edge=F1), CHUNK_A))
    assert second.sources == (SourceRef(replace(SRC_A, edge=F2), CHUNK_A),)
    assert third.sources == ()  # in the graph, but no subgraph contains it
    # the offsets slice the chunk's text out of its parent's, exactly
    page = librarian.text(P2.value)
    assert page[SRC_A.offset:SRC_A.offset + SRC_A.length] == CHUNK_A
    without_librarian = load_trace(store, SID_G, provenance=True)
    assert isinstance(without_librarian, GraphRagTrace) and without_librarian.focus is not None
    assert [r.excerpt for r in without_librarian.focus.edges[0].sources or ()] == [None, None]


def test_lookups_are_batched_not_one_query_per_edge(store: CountingStore, librarian: SqliteLibrarian) -> None:
    many = [(F1 if i % 2 else F2, f"reason {i}", i / 100) for i in range(12)]
    store.add(graph_rag_quads("many", query="q", started=T0, choices=many, answer="a"))
    trace = load_trace(store, "many", librarian=librarian, provenance=True)
    assert store.selects == 4  # resolve, trace tree, labels, edge sources
    assert isinstance(trace, GraphRagTrace) and trace.focus is not None
    # selection index order, numerically (10 and 11 after 9, not after 1)
    assert [e.index for e in trace.focus.edges] == list(range(12))
    assert [e.reasoning for e in trace.focus.edges] == [f"reason {i}" for i in range(12)]


def test_doc_rag_trace_with_chunk_sources(store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario) -> None:
    trace = load_trace(store, SID_D, librarian=librarian)
    assert isinstance(trace, DocRagTrace) and trace.type == "DocRAG"
    assert trace.exploration is not None and trace.exploration.chunk_count == 2
    plain_a = Source(document=DOC1.value, title="Radioactivity Notes", chunk=CA.value, chunk_index=1, offset=0,
                     length=len(CHUNK_A), page=P2.value, page_number=2)
    plain_c = Source(document=DOC2.value, title="Lab Journal", chunk=CC.value, chunk_index=1, offset=0,
                     length=len(JOURNAL))
    assert trace.exploration.chunks == (ChunkRef(CC, plain_c), ChunkRef(CA, plain_a))
    assert trace.synthesis is not None and trace.synthesis.cited == (ChunkRef(CC, plain_c),)
    with_text = load_trace(store, SID_D, librarian=librarian, provenance=True)
    assert isinstance(with_text, DocRagTrace) and with_text.exploration is not None
    assert [c.excerpt for c in with_text.exploration.chunks] == [JOURNAL, CHUNK_A]


def test_agent_trace_with_error_step_and_nested_sub_trace(store: CountingStore, scenario: Scenario) -> None:
    trace = load_trace(store, SID_A)
    assert isinstance(trace, AgentTrace) and trace.type == "Agent"
    assert store.selects == 3  # resolve, the whole tree (sub-trace included), labels
    assert [(a.step, a.action, a.error) for a in trace.analyses] == [
        (1, "knowledge-query", False), (2, "calculator", True), (3, "text-completion", False)]
    first = trace.analyses[0]
    assert first.arguments == '{"question": "Who discovered polonium?"}' and first.llm == CALL
    sub = first.sub_trace
    assert isinstance(sub, GraphRagTrace)
    assert (sub.question.session_id, sub.question.informed_by, sub.answer) == (SID_S, scenario.agent, S_ANSWER)
    assert sub.focus is not None and [e.edge for e in sub.focus.edges] == [F1]
    assert trace.analyses[1].sub_trace is None and trace.analyses[2].thought == "The journal gives the year.\nIt says 1898."
    assert trace.conclusion is not None
    assert (trace.conclusion.answer, trace.conclusion.termination_reason) == (A_ANSWER, "final-answer")
    assert trace.conclusion.document == ids.agent_answer_iri(SID_A)
    assert trace.other_sub_traces == ()


def test_a_sub_trace_can_be_shown_on_its_own(store: CountingStore, scenario: Scenario) -> None:
    sub = load_trace(store, SID_S)
    assert isinstance(sub, GraphRagTrace) and sub.question.informed_by == scenario.agent


def test_sub_trace_no_analysis_derives_from_is_kept_apart(store: CountingStore, scenario: Scenario) -> None:
    orphan = ids.docrag_question_iri("orphan")
    store.add(docrag_question_quads(orphan, query="half-run tool", started=T0, informed_by=scenario.agent))
    trace = load_trace(store, SID_A)
    assert isinstance(trace, AgentTrace)
    assert [t.question.iri for t in trace.other_sub_traces] == [orphan]
    assert isinstance(trace.other_sub_traces[0], DocRagTrace) and trace.other_sub_traces[0].answer is None


def test_answer_only_in_the_librarian_is_read_from_it(
    store: CountingStore, librarian: SqliteLibrarian, scenario: Scenario
) -> None:
    synthesis = ids.synthesis_iri(SID_G)
    store.apply(remove=[Quad(synthesis, TG.content, Literal(G_ANSWER), GRAPH_RETRIEVAL)])
    assert load_trace(store, SID_G, librarian=librarian).answer == G_ANSWER
    assert load_trace(store, SID_G).answer == ""


def test_partial_trace_loads_with_missing_steps(store: CountingStore) -> None:
    q = ids.question_iri("partial")
    store.add(question_quads(q, query="stopped early", started=T0))
    trace = load_trace(store, "partial")
    assert trace == GraphRagTrace(question=trace.question)
    assert trace.answer is None


# a step's IRI names its trace (tests/integration/test_trace_step_iris.py); an unknown step's does not
@pytest.mark.parametrize("given", ["nope", "no such id", "", "urn:trustgraph:prov:focus:no-such-session", "bad iri:<x>"])
def test_unknown_ids_are_not_found_with_a_clear_message(store: CountingStore, scenario: Scenario, given: str) -> None:
    with pytest.raises(NotFound) as caught:
        load_trace(store, given)
    assert str(caught.value) == f"no trace {given!r} in collection test/traces (list them with: provgraph traces list)"


def test_type_detection_prefers_rdf_type_then_iri_pattern() -> None:
    assert trace_type(Iri("urn:x:1"), [TG.Question, TG.AgentQuestion]) == "Agent"
    assert trace_type(ids.docrag_question_iri("s"), [TG.Question]) == "DocRAG"
    assert trace_type(Iri("urn:x:1"), [TG.Question]) is None


def test_sub_traces_nest_at_any_depth(store: CountingStore) -> None:
    top, mid = ids.agent_question_iri("top"), ids.agent_question_iri("mid")
    store.add(agent_question_quads(top, query="top", started=T0))
    store.add(question_quads(mid, query="mid", started=T0, kind=TG.AgentQuestion, label="Agent Question",
                             informed_by=top))
    store.add(graph_rag_quads("leaf", query="leaf", started=T0, choices=[(F1, "r", None)], answer="leaf answer",
                              informed_by=mid))
    store.add(analysis_quads(ids.agent_analysis_iri("mid", 1), question=mid, step=1, thought="t", action="knowledge-query",
                             arguments="{}", observation="o", previous=None, sub_trace=ids.synthesis_iri("leaf")))
    store.add(conclusion_quads(ids.agent_conclusion_iri("mid"), question=mid, answer="mid answer",
                               termination_reason="final-answer", previous=None, document=ids.agent_answer_iri("mid")))
    store.add(analysis_quads(ids.agent_analysis_iri("top", 1), question=top, step=1, thought="t", action="agent",
                             arguments="{}", observation="o", previous=None, sub_trace=ids.agent_conclusion_iri("mid")))
    trace = load_trace(store, "top")
    assert isinstance(trace, AgentTrace)
    middle = trace.analyses[0].sub_trace
    assert isinstance(middle, AgentTrace) and middle.answer == "mid answer"
    leaf = middle.analyses[0].sub_trace
    assert isinstance(leaf, GraphRagTrace) and leaf.answer == "leaf answer"
    assert trace.other_sub_traces == () and middle.other_sub_traces == ()
