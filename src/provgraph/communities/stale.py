"""Marking community reports stale when the facts under them change (docs/trace-format.md, "Stale reports").

A report is stale once its community's members no longer match the knowledge graph: a member fact
was retracted (its document removed or replaced: marked in the removal's own transaction), or a
loaded document added a fact naming a member entity that is not a member fact (marked when the
load commits). ``communities build`` re-clusters and rebuilds what is stale; global search leaves
stale reports out and says so; ``communities show`` flags them and each retracted fact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from provgraph.communities.stored import ancestors, communities_with_facts, holders
from provgraph.provenance.communities import stale_quads
from provgraph.rdf.terms import Iri, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_COMMUNITIES, RDF, SCHEMA_PREDICATES, TG
from provgraph.store.base import QuadStore

__all__ = ["stale_after_removal", "stale_after_load", "reports_of"]

G = GRAPH_COMMUNITIES


def _has_communities(store: QuadStore) -> bool:
    return next(iter(store.match(None, RDF.type, TG.Community, g=G)), None) is not None


def reports_of(store: QuadStore, communities: Iterable[Iri]) -> list[Iri]:
    """The reports of ``communities`` (sorted)."""
    return sorted({q.s for c in set(communities) for q in store.match(None, TG.community, c, g=G)
                   if isinstance(q.s, Iri)}, key=lambda i: i.value)


def stale_after_removal(store: QuadStore, removal: Sequence[Quad], because: Iri) -> list[Quad]:
    """The stale marks for the reports whose communities have a fact ``removal`` takes out of the default graph."""
    facts = {q.triple for q in removal if q.g is None and q.p not in SCHEMA_PREDICATES}
    if not facts or not _has_communities(store):
        return []
    return stale_quads(reports_of(store, communities_with_facts(store, facts)), because)


def _current_reports(store: QuadStore) -> dict[Iri, Iri]:
    """Community → its report, for the reports not already stale."""
    stale = {q.s for q in store.match(None, TG.stale, None, g=G)}
    return {q.o: q.s for q in store.match(None, TG.community, None, g=G)
            if isinstance(q.s, Iri) and isinstance(q.o, Iri) and q.s not in stale}


def stale_after_load(store: QuadStore, documents: Sequence[Iri]) -> list[Quad]:
    """The stale marks for the reports of communities that a new fact of ``documents`` touches without being a member.

    A report already stale keeps its first cause and is not looked at again, so once every report is
    stale a load costs two lookups. Otherwise one lookup per distinct entity the new facts name and,
    for facts naming a member entity of a current report's community, one per fact (with the holder's
    ancestors, cached); one lookup when no communities are stored.
    """
    if not documents or not _has_communities(store):
        return []
    current = _current_reports(store)
    marks: list[Quad] = []
    member_of: dict[Iri, set[Iri]] = {}
    having: dict[Iri, set[Iri]] = {}  # holder → it and its ancestors
    for doc in documents:
        if not current:
            break
        subgraphs = [n for n, is_subgraph in store.derived_nodes(doc).items() if is_subgraph]
        facts: set[TripleTerm] = {f for fs in store.facts_of_subgraphs(subgraphs).values() for f in fs
                                  if f.p not in SCHEMA_PREDICATES}
        touched: set[Iri] = set()
        for fact in facts:
            around: set[Iri] = set()
            for entity in (t for t in (fact.s, fact.o) if isinstance(t, Iri)):
                if entity not in member_of:
                    member_of[entity] = {q.s for q in store.match(None, TG.memberEntity, entity, g=G)
                                         if isinstance(q.s, Iri)}
                around |= member_of[entity]
            around = {c for c in around if c in current} - touched
            if not around:
                continue
            members: set[Iri] = set()
            for holder in holders(store, fact):
                if holder not in having:
                    having[holder] = ancestors(store, [holder])
                members |= having[holder]
            touched |= around - members
            if len(touched) == len(current):
                break
        marks += stale_quads(sorted((current.pop(c) for c in touched), key=lambda r: r.value), doc)
    return marks
