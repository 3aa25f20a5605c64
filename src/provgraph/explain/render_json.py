"""JSON forms of traces: one object per trace, sub-traces nested.

Edges are ``{"s", "p", "o"}`` in N-Triples form (so IRIs and literals stay distinguishable),
with their labels beside them; other IRIs are plain strings; times are UTC with a ``Z``.
``sources`` is null when provenance was not asked for.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from provgraph.events import Source
from provgraph.explain.ranking import ranking_json
from provgraph.explain.model import (
    AgentTrace,
    ChunkRef,
    GlobalTrace,
    Citation,
    DocRagTrace,
    GraphRagTrace,
    Question,
    Retraction,
    SelectedEdge,
    SourceRef,
    Synthesis,
    Trace,
    TraceSummary,
)
from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import Iri

__all__ = ["trace_json", "summary_json", "source_json", "source_ref_json", "iso_time"]


def iso_time(moment: datetime) -> str:
    """``2026-03-13T10:00:00Z`` (milliseconds only when present)."""
    utc = moment.astimezone(timezone.utc)
    spec = "milliseconds" if utc.microsecond else "seconds"
    return utc.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def _iri(value: Iri | None) -> str | None:
    return value.value if value is not None else None


def _usage(llm: LlmCall | None) -> dict[str, Any] | None:
    if llm is None:
        return None
    return {"model": llm.model, "input_tokens": llm.input_tokens, "output_tokens": llm.output_tokens}


def summary_json(s: TraceSummary) -> dict[str, Any]:
    """One row of ``traces list --format json``."""
    return {
        "session_id": s.session_id, "question": s.question_iri.value, "type": s.type, "query": s.query,
        "started": iso_time(s.started), "informed_by": _iri(s.informed_by),
    }


def source_json(s: Source) -> dict[str, Any]:
    """A source: chunk → page/section → document with the chunk's offsets in its parent."""
    return {
        "document": s.document, "title": s.title, "chunk": s.chunk, "chunk_index": s.chunk_index,
        "offset": s.offset, "length": s.length, "page": s.page, "page_number": s.page_number,
        "section": s.section, "section_title": s.section_title, "subgraph": s.subgraph,
    }


def source_ref_json(ref: SourceRef) -> dict[str, Any]:
    """A source with its excerpt, its evidence sentence (offsets in the chunk's text) and its edge."""
    ev = ref.evidence
    evidence = None if ev is None else {"offset": ev.offset, "length": ev.length, "text": ev.text}
    edge = ref.source.edge
    out = {**source_json(ref.source), "excerpt": ref.excerpt, "evidence": evidence}
    if edge is not None:
        out["edge"] = {"s": str(edge.s), "p": str(edge.p), "o": str(edge.o)}
    return out


def _chunk(ref: ChunkRef) -> dict[str, Any]:
    return {
        "chunk": ref.iri.value,
        "rank": ref.rank, "score": ref.score, "retriever": ref.retriever, "retracted": ref.retracted,
        "source": source_json(ref.source) if ref.source is not None else None,
        "excerpt": ref.excerpt,
    }


def _edge_terms(e: SelectedEdge) -> dict[str, Any]:
    return {
        "selection": e.iri.value, "index": e.index,
        "s": str(e.edge.s), "p": str(e.edge.p), "o": str(e.edge.o),
        "labels": {"s": e.labels[0], "p": e.labels[1], "o": e.labels[2]},
    }


def _citation(c: Citation) -> dict[str, Any]:
    out: dict[str, Any] = {"marker": c.marker, "text": c.text, "offset": c.offset, "length": c.length}
    if c.edges:
        out["edges"] = [_edge_terms(e) for e in c.edges]
    else:
        out["chunks"] = [ref.iri.value for ref in c.chunks]
    out["sources"] = [source_ref_json(r) for r in c.sources]
    out["quote"] = None if c.quote is None else source_ref_json(c.quote)
    return out


def _retraction(r: Retraction) -> dict[str, Any]:
    return {
        "document": _iri(r.document), "at": iso_time(r.at), "reason": r.reason,
        "edges": [{"s": str(e.s), "p": str(e.p), "o": str(e.o)} for e in r.edges],
        "chunks": [c.value for c in r.chunks],
    }


