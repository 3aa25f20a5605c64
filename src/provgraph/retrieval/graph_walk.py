"""GraphRAG exploration: seed entities from the entity index, then a bounded walk of the default graph.

The walk reads the DEFAULT graph only (``store.match(..., g=None)``): extraction provenance
(``urn:graph:source``) and traces (``urn:graph:retrieval``) are never on the path, so a
collection full of old traces explores exactly like a fresh one. Schema edges
(:data:`~provgraph.rdf.vocab.SCHEMA_PREDICATES`: labels, comments, class axioms, ``rdf:type``)
are skipped while walking, so they never use up a term's budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from provgraph.rdf.terms import Iri, Literal, Quad, Term, TripleTerm
from provgraph.rdf.vocab import SCHEMA_PREDICATES
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors.base import VectorIndex

__all__ = ["WalkLimits", "seed_entities", "walk", "chunk_facts"]

_CHUNK_FACTS = (
    "SELECT ?chunk ?t WHERE {{ GRAPH <urn:graph:source> {{ VALUES ?chunk {{ {values} }} "
    "?sg prov:wasDerivedFrom ?chunk ; tg:contains ?t . }} }}"
)


@dataclass(frozen=True, slots=True)
class WalkLimits:
    """Bounds of one walk: hops from the seeds, edges per term and direction, and edges in all."""

    max_path_length: int
    triple_limit: int
    max_subgraph_size: int


def seed_entities(index: VectorIndex, vectors: np.ndarray, limit: int) -> list[Iri]:
    """The ``limit`` entities nearest to any of ``vectors`` (best score first, each once)."""
    best: dict[str, float] = {}
    for row in np.atleast_2d(vectors):
        for hit in index.search(row, limit):
            entity = hit.payload.get("entity")
            if isinstance(entity, str) and hit.score > best.get(entity, -2.0):
                best[entity] = hit.score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [Iri(entity) for entity, _ in ranked]


def _knowledge(quads: Iterator[Quad], skip: frozenset[Iri]) -> Iterator[TripleTerm]:
    for q in quads:
        if q.p not in skip:
            yield TripleTerm(q.s, q.p, q.o)


def walk(
    store: OxigraphStore,
    seeds: Sequence[Iri],
    limits: WalkLimits,
    *,
    skip: frozenset[Iri] = SCHEMA_PREDICATES,
) -> list[TripleTerm]:
    """Edges reachable from ``seeds`` in both directions, breadth first, in discovery order.

    Each hop takes at most ``triple_limit`` outgoing and ``triple_limit`` incoming edges per
    term; the walk stops once ``max_subgraph_size`` distinct edges are found. Literals are
    leaves (they have no outgoing edges, and a literal is never expanded).
    """
    found: dict[TripleTerm, None] = {}
    seen: set[Term] = set(seeds)
    frontier: list[Term] = list(dict.fromkeys(seeds))
    cap = limits.max_subgraph_size
    for _ in range(limits.max_path_length):
        following: list[Term] = []
        for term in frontier:
            for edge in _edges_of(store, term, limits.triple_limit, skip):
                if len(found) >= cap:
                    return list(found)
                if edge in found:
                    continue
                found[edge] = None
                for end in (edge.s, edge.o):
                    if end not in seen and not isinstance(end, (Literal, TripleTerm)):
                        seen.add(end)
                        following.append(end)
        if not following:
            break
        frontier = following
    return list(found)


def _edges_of(store: OxigraphStore, term: Term, limit: int, skip: frozenset[Iri]) -> Iterable[TripleTerm]:
    if isinstance(term, (Literal, TripleTerm)):
        return ()
    out = list(islice(_knowledge(store.match(s=term, g=None), skip), limit))
    out += islice(_knowledge(store.match(o=term, g=None), skip), limit)
    return out


def chunk_facts(store: OxigraphStore, chunks: Sequence[Iri], *, skip: frozenset[Iri] = SCHEMA_PREDICATES,
                limit: int = 60) -> list[TripleTerm]:
    """Facts extracted from ``chunks`` (their subgraphs), in chunk order, each once, at most ``limit``.

    The hybrid chunk retrieval's entry into the graph: the facts of the best-ranked passages are
    explored beside the edges walked from the seed entities.
    """
    if not chunks:
        return []
    order: dict[object, int] = {c: i for i, c in enumerate(chunks)}
    rows = store.select(_CHUNK_FACTS.format(values=" ".join(str(c) for c in dict.fromkeys(chunks))))
    found: list[tuple[int, TripleTerm]] = []
    for r in rows:
        fact = r.get("t")
        if isinstance(fact, TripleTerm) and fact.p not in skip:
            found.append((order.get(r.get("chunk"), len(order)), fact))
    found.sort(key=lambda pair: pair[0])
    return list(dict.fromkeys(t for _, t in found))[:limit]
