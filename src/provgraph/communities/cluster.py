"""Hierarchical Leiden over the entity graph (python-igraph's ``community_leiden``, modularity).

Level 0 is found with a low resolution, so it is coarse: a connected part of the graph stays whole
unless it holds clearly separate groups, and unconnected parts are never merged. A community with
more than ``max_size`` entities is split again, with the finer ``sub_resolution``, one level down,
up to ``max_levels`` levels. Each connected component is clustered on its own, its vertices in IRI
order and the random generator seeded from ``seed`` and the component's first entity: the same
facts give the same communities, and a change in one component leaves the others' as they were
(which is what keeps their reports current; docs/architecture.md, "Communities").

Choice of library (measured, bench/communities.py and docs/architecture.md): igraph's own Leiden
(C, 15 MB installed) took 1.1 s CPU on 2,000 entities and 360,000 weighted edges (the 20,000-chunk
bench graph), leidenalg 11.6 s on the same graph, graspologic-native's hierarchical Leiden 1.4 s
(1.1 MB); all three repeat their result for a fixed seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import igraph

from provgraph.communities.graph import EntityGraph
from provgraph.errors import InputError, require_at_least_one
from provgraph.rdf.ids import stable_uuid

__all__ = ["LeidenParams", "Cluster", "hierarchical_leiden", "ALGORITHM"]

ALGORITHM = f"leiden (igraph {igraph.__version__} community_leiden, modularity)"


@dataclass(frozen=True, slots=True)
class LeidenParams:
    """Parameters of one community detection run (recorded in its PROV)."""

    resolution: float = 0.05
    sub_resolution: float = 1.0
    max_size: int = 40
    min_size: int = 3
    max_levels: int = 3
    seed: int = 42
    iterations: int = 2

    def __post_init__(self) -> None:
        if self.resolution <= 0 or self.sub_resolution <= 0:
            raise InputError("community resolution must be positive")
        require_at_least_one("community", self, ("max_size", "min_size", "max_levels", "iterations"))

    def text(self) -> str:
        """The parameters as one line (part of the run's identity)."""
        return (f"resolution={self.resolution} sub_resolution={self.sub_resolution} max_size={self.max_size} "
                f"min_size={self.min_size} max_levels={self.max_levels} seed={self.seed} iterations={self.iterations}")


@dataclass(frozen=True, slots=True)
class Cluster:
    """One community found: its level, member entities (indexes into the graph's entities, sorted) and parent."""

    level: int
    members: tuple[int, ...]
    parent: int | None  # index of the parent in the list returned


def hierarchical_leiden(graph: EntityGraph, params: LeidenParams) -> list[Cluster]:
    """Every community of every level, parents before their children, components in entity order."""
    whole = igraph.Graph(n=len(graph.entities), edges=list(graph.weights))
    whole.es["weight"] = list(graph.weights.values())
    out: list[Cluster] = []
    for component in sorted((sorted(c) for c in whole.connected_components()), key=lambda c: c[0]):
        if len(component) >= params.min_size:
            _split(whole, graph, component, 0, None, params, out)
    return out


def _split(whole: igraph.Graph, graph: EntityGraph, vertices: list[int], level: int, parent: int | None,
           params: LeidenParams, out: list[Cluster]) -> None:
    groups = _leiden(whole, graph, vertices, params.resolution if level == 0 else params.sub_resolution, params)
    if level > 0 and len(groups) == 1:
        return  # nothing finer at this level
    for group in groups:
        if len(group) < params.min_size:
            continue
        out.append(Cluster(level, tuple(group), parent))
        if len(group) > params.max_size and level + 1 < params.max_levels:
            _split(whole, graph, group, level + 1, len(out) - 1, params, out)


def _leiden(whole: igraph.Graph, graph: EntityGraph, vertices: list[int], resolution: float,
            params: LeidenParams) -> list[list[int]]:
    """The groups Leiden finds among ``vertices`` (each sorted; groups ordered by their first vertex)."""
    sub = whole.induced_subgraph(vertices, implementation="create_from_scratch")
    seed = int(stable_uuid("leiden", params.seed, graph.entities[vertices[0]].value)[:8], 16)
    igraph.set_random_number_generator(random.Random(seed))
    try:
        found = sub.community_leiden(objective_function="modularity", weights="weight", resolution=resolution,
                                     n_iterations=params.iterations)
    finally:
        igraph.set_random_number_generator(random)
    groups: dict[int, list[int]] = {}
    for position, label in enumerate(found.membership):
        groups.setdefault(label, []).append(vertices[position])
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])
