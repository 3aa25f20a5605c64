"""GraphRAG's use of the graph: paths between the question's entities, and hybrid edge scores.

When a question names two or more things, the shortest paths between each pair of its linked
entities (over the explored edges, either direction) are found; an edge on such a path
connects what the question asks about and scores higher. An edge also scores higher when it
touches an entity the question names, and when a chunk that supports it ranks high in hybrid
chunk retrieval. The boosts are added to the edge's similarity to the question.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from provgraph.rdf.terms import Term, TripleTerm

__all__ = ["path_edges", "boost_scores", "PATH_BOOST", "SEED_BOOST", "CHUNK_BOOST"]

PATH_BOOST = 0.3
SEED_BOOST = 0.15
CHUNK_BOOST = 0.3
_MAX_PAIRS = 6
_MAX_PATHS = 3


def _shortest(adjacent: Mapping[Term, list[tuple[Term, TripleTerm]]], start: Term, goal: Term,
              max_len: int) -> list[list[TripleTerm]]:
    """Up to ``_MAX_PATHS`` shortest paths (as edge lists) from ``start`` to ``goal``."""
    paths: list[list[TripleTerm]] = []
    queue: deque[tuple[Term, list[TripleTerm]]] = deque([(start, [])])
    best: int | None = None
    depth: dict[Term, int] = {start: 0}
    while queue and len(paths) < _MAX_PATHS:
        node, path = queue.popleft()
        if best is not None and len(path) >= best:
            continue
        for nxt, edge in adjacent.get(node, ()):
            if edge in path:
                continue
            step = path + [edge]
            if nxt == goal:
                best = len(step)
                paths.append(step)
                continue
            if len(step) < max_len and depth.get(nxt, len(step)) >= len(step):
                depth[nxt] = len(step)
                queue.append((nxt, step))
    return paths


def path_edges(edges: Sequence[TripleTerm], linked: Sequence[Term], *, max_len: int = 3) -> set[TripleTerm]:
    """Edges on shortest paths (at most ``max_len`` edges) between pairs of ``linked`` entities."""
    adjacent: dict[Term, list[tuple[Term, TripleTerm]]] = {}
    for e in edges:
        adjacent.setdefault(e.s, []).append((e.o, e))
        adjacent.setdefault(e.o, []).append((e.s, e))
    out: set[TripleTerm] = set()
    for a, b in list(combinations(dict.fromkeys(linked), 2))[:_MAX_PAIRS]:
        for path in _shortest(adjacent, a, b, max_len):
            out.update(path)
    return out


def boost_scores(
    edges: Sequence[TripleTerm],
    scores: np.ndarray,
    *,
    linked: Sequence[Term],
    chunk_rank: Mapping[str, int],
    edge_chunks: Mapping[TripleTerm, Sequence[str]],
) -> np.ndarray:
    """``scores`` plus the path, named-entity and chunk-rank boosts (see the module docstring)."""
    on_path = path_edges(edges, linked)
    named = set(linked)
    out = np.asarray(scores, dtype=np.float32).copy()
    for i, e in enumerate(edges):
        if e in on_path:
            out[i] += PATH_BOOST
        if e.s in named or e.o in named:
            out[i] += SEED_BOOST
        ranks = [chunk_rank[c] for c in edge_chunks.get(e, ()) if c in chunk_rank]
        if ranks:
            out[i] += CHUNK_BOOST * (0.5 + 0.5 / min(ranks))
    return out
