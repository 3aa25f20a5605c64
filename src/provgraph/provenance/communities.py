"""Communities, their detection run and their reports, in ``urn:graph:communities`` (docs/trace-format.md).

```
<run> a prov:Activity, tg:CommunityDetection ; tg:algorithm "…" ; tg:seed 42 ; tg:resolution 0.05 ; …
<c>   a prov:Entity, tg:Community ; tg:level 0 ; tg:parentCommunity <p> ; tg:memberEntity <e> ;
      tg:memberFact <<( s p o )>> ; tg:memberCount 12 ; tg:factCount 40 ; prov:wasGeneratedBy <run> .
      # tg:memberFact only for the facts no child community has: a community's member facts are its
      # own and its descendants' (each fact stored once, in the deepest community holding it)
<urn:provgraph:community-state> tg:sourceState "…" ; tg:arguments "…" .   # what the last build read
<r>   a prov:Entity, tg:CommunityReport ; tg:community <c> ; dc:title "…" ; tg:summary "…" ;
      tg:finding <r/finding/1> ; prov:wasDerivedFrom <c> ; prov:wasGeneratedBy <act> .
<r/finding/1> a tg:Finding ; tg:rank 1 ; tg:content "…" ; tg:citesFact <<( s p o )>> ;
      tg:chunk <chunk> ; tg:charOffset 10 ; tg:charLength 80 .       # the sentence, when extractive
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from provgraph.provenance.common import LlmCall, Quads, agent_quads, llm_call_quads
from provgraph.rdf.ids import agent_iri
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import DC, GRAPH_COMMUNITIES, PROV, RDFS, TG, XSD

__all__ = ["CommunityRecord", "RunRecord", "FindingRecord", "ReportRecord", "community_quads", "run_quads",
           "report_quads", "stale_quads", "state_quads", "DETECTION_AGENT", "REPORT_AGENT", "STATE"]

G = GRAPH_COMMUNITIES
DETECTION_AGENT = "community-detection"
REPORT_AGENT = "community-report"
_TRUE = Literal("true", datatype=XSD.boolean)
STATE = Iri("urn:provgraph:community-state")  # what the last complete build read (communities/state.py)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One community detection run: algorithm, parameters, the knowledge graph state it read, times."""

    iri: Iri
    algorithm: str
    parameters: str
    seed: int
    resolution: float
    sub_resolution: float
    max_size: int
    knowledge: str  # digest of the facts and support read
    facts: int
    started: datetime
    ended: datetime


