"""Global search trace steps (community map-reduce), in ``urn:graph:retrieval`` (docs/trace-format.md).

```
<q>   a prov:Activity, tg:Question, tg:GlobalRagQuestion ; tg:query "…" ; prov:startedAtTime "…" .
<map> a prov:Entity, tg:CommunityMap ; prov:wasGeneratedBy <q> ; tg:reportCount 12 ; tg:level 0 ;
      tg:reportSelection <map/report/1> .
<map/report/1> a tg:ReportSelection ; tg:report <report> ; tg:community <community> ; tg:rank 1 ;
      tg:score 0.41 ; tg:content "partial answer" ; tg:finding <finding> .
<syn> a prov:Entity, tg:Synthesis, tg:Answer ; prov:wasDerivedFrom <map> ; tg:content "…" ;
      tg:citation <syn/citation/1> .
<syn/citation/1> a tg:Citation ; tg:marker "[1]" ; tg:charOffset 0 ; tg:charLength 80 ;
      tg:finding <finding> ; tg:citesFact <<( s p o )>> ; tg:selectedChunk <chunk> .
```
Citations copy the facts and chunks they rest on, so a trace still reads (and is marked stale by a
retraction) after the communities were rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from provgraph.provenance.common import LlmCall, Quads, llm_call_quads
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG

__all__ = ["ReportChoice", "GlobalCitation", "map_quads", "global_citation_quads"]

G = GRAPH_RETRIEVAL


@dataclass(frozen=True, slots=True)
class ReportChoice:
    """One report the map step kept: rank, score, its partial answer and the findings that answer uses."""

    iri: Iri
    report: Iri
    community: Iri
    rank: int
    score: float
    content: str
    findings: tuple[Iri, ...]


@dataclass(frozen=True, slots=True)
class GlobalCitation:
    """One marker of a global answer: its span, the finding it names, that finding's facts and chunks."""

    iri: Iri
    marker: str
    offset: int
    length: int
    finding: Iri
    facts: tuple[TripleTerm, ...]
    chunks: tuple[Iri, ...]


def map_quads(step: Iri, *, question: Iri, considered: int, level: int, choices: Sequence[ReportChoice],
              llm: LlmCall | None, stale_skipped: int = 0) -> list[Quad]:
    """The map step: how many reports were scored, and each one kept with its partial answer."""
    q = Quads(G).types(step, PROV.Entity, TG.CommunityMap).text(step, RDFS.label, "Community map")
    q.add(step, PROV.wasGeneratedBy, question).add(step, PROV.wasDerivedFrom, question)
    q.integer(step, TG.reportCount, considered).integer(step, TG.level, level)
    if stale_skipped:
        q.text(step, TG.reasoning, f"{stale_skipped} stale report(s) left out")
    for c in choices:
        q.add(step, TG.reportSelection, c.iri).types(c.iri, TG.ReportSelection)
        q.add(c.iri, TG.report, c.report).add(c.iri, TG.community, c.community).integer(c.iri, TG.rank, c.rank)
        q.add(c.iri, TG.score, Literal.double(round(c.score, 6))).text(c.iri, TG.content, c.content)
        q.each(c.iri, TG.finding, c.findings)
    return q.items + llm_call_quads(step, llm, G)


def global_citation_quads(synthesis: Iri, citations: Sequence[GlobalCitation]) -> list[Quad]:
    """``<synthesis> tg:citation <c>`` with each citation's marker, span, finding, facts and chunks."""
    q = Quads(G)
    for c in citations:
        q.add(synthesis, TG.citation, c.iri).types(c.iri, TG.Citation)
        q.text(c.iri, TG.marker, c.marker).integer(c.iri, TG.charOffset, c.offset).integer(c.iri, TG.charLength, c.length)
        q.add(c.iri, TG.finding, c.finding).each(c.iri, TG.citesFact, c.facts).each(c.iri, TG.selectedChunk, c.chunks)
    return q.items
