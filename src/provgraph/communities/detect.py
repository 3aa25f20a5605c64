"""Finding the communities of the knowledge graph as it is now, and storing what changed.

``detect`` reads every fact with its support (one named read), clusters the entity graph
(:mod:`~provgraph.communities.cluster`), and names each community by its level, parent and
members. Against the stored communities: those found again are kept as they are (their reports
stay current), new ones are written with the run that found them, and those not found again go
with their reports — all in one transaction, so a failed write leaves the previous communities (a
large first build, with nothing to remove, is bulk-loaded and taken out again if it fails).
Re-running on an unchanged graph writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from provgraph.communities.cluster import ALGORITHM, Cluster, LeidenParams, hierarchical_leiden
from provgraph.communities.graph import EntityGraph, entity_graph
from provgraph.communities.state import source_fingerprint, stored_state
from provgraph.gc_pacing import collector_paused
from provgraph.communities.stored import (
    CommunityHead,
    community_heads,
    community_quads_of,
    report_quads_of,
    runs_in_use,
)
from provgraph.provenance.communities import CommunityRecord, RunRecord, community_quads, run_quads
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_COMMUNITIES, TG
from provgraph.store.base import QuadStore

__all__ = ["Detection", "detect", "communities_of"]

Progress = Callable[[str, int, int], None]  # (stage, done, total)
_BULK_FROM = 50_000  # quads: a larger write with nothing to remove takes the bulk loader


@dataclass(frozen=True, slots=True)
class Detection:
    """What a run did: communities found (by level), kept, added and removed, and the run's IRI."""

    run: Iri | None
    found: list[CommunityRecord] = field(repr=False)  # hundreds of thousands of facts: kept out of a repr
    kept: int
    added: int
    removed: int
    reports_removed: list[Iri]
    entities: int
    facts: int
    support: dict[TripleTerm, int] = field(repr=False)  # (asyncio.run's SIGINT handling reprs a task's result)
    levels: int = 0
    fingerprint: str = ""  # of the subgraphs read (communities/state.py)
    unchanged: bool = False  # the stored state matched: nothing was read or written

    @property
    def communities(self) -> int:
        """How many communities there are after the run."""
        return self.kept + self.added


def communities_of(graph: EntityGraph, clusters: list[Cluster]) -> list[CommunityRecord]:
    """Each cluster as a community: its member entities and member facts (both ends members, or a literal
    object of a member), named by level, parent and members; parents before children. A community's own
    facts are those none of its children has (each fact is stored once, with the deepest community)."""
    everything: list[set[TripleTerm]] = []
    for cluster in clusters:
        members = set(cluster.members)
        facts: set[TripleTerm] = set()
        for i in cluster.members:
            for fact in graph.facts_of.get(i, ()):
                if graph.index[fact.s] in members and (not isinstance(fact.o, Iri) or graph.index[fact.o] in members):  # type: ignore[index]
                    facts.add(fact)
        everything.append(facts)
    in_children: list[set[TripleTerm]] = [set() for _ in clusters]
    for cluster, facts in zip(clusters, everything):
        if cluster.parent is not None:
            in_children[cluster.parent] |= facts
    out: list[CommunityRecord] = []
    counters: dict[int, int] = {}
    for cluster, facts, below in zip(clusters, everything, in_children):
        entities = tuple(graph.entities[i] for i in cluster.members)
        text = graph.text
        ordered = tuple(sorted(facts, key=text.__getitem__))
        parent = out[cluster.parent].iri if cluster.parent is not None else None
        iri = ids.community_iri(cluster.level, parent.value if parent else None, (e.value for e in entities),
                                (text[f] for f in ordered))
        counters[cluster.level] = counters.get(cluster.level, 0) + 1
        out.append(CommunityRecord(iri, cluster.level, parent, entities, ordered,
                                   f"Community {cluster.level}.{counters[cluster.level]}",
                                   tuple(f for f in ordered if f not in below)))
    return out