@dataclass(frozen=True, slots=True)
class CommunityRecord:
    """One community: level (0 = top), parent, member entities and member facts (both sorted), and the
    member facts none of its children has (``own``: the ones stored with it)."""

    iri: Iri
    level: int
    parent: Iri | None
    entities: tuple[Iri, ...]
    facts: tuple[TripleTerm, ...]
    label: str
    own: tuple[TripleTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class FindingRecord:
    """One finding of a report: its text, the member facts it rests on, and (extractive) its sentence."""

    iri: Iri
    rank: int
    content: str
    facts: tuple[TripleTerm, ...]
    chunk: Iri | None = None
    offset: int | None = None
    length: int | None = None


@dataclass(frozen=True, slots=True)
class ReportRecord:
    """A community's report: title, summary, central entities (most central first) and findings."""

    iri: Iri
    community: Iri
    title: str
    summary: str
    entities: tuple[Iri, ...]
    findings: tuple[FindingRecord, ...]
    document: Iri  # the librarian record holding the report's text
    started: datetime
    llm: LlmCall | None = None


def run_quads(run: RunRecord) -> list[Quad]:
    """The detection run as a PROV activity with its parameters (and the component's agent)."""
    q = Quads(G).types(run.iri, PROV.Activity, TG.CommunityDetection)
    q.text(run.iri, RDFS.label, "community detection").text(run.iri, TG.algorithm, run.algorithm)
    q.add(run.iri, PROV.wasAssociatedWith, agent_iri(DETECTION_AGENT))
    q.text(run.iri, TG.arguments, run.parameters).integer(run.iri, TG.seed, run.seed)
    q.add(run.iri, TG.resolution, Literal.double(run.resolution))
    if run.sub_resolution != run.resolution:  # the finer levels' resolution
        q.add(run.iri, TG.resolution, Literal.double(run.sub_resolution))
    q.integer(run.iri, TG.maxCommunitySize, run.max_size)
    q.text(run.iri, TG.knowledgeGeneration, run.knowledge).integer(run.iri, TG.factCount, run.facts)
    q.add(run.iri, PROV.startedAtTime, Literal.timestamp(run.started))
    q.add(run.iri, PROV.endedAtTime, Literal.timestamp(run.ended))
    return q.items + agent_quads(DETECTION_AGENT, G)


def community_quads(c: CommunityRecord, run: Iri) -> list[Quad]:
    """One community with its members, level, parent and the run that found it; ``tg:memberFact`` only for
    its own facts (those no child has), ``tg:factCount`` for all."""
    q = Quads(G).types(c.iri, PROV.Entity, TG.Community)
    q.text(c.iri, RDFS.label, c.label).integer(c.iri, TG.level, c.level)
    if c.parent is not None:
        q.add(c.iri, TG.parentCommunity, c.parent)
    q.integer(c.iri, TG.memberCount, len(c.entities)).integer(c.iri, TG.factCount, len(c.facts))
    q.each(c.iri, TG.memberEntity, c.entities).each(c.iri, TG.memberFact, c.own)
    q.add(c.iri, PROV.wasGeneratedBy, run)
    return q.items


def report_quads(r: ReportRecord, activity: Iri) -> list[Quad]:
    """The report, its findings and central entities, and the activity that wrote it."""
    q = Quads(G).types(r.iri, PROV.Entity, TG.CommunityReport)
    q.add(r.iri, TG.community, r.community).add(r.iri, PROV.wasDerivedFrom, r.community)
    q.text(r.iri, DC.title, r.title).text(r.iri, RDFS.label, r.title).text(r.iri, TG.summary, r.summary)
    q.add(r.iri, TG.document, r.document).add(r.iri, PROV.wasGeneratedBy, activity)
    for rank, entity in enumerate(r.entities, start=1):
        node = Iri(f"{r.iri.value}/entity/{rank}")
        q.add(r.iri, TG.entity, node).add(node, TG.entity, entity).integer(node, TG.rank, rank)
    for f in r.findings:
        q.add(r.iri, TG.finding, f.iri).types(f.iri, TG.Finding)
        q.integer(f.iri, TG.rank, f.rank).text(f.iri, TG.content, f.content).each(f.iri, TG.citesFact, f.facts)
        if f.chunk is not None:
            q.add(f.iri, TG.chunk, f.chunk).integer(f.iri, TG.charOffset, f.offset).integer(f.iri, TG.charLength, f.length)
    a = Quads(G).types(activity, PROV.Activity).text(activity, RDFS.label, "community report")
    a.add(activity, PROV.used, r.community).add(activity, PROV.wasAssociatedWith, agent_iri(REPORT_AGENT))
    a.add(activity, PROV.startedAtTime, Literal.timestamp(r.started))
    return q.items + a.items + llm_call_quads(activity, r.llm, G) + agent_quads(REPORT_AGENT, G)


def stale_quads(reports: Sequence[Iri], because: Iri | None) -> list[Quad]:
    """Mark reports stale (their community's members changed), naming the retraction or load that did it."""
    q = Quads(G)
    for r in reports:
        q.add(r, TG.stale, _TRUE)
        if because is not None:
            q.add(r, TG.staleBecause, because)
    return q.items


def state_quads(fingerprint: str, parameters: str, entities: int, facts: int) -> list[Quad]:
    """What a complete build read: the fingerprint of the subgraphs, its parameters, entity and fact counts."""
    q = Quads(G).text(STATE, TG.sourceState, fingerprint).text(STATE, TG.arguments, parameters)
    return q.integer(STATE, TG.memberCount, entities).integer(STATE, TG.factCount, facts).items
