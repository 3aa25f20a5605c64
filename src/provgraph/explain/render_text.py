"""Plain-text forms of traces: the ``traces list`` table and the ``traces show`` layout of SPEC §8.

Pure functions returning text (no Rich markup: ``[question]`` must print as is). Sub-traces are
rendered nested under the analysis that ran them, indented four more columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from provgraph.events import Source
from provgraph.explain.ranking import ranking_lines
from provgraph.explain.model import (
    GlobalTrace,
    AgentTrace,
    ChunkRef,
    DocRagTrace,
    GraphRagTrace,
    SelectedEdge,
    SourceRef,
    Synthesis,
    Trace,
    TraceSummary,
)
from provgraph.provenance.common import LlmCall

__all__ = ["render_trace", "render_list", "source_line", "format_time", "QUESTION_WIDTH"]

QUESTION_WIDTH = 45
_STEP = 2  # indentation of a step's details under its header


def format_time(moment: datetime) -> str:
    """UTC to the second: ``2026-03-13 10:00:00``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def render_list(summaries: Sequence[TraceSummary], *, show_parent: bool = False) -> str:
    """The ``traces list`` table: Session ID, Type, Question (cut to 45 characters), Time (UTC)."""
    header = ["Session ID", "Type", "Question", "Time"] + (["Sub-trace of"] if show_parent else [])
    rows = [header]
    for s in summaries:
        row = [s.session_id, s.type, _cut(s.query, QUESTION_WIDTH), format_time(s.started)]
        if show_parent:
            row.append(s.informed_by.value if s.informed_by is not None else "")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows) + "\n"


def source_line(source: Source, *, offsets: bool = True) -> str:
    """``Chunk 3 → Page 2 → <title> (chars 412–1392)``; a section shows ``Section "<heading>"``
    where the page would be; plain text has neither."""
    if source.page_number is not None:
        middle = f" → Page {source.page_number}"
    elif source.section_title:
        middle = f' → Section "{" ".join(source.section_title.split())}"'
    else:
        middle = ""
    where = f" (chars {source.offset}–{source.offset + source.length})" if offsets else ""
    return f"Chunk {source.chunk_index}{middle} → {source.title}{where}"


