"""The named read operations give the same, exact answers on every backend."""

from __future__ import annotations

import pyoxigraph as ox

from provgraph.rdf.convert import quad_from_ox
from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, TG
from provgraph.store.base import QuadStore
from provgraph.store.queries import ChunkExtraction, DocumentHead, PartRow, QuestionRow, SourceRow, TraceRow
from tests.contract.data import (
    A, AB, B, B_LIT, CHUNK1, CHUNK2, CIT, DOC, GRQ, NQUADS, PAGE, Q1, Q2, RETR, SG1, SG2, STEP, T1, T2,
    TRACE_SUBJECTS,
)

INT = Iri("http://www.w3.org/2001/XMLSchema#integer")
NOWHERE = Iri("urn:t:nowhere")


def _int(n: int) -> Literal:
    return Literal(str(n), datatype=INT)


def test_labels_of_terms(loaded_store: QuadStore) -> None:
    assert loaded_store.labels([A, B, NOWHERE, A]) == {A: [Literal("A", language="en"), Literal("Alpha")],
                                                       B: [Literal("B")]}
    assert loaded_store.labels([]) == {}


def test_nodes_derived_from_a_document(loaded_store: QuadStore) -> None:
    assert loaded_store.derived_nodes(DOC) == {PAGE: False, CHUNK1: False, CHUNK2: False, SG1: True, SG2: True}
    assert loaded_store.derived_nodes(NOWHERE) == {}


def test_traces_that_used_a_documents_edges_and_chunks(loaded_store: QuadStore) -> None:
    assert loaded_store.traces_using_edges([SG1, SG2]) == [(Q1, AB)]
    assert loaded_store.traces_using_edges([SG2]) == [(Q1, AB)]
    assert loaded_store.traces_using_edges([]) == []
    assert loaded_store.traces_using_chunks([CHUNK1, CHUNK2, PAGE]) == [(Q2, CHUNK1), (Q2, CHUNK2)]


def test_trace_summaries_newest_first(loaded_store: QuadStore) -> None:
    top = TraceRow(Q1, GRQ, Literal("who?"), T1, None)
    sub = TraceRow(Q2, None, Literal("sub"), T2, Q1)
    assert loaded_store.trace_summaries(include_sub_traces=False, limit=None) == [top]
    assert loaded_store.trace_summaries(include_sub_traces=True, limit=None) == [sub, top]
    assert loaded_store.trace_summaries(include_sub_traces=True, limit=1) == [sub]


def test_resolving_questions(loaded_store: QuadStore) -> None:
    assert loaded_store.resolve_questions([Q2, NOWHERE, Q1]) == [QuestionRow(Q1, GRQ, None), QuestionRow(Q2, None, Q1)]


def _trace_statements() -> list[tuple]:
    """Every retrieval-graph statement of the trace tree's nodes, read from the data itself."""
    quads = map(quad_from_ox, ox.parse(NQUADS, format=ox.RdfFormat.N_QUADS))
    return sorted({(q.s, q.p, q.o) for q in quads if q.g == GRAPH_RETRIEVAL and q.s in TRACE_SUBJECTS}, key=str)


def test_trace_triples(loaded_store: QuadStore) -> None:
    expected = _trace_statements()
    assert len(expected) == 17
    assert loaded_store.trace_triples(Q1) == expected
    assert {t[0] for t in loaded_store.trace_triples(Q2)} == {Q2, STEP, CIT, RETR}  # a sub-tree: not its parent


def test_document_head_and_parts(loaded_store: QuadStore) -> None:
    assert loaded_store.document_head(DOC) == DocumentHead(Literal("Doc One"), Literal("text/plain"), _int(2))
    assert loaded_store.document_head(PAGE) is None
    assert loaded_store.document_parts(DOC) == [
        PartRow(CHUNK1, TG.Chunk, PAGE, None, None, _int(0), _int(0), _int(50)),
        PartRow(CHUNK2, TG.Chunk, DOC, None, None, _int(1), _int(50), _int(50)),
        PartRow(PAGE, TG.Page, DOC, Literal("p1"), _int(1), None, _int(0), _int(100)),
    ]


def test_what_was_extracted_from_chunks(loaded_store: QuadStore) -> None:
    assert loaded_store.chunk_extractions([CHUNK1, CHUNK2, PAGE]) == {
        CHUNK1: ChunkExtraction(("cooccurrence",), (AB, B_LIT)), CHUNK2: ChunkExtraction(("cooccurrence",), (AB,))}
    assert loaded_store.facts_of_chunks([CHUNK2, CHUNK1, PAGE]) == {CHUNK1: [AB, B_LIT], CHUNK2: [AB]}
    assert loaded_store.facts_of_subgraphs([SG1, SG2, CHUNK1]) == {SG1: [AB, B_LIT], SG2: [AB]}
    assert loaded_store.evidence_of_subgraphs([SG1, SG2]) == {SG1: Literal("ev1")}


def _src(edge: int | None, sg: Iri | None, chunk: Iri, idx: int, off: int, *, page: bool, ev: str | None) -> SourceRow:
    return SourceRow(edge, sg, chunk, _int(idx), _int(off), _int(50), PAGE if page else DOC, _int(1) if page else None,
                     Literal("p1") if page else None, DOC if page else None, Literal("Doc One"),
                     Literal(ev) if ev else None)


def test_sources_of_edges_and_chunks(loaded_store: QuadStore) -> None:
    assert loaded_store.edge_sources([AB, B_LIT], evidence=True) == [
        _src(0, SG1, CHUNK1, 0, 0, page=True, ev="ev1"), _src(0, SG2, CHUNK2, 1, 50, page=False, ev=None),
        _src(1, SG1, CHUNK1, 0, 0, page=True, ev="ev1")]
    assert loaded_store.edge_sources([B_LIT]) == [_src(0, SG1, CHUNK1, 0, 0, page=True, ev=None)]
    assert loaded_store.edge_sources([]) == []
    assert loaded_store.chunk_sources([CHUNK2, NOWHERE, CHUNK1]) == [
        _src(None, None, CHUNK2, 1, 50, page=False, ev=None), _src(None, None, CHUNK1, 0, 0, page=True, ev=None)]


def test_fact_support_counts_the_subgraphs_containing_each_fact(loaded_store: QuadStore) -> None:
    assert loaded_store.fact_support() == sorted([(AB, 2), (B_LIT, 1)], key=lambda tn: str(tn[0]))
