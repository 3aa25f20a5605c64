from __future__ import annotations

from provgraph.explain.excerpts import excerpt
from provgraph.explain.labels import Labeller, fallback_label
from provgraph.rdf.terms import BlankNode, Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, RDFS
from tests.unit.explain.conftest import CountingStore

A, B, C = Iri("urn:e:a"), Iri("https://example.org/rel/born%20in"), Iri("https://example.org/ns#Thing")


def test_labels_come_from_the_default_graph_in_one_query(store: CountingStore) -> None:
    store.add([
        Quad(A, RDFS.label, Literal("Marie", language="fr")),
        Quad(A, RDFS.label, Literal("Marie Curie", language="en")),
        Quad(A, RDFS.label, Literal("Zed")),
        Quad(C, RDFS.label, Literal("ignored: provenance graph"), GRAPH_SOURCE),
    ])
    labels = Labeller.lookup(store, [TripleTerm(A, B, Literal("1867")), C, Literal("x")])
    assert store.selects == 1
    # untagged or English labels first, then the smallest text
    assert labels.label(A) == "Marie Curie"
    assert labels.label(B) == "born in" and labels.label(C) == "Thing"
    assert labels.label(Literal("1867", language="en")) == "1867"
    assert labels.label(BlankNode("b1")) == "_:b1"
    assert labels.label(TripleTerm(A, B, Literal("1867"))) == "<<( Marie Curie born in 1867 )>>"


def test_no_iris_means_no_query(store: CountingStore) -> None:
    Labeller.lookup(store, [Literal("only literals")])
    assert store.selects == 0


def test_fallback_label_is_the_last_segment_percent_decoded() -> None:
    assert fallback_label(Iri("urn:provgraph:entity:Marie%20Curie")) == "Marie Curie"
    assert fallback_label(Iri("https://example.org/a/b/")) == "b"
    assert fallback_label(Iri("urn:x:caf%C3%A9")) == "café"


def test_excerpt_centres_on_the_first_hint_found() -> None:
    text = ("word " * 60) + "Marie Curie discovered polonium. " + ("tail " * 60)
    cut = excerpt(text, ["nowhere", "polonium", "Marie Curie"], width=80)
    assert cut.startswith("…") and cut.endswith("…") and "Marie Curie discovered polonium." in cut
    assert len(cut) <= 82
    assert excerpt("  spaced\n\ttext  ", []) == "spaced text"
    start = excerpt(text, [], width=20)
    assert start == "word word word word…"
