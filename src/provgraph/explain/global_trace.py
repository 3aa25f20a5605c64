"""Reading a global search trace back: question → map → synthesis, each citation down to its facts' sentences.

Read by pattern (any store backend): the question and its two steps, the map's report selections,
the synthesis's citations; then every cited fact's sources (chunk → page/section → document with
offsets) with the supporting sentence, and the finding's text while its report is still stored.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone

from provgraph.communities.sources import fact_sources
from provgraph.explain.graph import EPOCH
from provgraph.explain.model import (
    CitedFact,
    Evidence,
    FindingCitation,
    GlobalTrace,
    Question,
    ReportPick,
    Retraction,
    SourceRef,
    Synthesis,
)
from provgraph.librarian.base import Librarian
from provgraph.provenance.common import LlmCall
from provgraph.rdf.ids import session_id_of
from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import DC, GRAPH_COMMUNITIES, GRAPH_RETRIEVAL, PROV, TG
from provgraph.store.base import QuadStore

__all__ = ["load_global_trace"]

R = GRAPH_RETRIEVAL


def _props(store: QuadStore, node: Iri, graph: Iri = R) -> dict[Iri, list[Term]]:
    out: dict[Iri, list[Term]] = defaultdict(list)
    for q in store.match(node, None, None, g=graph):
        out[q.p].append(q.o)
    return out


def _text(props: dict[Iri, list[Term]], p: Iri) -> str | None:
    found = sorted(v.value for v in props.get(p, []) if isinstance(v, Literal))
    return found[0] if found else None


def _int(props: dict[Iri, list[Term]], p: Iri) -> int:
    return int(_text(props, p) or 0)


def _time(props: dict[Iri, list[Term]], p: Iri) -> datetime:
    for v in props.get(p, []):
        if isinstance(v, Literal) and isinstance(moment := v.to_python(), datetime):
            return moment.astimezone(timezone.utc)
    return EPOCH


def _llm(props: dict[Iri, list[Term]]) -> LlmCall | None:
    if TG.inToken not in props:
        return None
    return LlmCall(_text(props, TG.llmModel) or "", _int(props, TG.inToken), _int(props, TG.outToken))


def _iris(props: dict[Iri, list[Term]], p: Iri) -> list[Iri]:
    return sorted((v for v in props.get(p, []) if isinstance(v, Iri)), key=lambda i: i.value)


def _retractions(store: QuadStore, question: Iri) -> tuple[Retraction, ...]:
    out = []
    for q in store.match(None, TG.affectedTrace, question, g=R):
        if not isinstance(q.s, Iri):
            continue
        props = _props(store, q.s)
        documents = _iris(props, PROV.invalidated)
        out.append(Retraction(q.s, documents[0] if documents else None, _time(props, PROV.startedAtTime),
                              _text(props, TG.reason) or "", (), tuple(_iris(props, TG.retractedChunk))))
    return tuple(sorted(out, key=lambda r: (r.at, r.iri.value)))


def _labels(store: QuadStore, facts: list[TripleTerm]) -> dict[Iri, str]:
    iris = list(dict.fromkeys(t for f in facts for t in (f.s, f.p, f.o) if isinstance(t, Iri)))
    return {i: v[0].value for i, v in store.labels(iris).items() if v}


def load_global_trace(store: QuadStore, question: Iri, librarian: Librarian | None) -> GlobalTrace:
    """The global trace rooted at ``question`` (its steps as far as they were written)."""
    q = _props(store, question)
    head = Question(question, session_id_of(question), _text(q, TG.query) or "", _time(q, PROV.startedAtTime),
                    next(iter(_iris(q, PROV.wasInformedBy)), None))
    step_iri, synthesis_iri = Iri(f"{question.value}/map"), Iri(f"{question.value}/synthesis")
    m = _props(store, step_iri)
    picks = []
    for sel in _iris(m, TG.reportSelection):
        p = _props(store, sel)
        report = next(iter(_iris(p, TG.report)), sel)
        title = _text(_props(store, report, GRAPH_COMMUNITIES), DC.title)
        picks.append(ReportPick(_int(p, TG.rank), float(_text(p, TG.score) or 0.0), report,
                                next(iter(_iris(p, TG.community)), sel), title, _text(p, TG.content) or "",
                                tuple(_iris(p, TG.finding))))
    s = _props(store, synthesis_iri)
    content = _text(s, TG.content)
    synthesis = None
    if s:
        document = next(iter(_iris(s, TG.document)), None)
        if content is None and document is not None and librarian is not None:
            content = librarian.texts([document.value], missing_ok=True).get(document.value)
        synthesis = Synthesis(synthesis_iri, content or "", document, _llm(s))
    raw = [(c, _props(store, c)) for c in _iris(s, TG.citation)]
    facts = list(dict.fromkeys(f for _, p in raw for f in p.get(TG.citesFact, []) if isinstance(f, TripleTerm)))
    found = fact_sources(store, facts)
    labels = _labels(store, facts)
    chunks = list(dict.fromkeys(src.chunk for v in found.values() for src in v if src.evidence is not None))
    texts = librarian.texts(chunks, missing_ok=True) if librarian is not None and chunks else {}
    citations = []
    for _, p in sorted(raw, key=lambda cp: (_int(cp[1], TG.charOffset), cp[0].value)):
        finding = next(iter(_iris(p, TG.finding)), Iri("urn:provgraph:missing"))
        cited = []
        for fact in sorted((f for f in p.get(TG.citesFact, []) if isinstance(f, TripleTerm)), key=str):
            refs = []
            for src in found.get(fact, []):
                ev = None
                if src.evidence is not None:
                    text = texts.get(src.chunk)
                    a, n = src.evidence
                    ev = Evidence(a, n, text[a:a + n] if text is not None else None)
                refs.append(SourceRef(src, None, ev))
            names = tuple(labels.get(t, t.value) if isinstance(t, Iri) else str(getattr(t, "value", t))
                          for t in (fact.s, fact.p, fact.o))
            cited.append(CitedFact(fact, names, store.count(fact.s, fact.p, fact.o, g=None) > 0, tuple(refs)))  # type: ignore[arg-type]
        offset, length = _int(p, TG.charOffset), _int(p, TG.charLength)
        citations.append(FindingCitation(_text(p, TG.marker) or "", offset, length,
                                         (content or "")[offset:offset + length], finding,
                                         _text(_props(store, finding, GRAPH_COMMUNITIES), TG.content), tuple(cited)))
    return GlobalTrace(head, step_iri if m else None, _int(m, TG.reportCount), _int(m, TG.level),
                       tuple(sorted(picks, key=lambda x: x.rank)), _llm(m), synthesis, tuple(citations),
                       _retractions(store, question))
