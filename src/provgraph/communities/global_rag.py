"""Global search: questions about the whole corpus, answered by map-reduce over the community reports.

Steps, each written to ``urn:graph:retrieval`` as it completes and yielded at once (docs/trace-format.md,
"Global search"): question → map (the reports scored, each kept one with its partial answer) →
answer pieces → synthesis (every marker citing a report finding, its member facts and their chunks)
→ final (every cited fact's sources with their sentence). Without an LLM the map keeps the reports
whose similarity to the question stands out from the rest when some do (a question about part of the
corpus: the relevant communities, whatever their size), else scores each by similarity times the
square root of its community's share of the level's largest (for "What are the main themes?" nothing
stands out: the largest communities lead; a report scoring under a quarter of the best is left out;
:func:`relevance`), its partial answer is its
finding nearest the question, and the answer is one sentence per kept report, each citing its
finding. With an LLM the map asks it once per candidate report (at most ``map_limit``, concurrently)
for a 0–100 relevance, a partial answer and the findings it used, and the reduce streams one answer
citing findings; every call runs within the question's deadline and falls back to the no-LLM form
when it fails or runs out of time (the warnings say so). At most ``map_limit`` + 1 LLM calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from provgraph.communities.report_index import IndexedReport, ReportIndex
from provgraph.communities.sources import fact_sources
from provgraph.errors import InputError, ModelError, require_at_least_one
from provgraph.events import AnswerPiece, ErrorMessage, Event, Final, Source
from provgraph.librarian.base import Librarian, NewRecord
from provgraph.models.base import ChatModel, Embedder, system, user
from provgraph.provenance.common import LlmCall
from provgraph.provenance.communities import FindingRecord
from provgraph.provenance.global_rag import GlobalCitation, ReportChoice, global_citation_quads, map_quads
from provgraph.provenance.graph_rag import question_quads, synthesis_quads
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import TG
from provgraph.retrieval.deadline import Deadline, Outcome, answer_pieces, why
from provgraph.retrieval.markers import find_markers
from provgraph.retrieval.trace import TraceWriter, UsageTally
from provgraph.store.base import QuadStore

__all__ = ["GlobalRag", "GlobalParams", "MAP_SCHEMA", "NO_REPORTS", "relevance"]

NO_REPORTS = "No community reports are stored yet: run provgraph communities build first."
MAP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100},
                   "answer": {"type": "string", "maxLength": 1500},
                   "findings": {"type": "array", "maxItems": 8, "items": {"type": "integer", "minimum": 1}}},
    "required": ["score", "answer", "findings"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class GlobalParams:
    """Limits of one global question: the level searched, reports kept, LLM map calls, deadline (s)."""

    level: int = 0
    max_reports: int = 5
    map_limit: int = 8
    question_deadline: float = 60.0

    def __post_init__(self) -> None:
        require_at_least_one("global search", self, ("max_reports", "map_limit"))
        if self.level < 0:
            raise InputError("global search level must be 0 or more")


@dataclass
class _Pick:
    """A report kept by the map: score, partial answer, the findings it uses."""

    entry: IndexedReport
    score: float
    answer: str
    findings: list[FindingRecord]


@dataclass
class _Run:
    sid: str
    question: str
    iri: Iri
    writer: TraceWriter
    deadline: Deadline
    tally: UsageTally = field(default_factory=UsageTally)
    warnings: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None  # the question's, unit length
    map_calls: list[LlmCall] = field(default_factory=list)


_STANDOUT = 2.75  # how many standard deviations above the other reports a report is when the question is about it


def relevance(sims: np.ndarray, sizes: list[int]) -> list[float]:
    """No-LLM scores of a level's reports from their similarity to the question and their size (0: left out).

    A question about part of the corpus ("What do the documents say about Sputnik?") has reports whose
    similarity stands out: the best is more than ``_STANDOUT`` standard deviations above the others'
    mean. Then the reports standing out so are kept, by similarity, whatever their size. A question
    about the whole corpus ("What are the main themes?") has none (with a static embedder its
    similarities are near-random): the reports are scored by similarity times the square root of their
    community's share of the largest, so the largest communities lead.
    """
    if not len(sims):
        return []
    best = int(np.argmax(sims))
    top = max(float(sims[best]), 1e-9)
    if len(sims) >= 3:
        others = np.delete(sims, best)
        bar = float(others.mean()) + _STANDOUT * max(float(others.std()), 0.05)
        if top >= bar:
            return [float(s) / top if s >= bar else 0.0 for s in sims]
    largest = max(sizes) or 1
    return [(0.5 + 0.5 * max(float(s), 0.0) / top) * (n / largest) ** 0.5 for s, n in zip(sims, sizes)]


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class GlobalRag:
    """Answers questions about the whole corpus from the community reports, explaining each step.

    Engines on one store share its :class:`ReportIndex` unless given their own ``index``.
    """

    def __init__(self, store: QuadStore, librarian: Librarian, embedder: Embedder, llm: ChatModel | None,
                 params: GlobalParams | None = None, *, index: ReportIndex | None = None, trace: bool = True,
                 clock: Callable[[], datetime] = _utcnow) -> None:
        self.store = store
        self.librarian = librarian
        self.embedder = embedder
        self.llm = llm
        self.params = params or GlobalParams()
        self.index = index or ReportIndex.shared(store, embedder)
        self.trace = trace
        self.clock = clock

    async def ask(self, question: str, *, session_id: str | None = None) -> AsyncIterator[Event]:
        """Stream the answer: explain steps, answer pieces, one final message (or one ErrorMessage)."""
        sid = session_id or ids.new_session_id()
        run = _Run(sid, question, ids.global_question_iri(sid), TraceWriter(self.store, enabled=self.trace),
                   Deadline(self.params.question_deadline))
        try:
            async for event in self._steps(run):
                yield event
        except Exception as exc:  # every failure ends the session with one message
            yield ErrorMessage(type=type(exc).__name__, message=str(exc) or type(exc).__name__, session_id=sid)

    async def _steps(self, run: _Run) -> AsyncIterator[Event]:
        if not run.question.strip():
            raise InputError("the question is empty")
        asked = question_quads(run.iri, query=run.question, started=self.clock(), kind=TG.GlobalRagQuestion,
                               label="Global Question")
        event, loaded = run.writer.beside("question", run.iri, asked, self._candidates_for(run))
        yield event
        candidates, considered, stale = loaded.result()
        if stale:
            run.warnings.append(f"{stale} stale community report(s) left out: provgraph communities build "
                                "rebuilds them")
        picks, call = await self._map(run, candidates)
        step = Iri(f"{run.iri.value}/map")
        choices = [ReportChoice(Iri(f"{step.value}/report/{i}"), p.entry.report.iri, p.entry.head.iri, i, p.score,
                                p.answer, tuple(f.iri for f in p.findings)) for i, p in enumerate(picks, start=1)]
        yield run.writer.step("map", step, map_quads(step, question=run.iri, considered=considered,
                                                     level=self.params.level, choices=choices, llm=call,
                                                     stale_skipped=stale))
        async for later in self._reduce(run, picks, step):
            yield later

    def _candidates_for(self, run: _Run) -> Callable[[], tuple[list[tuple[IndexedReport, float]], int, int]]:
        def work() -> tuple[list[tuple[IndexedReport, float]], int, int]:
            reports, stale = self.index.current()
            level = [r for r in reports if r.head.level == self.params.level]
            if not level:
                return [], 0, stale
            q = self.embedder.embed([run.question])[0]
            q = q / (np.linalg.norm(q) or 1.0)
            sims = np.array([float(r.vector @ q) for r in level])
            run.vector = q
            scored = [(r, s) for r, s in zip(level, relevance(sims, [r.head.facts for r in level])) if s > 0]
            scored.sort(key=lambda rs: (-rs[1], rs[0].report.iri.value))
            return scored, len(level), stale
        return work

    def _nearest(self, run: _Run, entry: IndexedReport) -> FindingRecord | None:
        if not entry.report.findings:
            return None
        if run.vector is None or not len(entry.findings):
            return entry.report.findings[0]
        scores = entry.findings @ run.vector + 0.1 / np.arange(1, len(entry.findings) + 1)
        return entry.report.findings[int(np.argmax(scores))]

    async def _map(self, run: _Run, candidates: list[tuple[IndexedReport, float]]) -> tuple[list[_Pick], LlmCall | None]:
        p = self.params
        if not candidates:
            return [], None
        best = candidates[0][1]
        plain = [_Pick(e, s, f.content, [f]) for e, s in candidates if s >= 0.25 * best
                 for f in [self._nearest(run, e)] if f is not None]
        if self.llm is None:
            return plain[:p.max_reports], None
        asked = plain[:p.map_limit]
        results = await asyncio.gather(*(self._ask_report(run, self.llm, pick) for pick in asked))
        picks = sorted((r for r in results if r is not None and r.score > 0), key=lambda r: -r.score)
        calls = run.map_calls
        call = LlmCall(calls[0].model, sum(c.input_tokens for c in calls), sum(c.output_tokens for c in calls),
                       any(c.estimated for c in calls)) if calls else None
        return picks[:p.max_reports], call

    async def _ask_report(self, run: _Run, llm: ChatModel, pick: _Pick) -> _Pick | None:
        report = pick.entry.report
        lines = [f"[{f.rank}] {f.content}" for f in report.findings]
        prompt = (f"Question: {run.question}\n\nCommunity report: {report.title}\n{report.summary}\nFindings:\n"
                  + "\n".join(lines))
        try:
            reply = await asyncio.wait_for(llm.complete_json(
                [system("Rate how much this community report helps answer the question (0-100), answer the question "
                        "from it in one or two sentences, and list the numbers of the findings you used. Reply with "
                        'JSON: {"score": 0-100, "answer": "…", "findings": [1, 2]}'), user(prompt)],
                schema=MAP_SCHEMA, schema_name="global_map"), max(run.deadline.remaining(), 0.001))
        except (ModelError, TimeoutError) as exc:
            run.warnings.append(f"map: the report {report.title!r} was scored without the LLM: {why(exc)}")
            return pick
        run.map_calls.append(run.tally.add(reply.usage))
        by_rank = {f.rank: f for f in report.findings}
        used = [by_rank[n] for n in dict.fromkeys(reply.data["findings"]) if n in by_rank]
        invented = len(set(reply.data["findings"]) - by_rank.keys())
        if invented:
            run.warnings.append(f"map: {invented} finding number(s) the LLM gave for {report.title!r} do not exist")
        answer = " ".join(reply.data["answer"].split())
        if not used or not answer:
            return None if reply.data["score"] == 0 else replace(pick, score=reply.data["score"] / 100)
        return _Pick(pick.entry, reply.data["score"] / 100, answer, used)

    async def _reduce(self, run: _Run, picks: list[_Pick], step: Iri) -> AsyncIterator[Event]:
        numbered: list[FindingRecord] = []
        for pick in picks:
            numbered += [f for f in pick.findings if f not in numbered]
        call: LlmCall | None = None
        fallback: str | None = None
        answer = ""
        if not picks:
            answer = NO_REPORTS if not self.index.current()[0] else "No community report answers this question."
            yield AnswerPiece(text=answer)
        elif self.llm is not None and run.deadline.remaining() > 0:
            listing = "\n".join(f"[{numbered.index(f) + 1}] ({p.entry.report.title}) {f.content}"
                                for p in picks for f in p.findings)
            partials = "\n".join(f"- {p.entry.report.title}: {p.answer}" for p in picks)
            stream = self.llm.stream([
                system("Answer the question about the whole corpus from the community findings below. End every "
                       "sentence with the number(s) of the findings it rests on, like [1] or [2, 3]; use only the "
                       "numbers given."),
                user(f"Question: {run.question}\n\nPartial answers:\n{partials}\n\nFindings:\n{listing}")])
            outcome = Outcome()
            async for piece in answer_pieces(stream, run.deadline, outcome):
                yield AnswerPiece(text=piece)
            fallback, answer = outcome.fallback, stream.text.strip()
            run.warnings += outcome.warnings
            call = run.tally.add(stream.usage) if stream.usage is not None else None
        elif self.llm is not None:
            fallback = "the question deadline passed before the reduce"
        if picks and (self.llm is None or fallback is not None or not answer):
            if fallback is not None:
                run.warnings.append(f"reduce fell back to an extractive answer: {fallback}")
            sentences = []
            for pick in picks:
                finding = pick.findings[0]
                text = (pick.answer if self.llm is not None else finding.content).rstrip(" .")
                sentences.append(f"{pick.entry.report.title}: {text} [{numbered.index(finding) + 1}].")
            for i, sentence in enumerate(sentences):
                yield AnswerPiece(text=sentence if i == 0 else " " + sentence)
            answer = " ".join(sentences)
        yield AnswerPiece(text="", end_of_stream=True)
        synthesis = Iri(f"{run.iri.value}/synthesis")
        citations, sources = self._citations(run, synthesis, answer, numbered)
        document = ids.global_answer_iri(run.sid)
        if run.writer.enabled:
            self.librarian.add([NewRecord(document.value, "answer", answer, title=run.question)])
        quads = synthesis_quads(synthesis, question=run.iri, derived_from=step, document=document, content=answer,
                                llm=call, reasoning=None if fallback is None else f"Extractive answer (fallback: {fallback})")
        yield run.writer.step("synthesis", synthesis, quads + global_citation_quads(synthesis, citations))
        yield Final(session_id=run.sid, answer=answer, sources=tuple(sources), usage=run.tally.total(),
                    warnings=tuple(run.warnings))

    def _citations(self, run: _Run, synthesis: Iri, answer: str,
                   numbered: list[FindingRecord]) -> tuple[list[GlobalCitation], list[Source]]:
        """Each marker of the answer → its finding, facts and their chunks; the sources of every cited fact."""
        markers = [(m, n) for m in find_markers(answer) for n in m.numbers]
        unknown = sum(1 for _, n in markers if not 1 <= n <= len(numbered))
        if unknown:
            run.warnings.append(f"{unknown} citation marker(s) name no finding and cite nothing")
        cited = [(m, numbered[n - 1], n) for m, n in markers if 1 <= n <= len(numbered)]
        found = fact_sources(self.store, [fact for _, f, _ in cited for fact in f.facts])
        out: list[GlobalCitation] = []
        sources: list[Source] = []
        for i, (m, finding, n) in enumerate(cited, start=1):
            own = [s for fact in finding.facts for s in found.get(fact, [])]
            first = [s for s in own if finding.chunk is not None and s.chunk == finding.chunk.value
                     and s.evidence == (finding.offset, finding.length)]
            ordered = list(dict.fromkeys(first + own))
            chunks = tuple(dict.fromkeys(Iri(s.chunk) for s in ordered))
            out.append(GlobalCitation(ids.citation_iri(synthesis, i), m.text, m.offset, m.length, finding.iri,
                                      finding.facts, chunks))
            sources += [replace(s, marker=f"[{n}]") for s in ordered]
        return out, list(dict.fromkeys(sources))
