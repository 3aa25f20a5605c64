"""Reading communities and reports back from ``urn:graph:communities`` (by pattern: any store backend)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from provgraph.provenance.communities import FindingRecord
from provgraph.rdf.terms import Iri, Literal, Quad, Term, TripleTerm
from provgraph.rdf.vocab import DC, GRAPH_COMMUNITIES, PROV, RDF, RDFS, TG
from provgraph.store.base import QuadStore

__all__ = ["CommunityHead", "StoredReport", "community_heads", "community_quads_of", "report_of", "reports",
           "report_quads_of", "member_facts", "member_entities", "communities_with_facts", "runs_in_use",
           "descendants", "ancestors", "holders"]

G = GRAPH_COMMUNITIES


@dataclass(frozen=True, slots=True)
class CommunityHead:
    """What lists a community: IRI, label, level, parent, member and fact counts, its report (if any)."""

    iri: Iri
    label: str
    level: int
    parent: Iri | None
    members: int
    facts: int
    report: Iri | None
    stale: bool


@dataclass(frozen=True, slots=True)
class StoredReport:
    """A stored report: its community, title, summary, central entities, findings, model and staleness."""

    iri: Iri
    community: Iri
    title: str
    summary: str
    entities: tuple[Iri, ...]
    findings: tuple[FindingRecord, ...]
    model: str | None
    stale: bool


def _by_predicate(quads: Iterable[Quad]) -> dict[Iri, list[Term]]:
    out: dict[Iri, list[Term]] = defaultdict(list)
    for q in quads:
        out[q.p].append(q.o)
    return out


def _text(values: dict[Iri, list[Term]], p: Iri) -> str:
    found = sorted(v.value for v in values.get(p, []) if isinstance(v, Literal))
    return found[0] if found else ""


def _int(values: dict[Iri, list[Term]], p: Iri) -> int:
    found = [int(v.value) for v in values.get(p, []) if isinstance(v, Literal)]
    return min(found) if found else 0


def _iri(values: dict[Iri, list[Term]], p: Iri) -> Iri | None:
    found = sorted((v for v in values.get(p, []) if isinstance(v, Iri)), key=lambda i: i.value)
    return found[0] if found else None


def _typed(store: QuadStore, cls: Iri) -> set[Iri]:
    return {q.s for q in store.match(None, RDF.type, cls, g=G) if isinstance(q.s, Iri)}


def community_heads(store: QuadStore) -> list[CommunityHead]:
    """Every stored community, by level, then label; without their members (counts only)."""
    report_of_c: dict[Iri, Iri] = {}
    stale: set[Iri] = {q.s for q in store.match(None, TG.stale, None, g=G) if isinstance(q.s, Iri)}
    for q in store.match(None, TG.community, None, g=G):
        if isinstance(q.s, Iri) and isinstance(q.o, Iri):
            report_of_c[q.o] = q.s
    out = []
    for c in _typed(store, TG.Community):
        values = _by_predicate(q for p in (RDFS.label, TG.level, TG.parentCommunity, TG.memberCount, TG.factCount)
                               for q in store.match(c, p, None, g=G))
        report = report_of_c.get(c)
        out.append(CommunityHead(c, _text(values, RDFS.label), _int(values, TG.level), _iri(values, TG.parentCommunity),
                                 _int(values, TG.memberCount), _int(values, TG.factCount), report,
                                 report is not None and report in stale))
    return sorted(out, key=lambda h: (h.level, -h.facts, h.label, h.iri.value))


def member_entities(store: QuadStore, community: Iri) -> list[Iri]:
    """The community's member entities, sorted."""
    return sorted((q.o for q in store.match(community, TG.memberEntity, None, g=G) if isinstance(q.o, Iri)),
                  key=lambda i: i.value)


def descendants(store: QuadStore, community: Iri) -> list[Iri]:
    """The community and every community below it."""
    out, todo = [], [community]
    while todo:
        c = todo.pop()
        out.append(c)
        todo += [q.s for q in store.match(None, TG.parentCommunity, c, g=G) if isinstance(q.s, Iri)]
    return out


