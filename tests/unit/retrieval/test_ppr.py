"""The walk's two solvers: the exact entity-space solve gives the power iteration's mass and ranking, and is
chosen only where it applies."""

from __future__ import annotations

import random

import numpy as np
import pytest

from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.retrieval import ppr
from provgraph.retrieval.passage_graph import PassageGraph

P = Iri("urn:p:x")


def _graph(chunks: int = 60, entities: int = 25, seed: int = 3) -> PassageGraph:
    rng = random.Random(seed)
    names = [Iri(f"urn:e:{i}") for i in range(entities)]
    graph = PassageGraph(None, None)  # type: ignore[arg-type]
    for c in range(chunks):
        people = rng.sample(names, 6)
        graph.put_chunk(f"urn:c:{c}", [TripleTerm(people[2 * i], P, people[2 * i + 1]) for i in range(3)])
    graph.put_chunk("urn:c:bare", [])  # a chunk with no facts: no edge
    graph.put_chunk("urn:c:again", [TripleTerm(names[0], P, names[1])] * 2)  # a fact twice adds its weight twice
    return graph


def _rows(graph: PassageGraph) -> tuple[np.ndarray, np.ndarray]:
    adjacency = graph._adjacency()
    return (np.flatnonzero(graph._is_chunk[: adjacency.shape[0]]),
            np.array(sorted(graph._entity_chunks), dtype=np.int64))


@pytest.mark.parametrize("seeds", [{"urn:e:3": 1.0}, {"urn:e:0": 1.0, "urn:e:7": 0.5, "urn:c:4": 0.3},
                                   {"urn:c:bare": 0.4, "urn:e:2": 1.0}, {"urn:c:11": 1.0}])
def test_the_entity_solve_gives_the_power_iterations_mass(seeds: dict[str, float]) -> None:
    graph = _graph()
    adjacency = graph._adjacency()
    chunks, entities = _rows(graph)
    start = np.zeros(adjacency.shape[0])
    for ident, weight in seeds.items():
        start[graph._index[ident]] = weight
    start /= start.sum()
    power = ppr.PowerIteration(adjacency, 0.5).mass(start)
    exact = ppr.EntitySolve(adjacency, chunks, entities, 0.5).mass(start)
    assert exact.sum() == pytest.approx(1.0)
    assert np.abs(exact - power).sum() < 5e-6  # the power iteration stops once a step moves less than 1e-6
    assert exact[graph._index["urn:c:bare"]] == pytest.approx(power[graph._index["urn:c:bare"]], abs=1e-9)


def test_the_ranking_is_the_same_whichever_walk_the_graph_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _graph()
    seeds = {"urn:e:5": 1.0, "urn:c:9": 0.3}
    by_power = graph.rank(seeds, limit=20)
    assert type(graph._walks[0.5]) is ppr.PowerIteration  # a small graph: few edges
    monkeypatch.setattr(ppr, "DENSE_EDGES", 0)
    graph._matrix = None
    by_solve = graph.rank(seeds, limit=20)
    assert type(graph._walks[0.5]) is ppr.EntitySolve
    assert [h.id for h in by_solve] == [h.id for h in by_power]
    assert [h.score for h in by_solve] == pytest.approx([h.score for h in by_power], rel=1e-4)
    assert graph.rank(seeds, limit=5, exclude=frozenset({by_power[0].id})) == by_solve[1:6]


def test_a_chunk_linked_to_a_chunk_keeps_the_power_iteration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ppr, "DENSE_EDGES", 0)
    graph = _graph()
    graph.put_chunk("urn:c:odd", [TripleTerm(Iri("urn:c:1"), P, Iri("urn:e:1"))])  # a fact about a chunk
    graph.rank({"urn:e:1": 1.0}, limit=5)
    assert type(graph._walks[0.5]) is ppr.PowerIteration


def test_a_changed_graph_gets_a_new_walk() -> None:
    graph = _graph()
    graph.rank({"urn:e:1": 1.0}, limit=5)
    first = graph._walks[0.5]
    graph.rank({"urn:e:2": 1.0}, limit=5)
    assert graph._walks[0.5] is first  # kept between questions
    graph.put_chunk("urn:c:new", [TripleTerm(Iri("urn:e:1"), P, Iri("urn:e:99"))])
    assert [h.id for h in graph.rank({"urn:e:99": 1.0}, limit=1)] == ["urn:c:new"]
    assert graph._walks[0.5] is not first
