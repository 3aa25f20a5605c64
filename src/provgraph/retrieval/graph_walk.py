"""GraphRAG exploration: seed entities from the entity index, then a bounded walk of the default graph.

The walk reads the DEFAULT graph only (``store.match(..., g=None)``): extraction provenance
(``urn:graph:source``) and traces (``urn:graph:retrieval``) are never on the path, so a
collection full of old traces explores exactly like a fresh one. Schema edges
(:data:`~provgraph.rdf.vocab.SCHEMA_PREDICATES`: labels, comments, class axioms, ``rdf:type``)
are skipped while walking, so they never use up a term's budget.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from provgraph.rdf.terms import Iri, Literal, Quad, Term, TripleTerm
from provgraph.rdf.vocab import SCHEMA_PREDICATES
from provgraph.retrieval.read_cache import Bounded
from provgraph.store.base import QuadStore
from provgraph.vectors.base import VectorIndex

__all__ = ["WalkLimits", "seed_entities", "walk", "chunk_facts", "facts_by_chunk", "supporting_chunks"]

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
    store: QuadStore,
    seeds: Sequence[Iri],
    limits: WalkLimits,
    *,
    skip: frozenset[Iri] = SCHEMA_PREDICATES,
    first: Sequence[TripleTerm] = (),
) -> list[TripleTerm]:
    """Edges reachable from ``seeds`` in both directions, breadth first, in discovery order.

    Each hop takes at most ``triple_limit`` outgoing and ``triple_limit`` incoming edges per
    term; the walk stops once ``max_subgraph_size`` distinct edges are found. Literals are
    leaves (they have no outgoing edges, and a literal is never expanded). ``first`` (e.g. the
    best passages' facts) leads the result, which holds at most ``max_subgraph_size`` edges in
    all: ``first`` then the walked edges not in it. The store is read lazily, only until that
    many are found.
    """
    cap = limits.max_subgraph_size
    head = list(dict.fromkeys(first))[:cap]
    taken = set(head)
    extra: list[TripleTerm] = []
    need = cap - len(head)
    found: dict[TripleTerm, None] = {}
    seen: set[Term] = set(seeds)
    frontier: list[Term] = list(dict.fromkeys(seeds))
    for _ in range(limits.max_path_length):
        if need <= 0:
            break
        following: list[Term] = []
        for term in frontier:
            for edge in _edges_of(store, term, limits.triple_limit, skip):
                if edge in found:
                    continue
                found[edge] = None
                if edge not in taken:
                    extra.append(edge)
                    if len(extra) >= need:
                        return head + extra
                if len(found) >= cap:
                    return head + extra
                for end in (edge.s, edge.o):
                    if end not in seen and not isinstance(end, (Literal, TripleTerm)):
                        seen.add(end)
                        following.append(end)
        if not following:
            break
        frontier = following
    return head + extra


def _edges_of(store: QuadStore, term: Term, limit: int, skip: frozenset[Iri]) -> Iterator[TripleTerm]:
    """Up to ``limit`` outgoing, then up to ``limit`` incoming edges of ``term``, read as they are taken.

    The first the store gives: its order differs between backends, so on a term with more than ``limit``
    edges PostgreSQL may walk other edges than the embedded store (docs/scale-out.md: a canonical order made
    them equal but cost the embedded store's no-LLM GraphRAG 1 and 2 questions of 30 on two evaluation sets).
    """
    if isinstance(term, (Literal, TripleTerm)):
        return
    yield from islice(_knowledge(store.match(s=term, g=None), skip), limit)
    yield from islice(_knowledge(store.match(o=term, g=None), skip), limit)


def facts_by_chunk(store: QuadStore, chunks: Sequence[Iri], *,
                   cache: Bounded | None = None) -> dict[Iri, list[TripleTerm]]:
    """Every fact extracted from each chunk (its subgraphs' ``tg:contains``), sorted (one store operation).

    One query over a few chunks' subgraphs reads far less than looking edges up one by one: what
    a hybrid boost needs to know of the explored edges (which ranked chunk supports them) is read
    from this side. ``cache`` (valid for the store as it is now: see
    :class:`~provgraph.retrieval.read_cache.ReadCache`) answers the chunks it holds, and keeps
    those read.
    """
    unique = list(dict.fromkeys(chunks))
    if cache is None:
        return _read_facts(store, unique)
    held = cache.through(unique, lambda missing: _read_facts(store, missing))
    return {c: list(f) for c, f in held.items()}  # the caller's own lists


def _read_facts(store: QuadStore, chunks: list[Iri]) -> dict[Iri, list[TripleTerm]]:
    read = store.facts_of_chunks(chunks) if chunks else {}
    return {c: read.get(c, []) for c in chunks}


def chunk_facts(store: QuadStore, chunks: Sequence[Iri], *, skip: frozenset[Iri] = SCHEMA_PREDICATES,
                limit: int = 60, known: Mapping[Iri, Sequence[TripleTerm]] | None = None) -> list[TripleTerm]:
    """Facts extracted from ``chunks`` (their subgraphs), in chunk order, each once, at most ``limit``.

    The hybrid chunk retrieval's entry into the graph: the facts of the best-ranked passages are
    explored beside the edges walked from the seed entities. ``known`` holds
    :func:`facts_by_chunk` of (at least) these chunks, read before.
    """
    if not chunks:
        return []
    order: dict[Iri, int] = {c: i for i, c in enumerate(chunks)}
    by_chunk = known if known is not None else facts_by_chunk(store, chunks)
    found = (t for c in sorted(order, key=order.__getitem__) for t in by_chunk.get(c, ()) if t.p not in skip)
    return list(dict.fromkeys(found))[:limit]


def supporting_chunks(by_chunk: Mapping[Iri, Sequence[TripleTerm]]) -> dict[TripleTerm, list[str]]:
    """The inverse of :func:`facts_by_chunk`: the chunks (among those read) each fact was extracted from."""
    out: dict[TripleTerm, list[str]] = {}
    for chunk, facts in by_chunk.items():
        for fact in dict.fromkeys(facts):
            out.setdefault(fact, []).append(chunk.value)
    return out
