"""Labels for GraphRAG: one batched query per request, literals label themselves."""

from __future__ import annotations

from provgraph.rdf.terms import BlankNode, Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, RDFS, SKOS
from provgraph.retrieval.labels import LabelCache, all_labels, fallback_label
from provgraph.store.oxigraph import OxigraphStore


def counting(store: OxigraphStore) -> list[str]:
    queries: list[str] = []
    select = store.select

    def spy(sparql: str, **kw: object) -> object:
        queries.append(sparql)
        return select(sparql, **kw)  # type: ignore[arg-type]

    store.select = spy  # type: ignore[method-assign]
    return queries


def test_many_terms_are_labelled_with_one_query_and_cached() -> None:
    store = OxigraphStore()
    terms = [Iri(f"urn:e:{i}") for i in range(120)]
    store.add([Quad(t, RDFS.label, Literal(f"entity {i}")) for i, t in enumerate(terms)])
    queries = counting(store)
    cache = LabelCache(store)
    cache.resolve([*terms, Literal("July 1898"), *terms])
    assert len(queries) == 1 and "VALUES ?t" in queries[0]
    assert [cache.label(t) for t in terms[:3]] == ["entity 0", "entity 1", "entity 2"]
    assert cache.label(Literal("July 1898")) == "July 1898"
    cache.resolve(terms)
    assert len(queries) == 1 and cache.queries == 1


def test_every_label_read_at_once_then_no_query() -> None:
    store = OxigraphStore()
    store.add([Quad(Iri("urn:e:mc"), RDFS.label, Literal("Marie Skłodowska Curie")),
               Quad(Iri("urn:e:mc"), RDFS.label, Literal("Marie Curie")),
               Quad(Iri("urn:e:po"), RDFS.label, Literal("polonium")),
               Quad(Iri("urn:e:blank"), RDFS.label, Literal("  ")),
               Quad(Iri("urn:e:src"), RDFS.label, Literal("Doc title"), GRAPH_SOURCE)])
    every = all_labels(store, 10)
    assert every == {Iri("urn:e:mc"): "Marie Curie", Iri("urn:e:po"): "polonium"}
    assert all_labels(store, 1) is None  # past the limit: labels are looked up as needed instead
    queries = counting(store)
    cache = LabelCache(store, every, complete=True)
    edge = TripleTerm(Iri("urn:e:mc"), Iri("urn:e:rel/discovered"), Iri("urn:e:po"))
    assert cache.label(edge) == "(Marie Curie discovered polonium)"
    assert [cache.label(Iri(f"urn:e:{x}")) for x in ("blank", "src")] == ["blank", "src"]
    assert queries == [] and cache.queries == 0


def test_labels_come_from_the_default_graph_only() -> None:
    store = OxigraphStore()
    store.add([Quad(Iri("urn:e:x"), RDFS.label, Literal("Doc title"), GRAPH_SOURCE)])
    assert LabelCache(store).label(Iri("urn:e:x")) == "x"


def test_the_shortest_label_wins_and_unlabelled_iris_show_their_last_segment() -> None:
    store = OxigraphStore()
    store.add([Quad(Iri("urn:e:mc"), RDFS.label, Literal("Marie Skłodowska Curie")),
               Quad(Iri("urn:e:mc"), RDFS.label, Literal("Marie Curie"))])
    cache = LabelCache(store)
    assert cache.label(Iri("urn:e:mc")) == "Marie Curie"
    assert cache.label(SKOS.definition) == "definition"
    assert fallback_label(Iri("urn:provgraph:entity:rel/worked%20with")) == "worked with"
    assert fallback_label(BlankNode("b1")) == "_:b1"
    assert cache.label(TripleTerm(Iri("urn:e:mc"), SKOS.definition, Literal("a physicist"))) == (
        "(Marie Curie definition a physicist)"
    )