def _unchanged(store: QuadStore, params: LeidenParams, fingerprint: str,
               stored: dict[Iri, CommunityHead]) -> Detection | None:
    """The detection of a build that has nothing to do (same subgraphs, parameters, every report current)."""
    state = stored_state(store)
    if state is None or not state.matches(fingerprint, params) or \
            any(h.report is None or h.stale for h in stored.values()):
        return None
    return Detection(None, [], len(stored), 0, 0, [], state.entities, state.facts, {},
                     len({h.level for h in stored.values()}), fingerprint, True)


def _own_facts_moved(store: QuadStore, found: list[CommunityRecord], stored: dict[Iri, CommunityHead]) -> tuple[
        list[Quad], list[Quad]]:
    """(remove, add) for the kept communities whose children changed: their own facts are others now."""
    children: dict[Iri, set[Iri]] = {}
    for c in found:
        children.setdefault(c.iri, set())
        if c.parent is not None:
            children.setdefault(c.parent, set()).add(c.iri)
    before: dict[Iri, set[Iri]] = {}
    for h in stored.values():
        before.setdefault(h.iri, set())
        if h.parent is not None:
            before.setdefault(h.parent, set()).add(h.iri)
    remove: list[Quad] = []
    add: list[Quad] = []
    for c in found:
        if c.iri in stored and children[c.iri] != before.get(c.iri, set()):
            remove += store.match(c.iri, TG.memberFact, None, g=GRAPH_COMMUNITIES)
            add += [Quad(c.iri, TG.memberFact, f, GRAPH_COMMUNITIES) for f in c.own]
    return remove, add


def detect(store: QuadStore, params: LeidenParams | None = None, *, progress: Progress | None = None) -> Detection:
    """Cluster the knowledge graph and store the communities that changed (see the module docstring)."""
    with collector_paused():
        return _detect(store, params or LeidenParams(), progress)


def _detect(store: QuadStore, params: LeidenParams, progress: Progress | None) -> Detection:
    tell = progress or (lambda stage, done, total: None)
    started = datetime.now(timezone.utc)
    fingerprint = source_fingerprint(store)
    stored = {h.iri: h for h in community_heads(store)}
    if (same := _unchanged(store, params, fingerprint, stored)) is not None:
        tell("done", 1, 1)
        return same
    tell("reading facts", 0, 1)
    support = store.fact_support()
    graph = entity_graph(support)
    tell("clustering", 0, 1)
    found = communities_of(graph, hierarchical_leiden(graph, params))
    tell("storing", 0, 1)
    found_iris = {c.iri for c in found}
    new = [c for c in found if c.iri not in stored]
    gone = [iri for iri in stored if iri not in found_iris]
    removal, adding = _own_facts_moved(store, found, stored)
    reports_removed: list[Iri] = []
    for iri in gone:
        removal += community_quads_of(store, iri)
        report = stored[iri].report
        if report is not None:
            removal += report_quads_of(store, report)
            reports_removed.append(report)
    run: Iri | None = None
    if new:
        run = ids.community_run_iri(0, f"{params.text()} {graph.digest}")
        record = RunRecord(run, ALGORITHM, params.text(), params.seed, params.resolution, params.sub_resolution,
                           params.max_size, graph.digest, len(graph.support), started, datetime.now(timezone.utc))
        adding += run_quads(record) + [q for c in new for q in community_quads(c, run)]
    kept_runs = runs_in_use(store, [iri for iri in stored if iri not in set(gone)])
    for old in runs_in_use(store, gone) - kept_runs - ({run} if run else set()):
        removal += [q for q in store.match(old, None, None, g=GRAPH_COMMUNITIES)]
    if removal or len(adding) < _BULK_FROM:
        if removal or adding:
            store.apply(remove=removal, add=adding)
    else:  # a first build of a large graph: the bulk path (3x less CPU), undone below if it fails part-way
        try:
            store.bulk_add(adding)
        except Exception:
            store.apply(remove=adding)
            raise
    tell("done", 1, 1)
    return Detection(run, found, len(found) - len(new), len(new), len(gone), reports_removed,
                     len(graph.entities), len(graph.support), graph.support, len({c.level for c in found}),
                     fingerprint)
