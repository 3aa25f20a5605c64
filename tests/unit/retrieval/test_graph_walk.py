"""The GraphRAG walk: default graph only, both directions, bounded, no schema edges."""

from __future__ import annotations

import numpy as np

from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, GRAPH_SOURCE, RDF, RDFS
from provgraph.retrieval.graph_walk import WalkLimits, seed_entities, walk
from provgraph.store.oxigraph import OxigraphStore
from tests.unit.retrieval.graph_world import World, add_noise, world  # noqa: F401

P = Iri("urn:p")
WIDE = WalkLimits(max_path_length=2, triple_limit=30, max_subgraph_size=150)


def n(i: int) -> Iri:
    return Iri(f"urn:n:{i}")


def chain(length: int) -> OxigraphStore:
    store = OxigraphStore()
    store.add([Quad(n(i), P, n(i + 1)) for i in range(length)])
    return store


def test_walks_both_directions_up_to_max_path_length() -> None:
    store = chain(6)  # n0 → n1 → … → n6
    edges = walk(store, [n(3)], WIDE)
    assert set(edges) == {TripleTerm(n(i), P, n(i + 1)) for i in (1, 2, 3, 4)}
    assert walk(store, [n(3)], WalkLimits(1, 30, 150)) == [TripleTerm(n(3), P, n(4)), TripleTerm(n(2), P, n(3))]


def test_stops_at_max_subgraph_size_and_triple_limit_per_term_and_direction() -> None:
    store = OxigraphStore()
    store.add([Quad(n(0), P, n(i)) for i in range(1, 41)] + [Quad(n(i), P, n(0)) for i in range(41, 81)])
    edges = walk(store, [n(0)], WalkLimits(1, 10, 150))
    assert len(edges) == 20
    assert sum(1 for e in edges if e.s == n(0)) == 10
    assert len(walk(store, [n(0)], WalkLimits(2, 30, 25))) == 25


def test_first_edges_lead_and_the_walk_fills_the_rest_of_the_budget() -> None:
    store = chain(6)  # n0 → n1 → … → n6
    e = [TripleTerm(n(i), P, n(i + 1)) for i in range(6)]
    given = [TripleTerm(n(9), P, n(8)), e[3], TripleTerm(n(9), P, n(8))]
    # the same as the given edges, then the whole walk's edges not among them, cut at the budget
    assert walk(store, [n(3)], WalkLimits(2, 30, 4), first=given) == [given[0], e[3], e[2], e[4]]
    assert walk(store, [n(3)], WalkLimits(2, 30, 150), first=given) == [given[0], e[3], e[2], e[4], e[1]]
    assert walk(store, [n(3)], WalkLimits(2, 30, 1), first=given) == [given[0]]


def test_schema_edges_are_skipped_and_do_not_use_the_budget() -> None:
    store = OxigraphStore()
    store.add([Quad(n(0), RDFS.label, Literal(f"name {i}")) for i in range(5)]
              + [Quad(n(0), RDF.type, n(99)), Quad(n(0), P, n(1))])
    assert walk(store, [n(0)], WalkLimits(1, 1, 150)) == [TripleTerm(n(0), P, n(1))]


def test_literals_are_leaves_and_keep_their_kind() -> None:
    store = OxigraphStore()
    store.add([Quad(n(0), P, Literal("1898")), Quad(n(1), P, Literal("1898"))])
    assert walk(store, [n(0)], WIDE) == [TripleTerm(n(0), P, Literal("1898"))]


def test_provenance_and_trace_graphs_are_never_walked(world: World) -> None:
    seeds = [world.e["curie"], world.e["polonium"], world.e["radium"]]
    before = walk(world.store, seeds, WIDE)
    add_noise(world.store, world.e)
    assert walk(world.store, seeds, WIDE) == before
    assert all("noise" not in str(e) for e in before)
    assert world.store.count(g=GRAPH_SOURCE) > 0 and world.store.count(g=GRAPH_RETRIEVAL) > 0


def test_seed_entities_merge_several_vectors_best_first(world: World) -> None:
    vectors = world.embedder.embed(["polonium", "Warsaw"])
    seeds = seed_entities(world.index, vectors, 2)
    assert seeds == [world.e["polonium"], world.e["warsaw"]] or seeds == [world.e["warsaw"], world.e["polonium"]]
    assert seed_entities(world.index, np.zeros((0, world.embedder.dimension), dtype=np.float32), 5) == []