class _Lines:
    """Accumulates indented lines; multi-line values keep their continuation under the value."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, indent: int, text: str) -> None:
        self.lines.append(" " * indent + text)

    def field(self, indent: int, label: str, value: str | None) -> None:
        if value is None:
            return
        head = " " * indent + f"{label}: "
        parts = value.split("\n") or [""]
        self.lines.append((head + parts[0]).rstrip())
        self.lines += [(" " * len(head) + p).rstrip() for p in parts[1:]]

    def usage(self, indent: int, llm: LlmCall | None) -> None:
        if llm is not None:
            model = f" ({llm.model})" if llm.model else ""
            self.add(indent, f"Tokens: {llm.input_tokens} in, {llm.output_tokens} out{model}")


def _question(out: _Lines, trace: Trace, indent: int) -> None:
    q = trace.question
    out.add(indent, f"[question] {q.iri.value}")
    out.field(indent + _STEP, "Query", q.query)
    out.field(indent + _STEP, "Time", format_time(q.started) + " UTC")
    if q.informed_by is not None:
        out.field(indent + _STEP, "Informed by", q.informed_by.value)
    if q.asked is not None and q.asked != q.query:
        out.field(indent + _STEP, "Asked", f"{q.asked} (rewritten: {q.rewrite_method or 'unknown'})")
    if q.turn is not None:
        after = f" (after {q.previous_turn.value})" if q.previous_turn is not None else ""
        out.field(indent + _STEP, "Turn", f"{q.turn}{after}")
    if q.tool_groups or q.allowed_tools:
        out.field(indent + _STEP, "Tools", f"{', '.join(q.allowed_tools) or '(none)'} "
                                           f"(groups: {', '.join(q.tool_groups) or '(none)'})")


_RETRACTED = "  [RETRACTED]"


def _stale(out: _Lines, trace: Trace, indent: int) -> None:
    """The banner of a stale trace: which documents went, when, and how much of the trace with them."""
    if not trace.stale:
        return
    out.add(indent, "STALE: a document this trace used has been removed or replaced since")
    for r in trace.retracted:
        document = r.document.value if r.document is not None else "(unknown document)"
        out.add(indent + _STEP, f"{document} {r.reason or 'retracted'} at {format_time(r.at)} UTC: "
                                f"{len(r.edges)} edge(s), {len(r.chunks)} chunk(s) of this trace")


def _sourced(out: _Lines, ref: SourceRef, indent: int) -> None:
    out.add(indent, f"Source: {source_line(ref.source)}")
    if ref.evidence is not None and ref.evidence.text is not None:
        out.add(indent + _STEP, f'Sentence: "{" ".join(ref.evidence.text.split())}"')
    elif ref.excerpt is not None:
        out.add(indent + _STEP, f'Text: "{ref.excerpt}"')


def _distinct(refs: Sequence[SourceRef]) -> list[SourceRef]:
    """Each source and sentence once: an edge extracted twice from one sentence (two extractors, two
    subgraphs) has two records of it, that read the same."""
    seen: set[tuple[str, str | None]] = set()
    out: list[SourceRef] = []
    for ref in refs:
        said = ref.evidence.text if ref.evidence is not None and ref.evidence.text is not None else ref.excerpt
        key = (source_line(ref.source), said)
        if key not in seen:
            seen.add(key)
            out.append(ref)
    return out


def _edge(out: _Lines, edge: SelectedEdge, indent: int) -> None:
    out.add(indent, f"Edge: ({', '.join(edge.labels)})" + (_RETRACTED if edge.retracted else ""))
    out.field(indent + _STEP, "Reason", edge.reasoning)
    if edge.score is not None:
        out.add(indent + _STEP, f"Score: {edge.score:.2f}")
    if edge.sources is None:
        return
    if not edge.sources:
        out.add(indent + _STEP, "Source: none recorded" + (" (its document was retracted)" if edge.retracted else ""))
    for ref in _distinct(edge.sources):
        _sourced(out, ref, indent + _STEP)


def _chunk(out: _Lines, ref: ChunkRef, indent: int) -> None:
    rank = f"#{ref.rank} " if ref.rank is not None else ""
    how = [f"score {ref.score:.2f}"] if ref.score is not None else []
    how += [ref.retriever] if ref.retriever else []
    tail = (f" [{', '.join(how)}]" if how else "") + (_RETRACTED if ref.retracted else "")
    if ref.source is None:
        out.add(indent, f"{rank}{ref.iri.value} (source not found){tail}")
    else:
        out.add(indent, f"{rank}{source_line(ref.source)}{tail}")
    if ref.excerpt is not None:
        out.add(indent + _STEP, f'Text: "{ref.excerpt}"')


def _citations(out: _Lines, step: Synthesis, indent: int) -> None:
    out.add(indent, f"Citations: {len(step.citations)}")
    for c in step.citations:
        out.add(indent + _STEP, f'{c.marker} "{_cut(c.text, 80)}"')
        for edge in c.edges:
            out.add(indent + 2 * _STEP, f"Edge: ({', '.join(edge.labels)})" + (_RETRACTED if edge.retracted else ""))
        if not c.edges:
            for ref in c.chunks:
                _chunk(out, ref, indent + 2 * _STEP)
        elif not c.sources:
            out.add(indent + 2 * _STEP, "Source: none recorded")
        for source in _distinct(c.sources) if c.edges else ():
            _sourced(out, source, indent + 2 * _STEP)


def _synthesis(out: _Lines, step: Synthesis, indent: int, nested: bool) -> None:
    out.add(indent, f"[synthesis] {step.iri.value}")
    if step.cited:
        out.add(indent + _STEP, f"Cited {len(step.cited)} chunk(s)")
        for ref in step.cited:
            _chunk(out, ref, indent + 2 * _STEP)
    if step.citations:
        _citations(out, step, indent + _STEP)
    out.usage(indent + _STEP, step.llm)
    if nested:
        out.field(indent + _STEP, "Answer", step.content)


def _graph_rag(out: _Lines, t: GraphRagTrace, indent: int, nested: bool) -> None:
    d = indent + _STEP
    _question(out, t, indent)
    if t.grounding is not None:
        out.add(indent, f"[grounding] {t.grounding.iri.value}")
        out.field(d, "Concepts", ", ".join(t.grounding.concepts))
        out.usage(d, t.grounding.llm)
    if t.exploration is not None:
        out.add(indent, f"[exploration] {t.exploration.iri.value}")
        if t.exploration.edge_count is not None:
            out.add(d, f"Edges explored: {t.exploration.edge_count}")
        if t.exploration.entities:
            out.field(d, "Entities", ", ".join(e.label for e in t.exploration.entities))
    if t.ranking is not None:
        out.add(indent, f"[ranking] {t.ranking.iri.value}")
        for line in ranking_lines(t.ranking, lambda ref: source_line(ref.source) if ref.source else ref.iri.value):
            out.add(d, line)
    if t.focus is not None:
        out.add(indent, f"[focus] {t.focus.iri.value}")
        out.add(d, f"Focused on {len(t.focus.edges)} edge(s)")
        for edge in t.focus.edges:
            _edge(out, edge, d + _STEP)
        out.usage(d, t.focus.llm)
    if t.synthesis is not None:
        _synthesis(out, t.synthesis, indent, nested)


def _doc_rag(out: _Lines, t: DocRagTrace, indent: int, nested: bool) -> None:
    _question(out, t, indent)
    if t.exploration is not None:
        out.add(indent, f"[exploration] {t.exploration.iri.value}")
        count = t.exploration.chunk_count if t.exploration.chunk_count is not None else len(t.exploration.chunks)
        out.add(indent + _STEP, f"Chunks retrieved: {count}")
        for ref in t.exploration.chunks:
            _chunk(out, ref, indent + 2 * _STEP)
    if t.synthesis is not None:
        _synthesis(out, t.synthesis, indent, nested)


def _agent(out: _Lines, t: AgentTrace, indent: int, nested: bool) -> None:
    d = indent + _STEP
    _question(out, t, indent)
    for a in t.analyses:
        flag = " [error]" if a.error else ""
        out.add(indent, f"[analysis {a.step}]{flag} {a.iri.value}")
        out.field(d, "Thought", a.thought)
        out.field(d, "Action", a.action)
        out.field(d, "Arguments", a.arguments)
        out.field(d, "Observation", a.observation)
        out.usage(d, a.llm)
        if a.sub_trace is not None:
            out.add(d, f"Sub-trace ({a.sub_trace.type}):")
            _render(out, a.sub_trace, d + _STEP, nested=True)
    for sub in t.other_sub_traces:
        out.add(indent, f"[sub-trace] ({sub.type}, not linked to an analysis)")
        _render(out, sub, d + _STEP, nested=True)
    if t.conclusion is not None:
        out.add(indent, f"[conclusion] {t.conclusion.iri.value}")
        out.field(d, "Termination", t.conclusion.termination_reason)
        out.usage(d, t.conclusion.llm)
        if nested:
            out.field(d, "Answer", t.conclusion.answer)


def _global(out: _Lines, t: GlobalTrace, indent: int) -> None:
    """question → map (each kept report) → synthesis, each citation → finding → facts → sources and sentences."""
    _question(out, t, indent)
    d = indent + _STEP
    if t.map_iri is not None:
        out.add(indent, f"[map] {t.map_iri.value}")
        out.add(d, f"Reports scored: {t.reports_scored} (level {t.level}), kept: {len(t.picks)}")
        out.usage(d, t.map_llm)
        for p in t.picks:
            out.add(d + _STEP, f"Report {p.rank} (score {p.score:.3f}): {p.title or '(no longer stored)'}")
            out.field(d + 2 * _STEP, "Partial answer", p.content)
    if t.synthesis is None:
        return
    out.add(indent, f"[synthesis] {t.synthesis.iri.value}")
    out.usage(d, t.synthesis.llm)
    for c in t.citations:
        out.add(d, f'{c.marker} "{" ".join(c.text.split())}"')
        out.field(d + _STEP, "Finding", c.finding_text if c.finding_text is not None
                  else f"{c.finding.value} (its report was rebuilt since)")
        for fact in c.facts:
            out.add(d + 2 * _STEP, f"Fact: ({', '.join(fact.labels)})" + ("" if fact.stored else _RETRACTED))
            for ref in fact.sources:
                _sourced(out, ref, d + 3 * _STEP)


def _render(out: _Lines, trace: Trace, indent: int, *, nested: bool) -> None:
    if not nested:
        _stale(out, trace, indent)
    if isinstance(trace, GlobalTrace):
        _global(out, trace, indent)
    elif isinstance(trace, GraphRagTrace):
        _graph_rag(out, trace, indent, nested)
    elif isinstance(trace, DocRagTrace):
        _doc_rag(out, trace, indent, nested)
    else:
        _agent(out, trace, indent, nested)


def render_trace(trace: Trace) -> str:
    """The ``traces show`` text: every step (sub-traces nested), then a blank line and the answer."""
    out = _Lines()
    _render(out, trace, 2, nested=False)
    answer = trace.answer
    out.lines.append("")
    out.lines.append(answer if answer is not None else "(no answer: the trace ends before its last step)")
    return "\n".join(out.lines) + "\n"
