"""Communities and reports as plain data (the JSON of ``communities list|show`` and the API).

A report's findings come with the sources of the facts they cite (document, page or section,
chunk offsets and the supporting sentence), so a reader can check every claim.
"""

from __future__ import annotations

from typing import Any

from provgraph.communities.sources import fact_sources
from provgraph.communities.stored import CommunityHead, community_heads, member_entities, member_facts, report_of
from provgraph.errors import InputError, NotFound
from provgraph.events import Source
from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.store.base import QuadStore

__all__ = ["community_rows", "community_detail", "resolve_community", "source_json", "fact_json"]

_MEMBERS_SHOWN = 50


def _head(h: CommunityHead) -> dict[str, Any]:
    return {"id": h.iri.value, "label": h.label, "level": h.level, "parent": h.parent.value if h.parent else None,
            "entities": h.members, "facts": h.facts, "report": h.report.value if h.report else None,
            "stale": h.stale}


def community_rows(store: QuadStore) -> list[dict[str, Any]]:
    """Every community (level, then most facts first), with its report's title."""
    out = []
    for h in community_heads(store):
        row = _head(h)
        report = report_of(store, h.report) if h.report is not None else None
        row["title"] = report.title if report is not None else None
        out.append(row)
    return out


def resolve_community(store: QuadStore, ref: str) -> CommunityHead:
    """A community by IRI, UUID (or a unique prefix of it) or label; InputError/NotFound otherwise."""
    ref = ref.strip()
    if not ref:
        raise InputError("a community ID is needed (see provgraph communities list)")
    heads = community_heads(store)
    matches = [h for h in heads if ref in (h.iri.value, h.label)] or \
        [h for h in heads if h.iri.value.removeprefix("urn:provgraph:community:").startswith(ref)]
    if not matches:
        raise NotFound(f"no community {ref!r} (provgraph communities list shows them)")
    if len(matches) > 1:
        raise InputError(f"{ref!r} names {len(matches)} communities; give more of the ID")
    return matches[0]


def fact_json(fact: TripleTerm, labels: dict[Iri, str]) -> dict[str, Any]:
    """A fact as N-Triples and as labels."""

    def name(t: object) -> str:
        return labels.get(t, t.value) if isinstance(t, Iri) else str(getattr(t, "value", t))

    return {"fact": str(fact), "labels": [name(fact.s), name(fact.p), name(fact.o)]}


def source_json(src: Source, texts: dict[str, str]) -> dict[str, Any]:
    """A source with its sentence's text (when its evidence span is recorded and the chunk's text is known)."""
    out: dict[str, Any] = {"document": src.document, "title": src.title, "chunk": src.chunk,
                           "chunk_index": src.chunk_index, "page_number": src.page_number,
                           "section_title": src.section_title, "offset": src.offset, "length": src.length}
    if src.evidence is not None and src.chunk in texts:
        start, length = src.evidence
        out["evidence"] = {"offset": start, "length": length, "text": texts[src.chunk][start:start + length]}
    return out


def community_detail(store: QuadStore, librarian: Librarian, ref: str) -> dict[str, Any]:
    """A community's members (the first 50 of each kind), its report, and each finding's facts and sources."""
    head = resolve_community(store, ref)
    entities = member_entities(store, head.iri)
    facts = member_facts(store, head.iri)
    report = report_of(store, head.report) if head.report is not None else None
    cited = [f for finding in (report.findings if report else ()) for f in finding.facts]
    shown = [*entities[:_MEMBERS_SHOWN], *(t for f in [*facts[:_MEMBERS_SHOWN], *cited] for t in (f.s, f.p, f.o)
                                           if isinstance(t, Iri)), *(report.entities if report else ())]
    labels = {i: v[0].value for i, v in store.labels(list(dict.fromkeys(shown))).items() if v}
    out = _head(head)
    out["members"] = [{"entity": e.value, "label": labels.get(e, e.value)} for e in entities[:_MEMBERS_SHOWN]]
    out["member_facts"] = [fact_json(f, labels) for f in facts[:_MEMBERS_SHOWN]]
    out["children"] = [h.iri.value for h in community_heads(store) if h.parent == head.iri]
    out["report"] = None
    if report is not None:
        sources = fact_sources(store, cited)
        texts = librarian.texts(list(dict.fromkeys(s.chunk for v in sources.values() for s in v)), missing_ok=True)
        findings = []
        for f in report.findings:
            findings.append({"id": f.iri.value, "rank": f.rank, "text": f.content,
                             "facts": [{**fact_json(fact, labels),
                                        "stored": fact in sources and bool(sources[fact]),
                                        "sources": [source_json(s, texts) for s in sources.get(fact, [])]}
                                       for fact in f.facts]})
        out["report"] = {"id": report.iri.value, "title": report.title, "summary": report.summary,
                         "model": report.model, "stale": report.stale,
                         "central_entities": [{"entity": e.value, "label": labels.get(e, e.value)}
                                              for e in report.entities],
                         "findings": findings}
    return out