def _question(q: Question) -> dict[str, Any]:
    """The question; a rewrite, a conversation turn and an agent's tool groups only when recorded."""
    out: dict[str, Any] = {"iri": q.iri.value, "query": q.query, "started": iso_time(q.started),
                           "informed_by": _iri(q.informed_by)}
    if q.rewrite_method is not None:
        out.update(asked=q.asked or q.query, rewrite_method=q.rewrite_method)
    if q.turn is not None:
        out.update(turn=q.turn, previous_turn=_iri(q.previous_turn))
    if q.tool_groups or q.allowed_tools:
        out.update(tool_groups=list(q.tool_groups), allowed_tools=list(q.allowed_tools))
    return out


def _edge(e: SelectedEdge) -> dict[str, Any]:
    return {
        **_edge_terms(e),
        "reasoning": e.reasoning, "score": e.score, "retracted": e.retracted,
        "sources": None if e.sources is None else [source_ref_json(r) for r in e.sources],
    }


def _synthesis(s: Synthesis | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "iri": s.iri.value, "document": _iri(s.document), "content": s.content, "usage": _usage(s.llm),
        "cited": [_chunk(c) for c in s.cited],
    }


def _graph_rag(t: GraphRagTrace) -> dict[str, Any]:
    g, x, f = t.grounding, t.exploration, t.focus
    return {
        "grounding": None if g is None else {"iri": g.iri.value, "concepts": list(g.concepts), "usage": _usage(g.llm)},
        "exploration": None if x is None else {
            "iri": x.iri.value, "edge_count": x.edge_count,
            "entities": [{"term": str(e.term), "label": e.label} for e in x.entities],
        },
        "focus": None if f is None else {"iri": f.iri.value, "usage": _usage(f.llm), "edges": [_edge(e) for e in f.edges]},
        "ranking": None if t.ranking is None else ranking_json(t.ranking, _chunk),
        "synthesis": _synthesis(t.synthesis),
    }


def _doc_rag(t: DocRagTrace) -> dict[str, Any]:
    x = t.exploration
    return {
        "exploration": None if x is None else {
            "iri": x.iri.value, "chunk_count": x.chunk_count, "chunks": [_chunk(c) for c in x.chunks],
        },
        "synthesis": _synthesis(t.synthesis),
    }


def _agent(t: AgentTrace) -> dict[str, Any]:
    c = t.conclusion
    return {
        "analyses": [
            {
                "iri": a.iri.value, "step": a.step, "thought": a.thought, "action": a.action,
                "arguments": a.arguments, "observation": a.observation, "error": a.error, "usage": _usage(a.llm),
                "sub_trace": trace_json(a.sub_trace) if a.sub_trace is not None else None,
            }
            for a in t.analyses
        ],
        "other_sub_traces": [trace_json(s) for s in t.other_sub_traces],
        "conclusion": None if c is None else {
            "iri": c.iri.value, "answer": c.answer, "termination_reason": c.termination_reason,
            "document": _iri(c.document), "usage": _usage(c.llm),
        },
    }


def _global(t: GlobalTrace) -> dict[str, Any]:
    return {
        "map": None if t.map_iri is None else {
            "iri": t.map_iri.value, "reports_scored": t.reports_scored, "level": t.level, "llm": _usage(t.map_llm),
            "reports": [{"rank": p.rank, "score": p.score, "report": p.report.value, "community": p.community.value,
                         "title": p.title, "content": p.content, "findings": [f.value for f in p.findings]}
                        for p in t.picks]},
        "synthesis": None if t.synthesis is None else {"iri": t.synthesis.iri.value, "llm": _usage(t.synthesis.llm)},
        "citations": [{"marker": c.marker, "text": c.text, "offset": c.offset, "length": c.length,
                       "finding": c.finding.value, "finding_text": c.finding_text,
                       "facts": [{"fact": str(f.fact), "labels": list(f.labels), "stored": f.stored,
                                  "sources": [source_ref_json(r) for r in f.sources]} for f in c.facts]}
                      for c in t.citations],
    }


def trace_json(trace: Trace) -> dict[str, Any]:
    """The whole trace as one JSON-ready object."""
    head: dict[str, Any] = {
        "type": trace.type, "session_id": trace.question.session_id, "question": _question(trace.question),
        "stale": trace.stale, "retracted": [_retraction(r) for r in trace.retracted],
    }
    if isinstance(trace, GlobalTrace):
        return {**head, **_global(trace), "answer": trace.answer}
    if isinstance(trace, GraphRagTrace):
        body = _graph_rag(trace)
    elif isinstance(trace, DocRagTrace):
        body = _doc_rag(trace)
    else:
        body = _agent(trace)
    synthesis = None if isinstance(trace, AgentTrace) else trace.synthesis
    citations = [_citation(c) for c in synthesis.citations] if synthesis is not None else []
    return {**head, **body, "answer": trace.answer, "citations": citations}
