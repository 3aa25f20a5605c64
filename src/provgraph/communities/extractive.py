"""The extractive community report (no LLM): the most central entities and the most representative cited sentences.

Centrality is an entity's weighted degree inside the community (the summed support of the member
facts naming it). The candidate facts are the best-supported facts between central entities; each
candidate's supporting sentences (the subgraphs' sentence evidence) are scored by how much of the
community they name: the summed centrality of the member entities their member facts connect.
The best distinct sentences become the findings, each citing the member facts it states and the
chunk span it is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from provgraph.events import Source
from provgraph.provenance.communities import CommunityRecord, FindingRecord
from provgraph.rdf.terms import Iri, TripleTerm

__all__ = ["Draft", "centrality", "candidate_facts", "extractive_findings", "title_of"]

CENTRAL = 5  # central entities a report names
CANDIDATES = 24  # facts whose sentences are considered
FINDINGS = 3


@dataclass(frozen=True, slots=True)
class Draft:
    """A report before it has an IRI: title, summary, central entities, findings."""

    title: str
    summary: str
    entities: tuple[Iri, ...]
    findings: tuple[FindingRecord, ...]


def centrality(community: CommunityRecord, support: Mapping[TripleTerm, int]) -> dict[Iri, int]:
    """Each member entity's summed member-fact support."""
    members = set(community.entities)
    out: dict[Iri, int] = defaultdict(int)
    for fact in community.facts:
        n = support.get(fact, 1)
        for t in (fact.s, fact.o):
            if isinstance(t, Iri) and t in members:
                out[t] += n
    return dict(out)


def _ranked(scores: Mapping[Iri, int]) -> list[Iri]:
    return sorted(scores, key=lambda e: (-scores[e], e.value))


def candidate_facts(community: CommunityRecord, support: Mapping[TripleTerm, int], central: Mapping[Iri, int],
                    limit: int = CANDIDATES) -> list[TripleTerm]:
    """The member facts most worth quoting: support times the centrality of what they connect."""

    def score(f: TripleTerm) -> tuple[int, str]:
        ends = sum(central.get(t, 0) for t in (f.s, f.o) if isinstance(t, Iri))
        return (-support.get(f, 1) * ends, str(f))

    return sorted(community.facts, key=score)[:limit]


def title_of(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    if len(names) <= 1:
        return names[0] if names else "Unnamed community"
    return ", ".join(names[:-1]) + " and " + names[-1]


def extractive_findings(
    base: Iri, candidates: Sequence[TripleTerm], sources: Mapping[TripleTerm, Sequence[Source]],
    texts: Mapping[str, str], central: Mapping[Iri, int], limit: int = FINDINGS,
) -> list[FindingRecord]:
    """The best distinct sentences of the candidates' sources, each a finding citing the facts it states."""
    spans: dict[tuple[str, int, int], set[TripleTerm]] = defaultdict(set)
    for fact in candidates:
        for src in sources.get(fact, ()):
            if src.evidence is not None and src.chunk in texts:
                spans[(src.chunk, *src.evidence)].add(fact)
    scored = []
    for (chunk, offset, length), facts in spans.items():
        named = {t for f in facts for t in (f.s, f.o) if isinstance(t, Iri)}
        text = " ".join(texts[chunk][offset:offset + length].split())
        scored.append((-sum(central.get(e, 0) for e in named), chunk, offset, length, text, facts))
    scored.sort(key=lambda s: s[:4])
    out: list[FindingRecord] = []
    seen: set[str] = set()
    for _, chunk, offset, length, text, facts in scored:
        if not text or text in seen:
            continue
        seen.add(text)
        rank = len(out) + 1
        out.append(FindingRecord(Iri(f"{base.value}/finding/{rank}"), rank, text, tuple(sorted(facts, key=str)),
                                 Iri(chunk), offset, length))
        if len(out) == limit:
            break
    return out
