"""Citation markers and the answer spans they end; GraphRAG and Document RAG citation records."""

from __future__ import annotations

from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.retrieval.markers import doc_rag_citations, find_markers, graph_rag_citations

SYN = Iri("urn:trustgraph:prov:synthesis:s")


def test_spans_end_at_their_marker_and_start_after_the_previous_sentence() -> None:
    answer = 'Radium glows [2]. In 1898, "Marie" found it [1, 3]! Also this [4][5]. Trailing text.'
    found = [(m.text, m.numbers, m.span) for m in find_markers(answer)]
    assert found == [
        ("[2]", (2,), "Radium glows"),
        ("[1, 3]", (1, 3), 'In 1898, "Marie" found it'),
        ("[4]", (4,), "Also this"),
        ("[5]", (5,), "Also this"),
    ]
    for m in find_markers(answer):
        assert answer[m.offset:m.offset + m.length] == m.span


def test_two_markers_in_one_sentence_split_it() -> None:
    answer = "Marie Curie discovered polonium [1] and radium [2]."
    assert [m.span for m in find_markers(answer)] == ["Marie Curie discovered polonium", "and radium"]


def test_no_markers() -> None:
    assert find_markers("No citations here.") == []


def test_graph_rag_marker_names_a_chunk_and_the_edges_it_supports() -> None:
    e1 = TripleTerm(Iri("urn:e:a"), Iri("urn:p:x"), Iri("urn:e:b"))
    e2 = TripleTerm(Iri("urn:e:c"), Iri("urn:p:x"), Literal("d"))
    by_chunk = {"urn:chunk:1": "[1]", "urn:chunk:2": "[2]"}
    by_edge = {e1: ["[1]"], e2: ["[1]", "[2]"]}
    sel = [(Iri("urn:sel:0"), e1), (Iri("urn:sel:1"), e2)]
    records = graph_rag_citations(SYN, "A b [2]. C d [1]. E [7].", by_chunk, by_edge, sel)
    assert [(r.iri.value, r.marker, r.chunks, r.edges) for r in records] == [
        (f"{SYN.value}/citation/1", "[2]", (Iri("urn:chunk:2"),), (Iri("urn:sel:1"),)),
        (f"{SYN.value}/citation/2", "[1]", (Iri("urn:chunk:1"),), (Iri("urn:sel:0"), Iri("urn:sel:1"))),
        (f"{SYN.value}/citation/3", "[7]", (), ()),
    ]


def test_doc_rag_marker_n_is_the_chunk_at_rank_n() -> None:
    ranked = [Iri("urn:chunk:a"), Iri("urn:chunk:b")]
    records = doc_rag_citations(SYN, "X [2]. Y [1, 2, 9].", ranked)
    assert [(r.marker, r.chunks, r.offset, r.length) for r in records] == [
        ("[2]", (Iri("urn:chunk:b"),), 0, 1), ("[1, 2, 9]", (Iri("urn:chunk:a"), Iri("urn:chunk:b")), 7, 1)]
