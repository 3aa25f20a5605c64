"""The agent over the real GraphRAG and Document RAG engines on the corpus: sub-traces linked both ways."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from provgraph.agent import Agent, document_query, knowledge_query
from provgraph.config import Settings
from provgraph.events import Explain, Final
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDF, TG
from provgraph.retrieval.document_rag import DocumentRag
from provgraph.retrieval.graph_rag import GraphRag
from provgraph.runtime import Runtime
from tests.unit.agent.conftest import collect, steps_llm, step

Q = "Who discovered polonium?"


@pytest.fixture
def rt(corpus_settings: Settings) -> Iterator[Runtime]:
    with Runtime(corpus_settings, create=False, llm=None) as runtime:
        yield runtime


def test_knowledge_and_document_queries_write_linked_sub_traces(rt: Runtime) -> None:
    graph = GraphRag(rt.store, rt.librarian, rt.embedder, rt.entity_index, None)
    docs = DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index, None)
    llm = steps_llm(step("Ask the graph.", "knowledge-query", {"question": Q}),
                    step("Ask the documents.", "document-query", {"question": Q}),
                    step("Both agree.", final_answer="Marie and Pierre Curie."))
    events = collect(Agent(rt.store, rt.librarian, llm, [knowledge_query(graph), document_query(docs)])
                     .ask(Q, session_id="s1"))
    final = events[-1]
    assert isinstance(final, Final) and final.answer == "Marie and Pierre Curie." and final.end_of_dialog
    assert final.sources and all(s.marker is None and s.edge is None for s in final.sources)
    assert len({s.chunk for s in final.sources}) == len(final.sources)

    agent_q = ids.agent_question_iri("s1")
    syntheses = [Iri(e.explain_id) for e in events if isinstance(e, Explain) and e.step == "synthesis"]
    assert len(syntheses) == 2
    assert syntheses[0].value.startswith("urn:trustgraph:prov:synthesis:")
    assert syntheses[1].value.startswith("urn:trustgraph:docrag:")
    for n, synthesis in enumerate(syntheses, start=1):
        analysis = ids.agent_analysis_iri("s1", n)
        assert list(rt.store.match(analysis, PROV.wasDerivedFrom, synthesis, g=GRAPH_RETRIEVAL))
        [sub_q] = [q.o for q in rt.store.match(synthesis, PROV.wasGeneratedBy, None, g=GRAPH_RETRIEVAL)]
        assert list(rt.store.match(sub_q, PROV.wasInformedBy, agent_q, g=GRAPH_RETRIEVAL))
        observation = next(q.o.value for q in rt.store.match(analysis, TG.observation, None, g=GRAPH_RETRIEVAL))
        content = next(q.o.value for q in rt.store.match(synthesis, TG.content, None, g=GRAPH_RETRIEVAL))
        assert observation == content
        assert not list(rt.store.match(analysis, RDF.type, TG.Error, g=GRAPH_RETRIEVAL))

    # the agent can be found from the sub-traces, and SPARQL sees the whole chain
    rows = rt.sparql_store.select(
        "SELECT ?sub WHERE { GRAPH <urn:graph:retrieval> { ?sub prov:wasInformedBy ?q } }", bind={"q": agent_q})
    assert len(rows.rows) == 2
