"""Writing community reports: extractive without an LLM, a title, summary and cited findings with one.

A report is made for every community without a current one (none yet, or marked stale). Its text
goes to the librarian (kind ``answer``, like an answer's), its RDF to ``urn:graph:communities``
with the activity that wrote it (and the model's token use). All the reports of one call are
written in ONE store transaction after every one of them was made, so an invalid LLM answer
(:class:`~provgraph.errors.ModelError`) leaves the store as it was. With an LLM at most
``max_llm`` reports (largest communities first) ask it, within ``deadline`` seconds in all; the
others are extractive, and the warnings say so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from provgraph.communities.extractive import (
    CENTRAL,
    Draft,
    candidate_facts,
    centrality,
    extractive_findings,
    title_of,
)
from provgraph.communities.llm_report import llm_draft
from provgraph.communities.sources import fact_sources
from provgraph.communities.stored import community_heads, report_quads_of
from provgraph.errors import ModelError
from provgraph.librarian.base import Librarian, NewRecord
from provgraph.models.base import ChatModel
from provgraph.provenance.common import LlmCall
from provgraph.provenance.communities import CommunityRecord, ReportRecord, report_quads
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Quad, TripleTerm
from provgraph.store.base import QuadStore

__all__ = ["ReportRun", "build_reports", "report_text"]

Progress = Callable[[int, int], None]


@dataclass
class ReportRun:
    """What a report build did."""

    written: int = 0
    llm_reports: int = 0
    replaced: int = 0
    warnings: list[str] = field(default_factory=list)


def report_text(r: ReportRecord | Draft) -> str:
    """The report as the librarian keeps it: title, summary, numbered findings."""
    lines = [r.title, "", r.summary, ""] + [f"{f.rank}. {f.content}" for f in r.findings]
    return "\n".join(lines).strip() + "\n"


def _labels(store: QuadStore, iris: Sequence[Iri]) -> dict[Iri, str]:
    found = store.labels(list(dict.fromkeys(iris)))
    return {i: v[0].value for i, v in found.items() if v}


def _summary(community: CommunityRecord, central: Sequence[str], documents: int) -> str:
    where = f" from {documents} document(s)" if documents else ""
    return (f"{len(community.entities)} entities and {len(community.facts)} facts{where}; "
            f"most central: {', '.join(central)}.")


def _draft(store: QuadStore, librarian: Librarian, community: CommunityRecord, base: Iri,
           support: Mapping[TripleTerm, int]) -> tuple[Draft, list[TripleTerm], dict[Iri, str]]:
    central = centrality(community, support)
    ranked = sorted(central, key=lambda e: (-central[e], e.value))[:CENTRAL]
    candidates = candidate_facts(community, support, central)
    labels = _labels(store, [*ranked, *(t for f in candidates for t in (f.s, f.p, f.o) if isinstance(t, Iri))])
    sources = fact_sources(store, candidates)
    chunks = list(dict.fromkeys(s.chunk for v in sources.values() for s in v if s.evidence is not None))
    texts = librarian.texts(chunks, missing_ok=True)
    findings = extractive_findings(base, candidates, sources, texts, central)
    names = [labels.get(e, e.value) for e in ranked]
    documents = len({s.document for v in sources.values() for s in v})
    return Draft(title_of(names[:3]), _summary(community, names, documents), tuple(ranked), tuple(findings)), \
        candidates, labels


async def build_reports(
    store: QuadStore, librarian: Librarian, communities: Sequence[CommunityRecord], support: Mapping[TripleTerm, int],
    *, llm: ChatModel | None = None, max_llm: int = 50, deadline: float = 300.0, progress: Progress | None = None,
) -> ReportRun:
    """Write a report for each of ``communities`` that has no current one (see the module docstring)."""
    heads = {h.iri: h for h in community_heads(store)}
    todo = [c for c in communities if c.iri in heads and (heads[c.iri].report is None or heads[c.iri].stale)]
    run = ReportRun()
    asked = {c.iri for c in sorted(todo, key=lambda c: (-len(c.facts), c.iri.value))[:max_llm]} if llm else set()
    if llm is not None and len(todo) > max_llm:
        run.warnings.append(f"{len(todo) - max_llm} report(s) extractive: at most {max_llm} LLM reports a build")
    until = time.monotonic() + deadline
    removal: list[Quad] = []
    old_records: list[str] = []
    adding: list[Quad] = []
    records: list[NewRecord] = []
    for done, community in enumerate(todo, start=1):
        model = llm.name if llm is not None and community.iri in asked else None
        if model is not None and time.monotonic() >= until:
            run.warnings.append(f"the report of {community.label} is extractive: the report deadline passed")
            model = None
        old = heads[community.iri].report
        if old is not None:
            removal += report_quads_of(store, old)
            old_records.append(f"{old.value}/text")
            run.replaced += 1
        iri = ids.report_iri(community.iri, model)
        draft, candidates, labels = _draft(store, librarian, community, iri, support)
        call: LlmCall | None = None
        if llm is not None and model is not None:
            try:
                draft, usage = await llm_draft(llm, community.label, iri, candidates, labels, draft)
            except ModelError as exc:
                raise ModelError(f"community report for {community.label}: {exc}") from exc
            call = LlmCall(usage.model, usage.input_tokens, usage.output_tokens, usage.estimated)
            run.llm_reports += 1
        document = Iri(f"{iri.value}/text")
        record = ReportRecord(iri, community.iri, draft.title, draft.summary, draft.entities, draft.findings, document,
                              datetime.now(timezone.utc), call)
        adding += report_quads(record, Iri(f"{iri.value}/activity"))
        records.append(NewRecord(document.value, "answer", report_text(record), title=draft.title,
                                 metadata={"type": "community-report", "community": community.iri.value}))
        if progress is not None:
            progress(done, len(todo))
    if records:
        librarian.add(records)
        store.apply(remove=removal, add=adding)
        for gone in set(old_records) - {r.id for r in records}:
            if librarian.exists(gone):
                librarian.remove(gone)
    run.written = len(records)
    return run
