"""A conversation as a thread: each turn with its answer and the citations its trace stores.

``conversations show``, ``GET /api/v1/conversations/{id}`` and the viewer read this; a turn's
citations are those of its synthesis (an agent's: those of the tools' traces it ran).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from provgraph.conversation.history import Turn, conversation_turns
from provgraph.events import Source
from provgraph.explain.model import AgentTrace, Citation, Trace
from provgraph.explain.render_json import iso_time, source_json
from provgraph.explain.traces import load_trace
from provgraph.librarian.base import Librarian
from provgraph.store.base import QuadStore

__all__ = ["Cited", "ThreadTurn", "Thread", "load_thread", "thread_json"]


@dataclass(frozen=True, slots=True)
class Cited:
    """One citation marker of a turn's answer and the source it resolves to."""

    marker: str
    source: Source | None


@dataclass(frozen=True, slots=True)
class ThreadTurn:
    turn: Turn
    citations: tuple[Cited, ...]


@dataclass(frozen=True, slots=True)
class Thread:
    id: str
    turns: tuple[ThreadTurn, ...]


def _citations(trace: Trace) -> list[Citation]:
    if isinstance(trace, AgentTrace):
        return [c for sub in trace.sub_traces for c in _citations(sub)]
    synthesis = getattr(trace, "synthesis", None)
    return list(synthesis.citations) if synthesis is not None else []


def _cited(c: Citation) -> Cited:
    ref = c.quote or (c.sources[0] if c.sources else None)
    if ref is None and c.chunks and c.chunks[0].source is not None:
        return Cited(c.marker, c.chunks[0].source)
    return Cited(c.marker, ref.source if ref is not None else None)


def load_thread(store: QuadStore, librarian: Librarian | None, cid: str) -> Thread:
    """The turns of ``cid`` with their citations; :class:`NotFound` for an unknown conversation."""
    out: list[ThreadTurn] = []
    for turn in conversation_turns(store, cid):
        trace = load_trace(store, turn.question.value, librarian=librarian)
        seen: dict[str, Cited] = {}
        for citation in _citations(trace):
            seen.setdefault(citation.marker, _cited(citation))
        answer = trace.answer or turn.answer
        out.append(ThreadTurn(replace(turn, answer=answer), tuple(seen.values())))
    return Thread(cid, tuple(out))


def thread_json(thread: Thread) -> dict[str, Any]:
    """The thread's JSON form (``conversations show --format json``, the API)."""
    return {"conversation": thread.id, "turns": [{
        "turn": t.turn.number, "type": t.turn.kind, "session_id": t.turn.session_id,
        "question_iri": t.turn.question.value, "asked": t.turn.asked, "query": t.turn.query,
        "rewrite": {"method": t.turn.method, "entities": list(t.turn.entities),
                    "previous_turn": t.turn.previous.value if t.turn.previous else None},
        "started": iso_time(t.turn.started), "answer": t.turn.answer,
        "citations": [{"marker": c.marker, "source": source_json(c.source) if c.source else None} for c in t.citations],
    } for t in thread.turns]}