def ancestors(store: QuadStore, communities: Iterable[Iri]) -> set[Iri]:
    """``communities`` and every community above them."""
    out: set[Iri] = set()
    todo = list(communities)
    while todo:
        c = todo.pop()
        if c not in out:
            out.add(c)
            todo += [q.o for q in store.match(c, TG.parentCommunity, None, g=G) if isinstance(q.o, Iri)]
    return out


def member_facts(store: QuadStore, community: Iri) -> list[TripleTerm]:
    """The community's member facts, sorted: its own ``tg:memberFact`` and its descendants'."""
    return sorted({q.o for c in descendants(store, community) for q in store.match(c, TG.memberFact, None, g=G)
                   if isinstance(q.o, TripleTerm)}, key=str)


def holders(store: QuadStore, fact: TripleTerm) -> list[Iri]:
    """The communities storing ``fact`` as their own (at most one, the deepest having it)."""
    return [q.s for q in store.match(None, TG.memberFact, fact, g=G) if isinstance(q.s, Iri)]


def communities_with_facts(store: QuadStore, facts: Iterable[TripleTerm]) -> set[Iri]:
    """The communities having any of ``facts`` as a member (the holders and their ancestors)."""
    return ancestors(store, {c for f in set(facts) for c in holders(store, f)})


def community_quads_of(store: QuadStore, community: Iri) -> list[Quad]:
    """Every quad of a community (to remove it)."""
    return list(store.match(community, None, None, g=G))


def runs_in_use(store: QuadStore, communities: Iterable[Iri]) -> set[Iri]:
    """The detection runs that generated ``communities``."""
    return {q.o for c in communities for q in store.match(c, PROV.wasGeneratedBy, None, g=G) if isinstance(q.o, Iri)}


def reports(store: QuadStore) -> list[Iri]:
    """Every stored report, sorted."""
    return sorted(_typed(store, TG.CommunityReport), key=lambda i: i.value)


def report_quads_of(store: QuadStore, report: Iri) -> list[Quad]:
    """Every quad of a report: its own, its findings', its entity entries' and its activity's."""
    own = list(store.match(report, None, None, g=G))
    parts = [q.o for q in own if q.p in (TG.finding, TG.entity) and isinstance(q.o, Iri)]
    activities = [q.o for q in own if q.p == PROV.wasGeneratedBy and isinstance(q.o, Iri)]
    return own + [q for n in parts + activities for q in store.match(n, None, None, g=G)]


def report_of(store: QuadStore, report: Iri) -> StoredReport | None:
    """A stored report with its findings in rank order (None when not stored)."""
    quads = report_quads_of(store, report)
    if not quads:
        return None
    by_subject: dict[Term, list[Quad]] = defaultdict(list)
    for q in quads:
        by_subject[q.s].append(q)
    own = _by_predicate(by_subject[report])
    entities = []
    for node in own.get(TG.entity, []):
        values = _by_predicate(by_subject.get(node, []))
        entity = _iri(values, TG.entity)
        if entity is not None:
            entities.append((_int(values, TG.rank), entity))
    findings = []
    for node in own.get(TG.finding, []):
        if not isinstance(node, Iri):
            continue
        values = _by_predicate(by_subject.get(node, []))
        facts = tuple(sorted((f for f in values.get(TG.citesFact, []) if isinstance(f, TripleTerm)), key=str))
        chunk = _iri(values, TG.chunk)
        findings.append(FindingRecord(node, _int(values, TG.rank), _text(values, TG.content), facts, chunk,
                                      _int(values, TG.charOffset) if chunk else None,
                                      _int(values, TG.charLength) if chunk else None))
    activity = _iri(own, PROV.wasGeneratedBy)
    model = _text(_by_predicate(by_subject.get(activity, [])), TG.llmModel) if activity is not None else ""
    community = _iri(own, TG.community)
    return StoredReport(report, community if community is not None else report, _text(own, DC.title),
                        _text(own, TG.summary), tuple(e for _, e in sorted(entities, key=lambda re: re[0])),
                        tuple(sorted(findings, key=lambda f: f.rank)), model or None, bool(own.get(TG.stale)))
