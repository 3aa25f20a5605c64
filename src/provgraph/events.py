"""Typed stream messages of SPEC §6 (a leaf module) and their one JSON form.

A RAG request yields ``Explain`` steps as they are written, ``AnswerPiece``s of the answer,
and ends with exactly one ``Final`` (``end_of_session``) or one ``ErrorMessage``. The agent adds
``Thought``, ``Action`` and ``Observation`` and ends with ``Final(end_of_dialog=True)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from provgraph.rdf.terms import Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL

__all__ = [
    "Explain",
    "AnswerPiece",
    "Thought",
    "Action",
    "Observation",
    "Source",
    "Usage",
    "Final",
    "ErrorMessage",
    "Event",
    "to_json",
]

EXPLAIN_GRAPH = GRAPH_RETRIEVAL.value


@dataclass(frozen=True, slots=True, kw_only=True)
class Explain:
    """One trace step, written to the store and carried here with its triples."""

    step: str  # question | grounding | exploration | focus | synthesis | analysis | conclusion
    explain_id: str
    triples: tuple[Quad, ...]
    explain_graph: str = EXPLAIN_GRAPH


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerPiece:
    """A piece of the answer text; ``end_of_stream`` marks the last one."""

    text: str
    end_of_stream: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Thought:
    """An agent's thought for one iteration."""

    text: str
    step: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """An agent's tool call."""

    name: str
    arguments: dict[str, Any]
    step: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Observation:
    """What a tool returned (or its error)."""

    text: str
    step: int
    error: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where a selected edge (or a retrieved chunk) came from: chunk → page → document."""

    document: str
    title: str
    chunk: str
    chunk_index: int
    offset: int  # of the chunk in its parent's text
    length: int
    page: str | None = None
    page_number: int | None = None
    section: str | None = None
    section_title: str | None = None
    subgraph: str | None = None
    edge: TripleTerm | None = None
    marker: str | None = None  # citation marker in the answer, e.g. "[1]"
    evidence: tuple[int, int] | None = None  # the supporting sentence(s): offset, length in the chunk's text


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage summed over a request's LLM calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    llm_calls: int = 0
    models: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Final:
    """The last message: the only completion signal. ``session_id`` names the stored trace; ``None`` when no
    trace was written (``--no-trace``, ``traces = false``)."""

    session_id: str | None
    answer: str
    sources: tuple[Source, ...] = ()
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()
    end_of_dialog: bool = False
    conversation: str | None = None  # the conversation this answer is a turn of
    turn: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorMessage:
    """A failed step: ends the session; the steps already written stay."""

    type: str
    message: str
    session_id: str = ""


Event = Union[Explain, AnswerPiece, Thought, Action, Observation, Final, ErrorMessage]


def _triple_json(t: TripleTerm) -> dict[str, str]:
    return {"s": str(t.s), "p": str(t.p), "o": str(t.o)}


def _source_json(s: Source) -> dict[str, Any]:
    out: dict[str, Any] = {
        "document": s.document, "title": s.title, "chunk": s.chunk, "chunk_index": s.chunk_index,
        "offset": s.offset, "length": s.length, "page": s.page, "page_number": s.page_number,
        "section": s.section, "section_title": s.section_title, "subgraph": s.subgraph, "marker": s.marker,
    }
    if s.edge is not None:
        out["edge"] = _triple_json(s.edge)
    if s.evidence is not None:
        out["evidence"] = {"offset": s.evidence[0], "length": s.evidence[1]}
    return out


def to_json(ev: Event) -> dict[str, Any]:
    """The wire form of an event (SPEC §6 field names), for ``--format json``, SSE and WebSocket."""
    if isinstance(ev, Explain):
        return {
            "message_type": "explain", "step": ev.step, "explain_id": ev.explain_id,
            "explain_graph": ev.explain_graph,
            "explain_triples": [{"s": str(q.s), "p": str(q.p), "o": str(q.o), "g": q.g.value if q.g else None}
                                for q in ev.triples],
            "end_of_session": False,
        }
    if isinstance(ev, AnswerPiece):
        return {"message_type": "chunk", "response": ev.text, "end_of_stream": ev.end_of_stream, "end_of_session": False}
    if isinstance(ev, Thought):
        return {"message_type": "thought", "response": ev.text, "step": ev.step, "end_of_session": False}
    if isinstance(ev, Action):
        return {"message_type": "action", "name": ev.name, "arguments": ev.arguments, "step": ev.step,
                "end_of_session": False}
    if isinstance(ev, Observation):
        return {"message_type": "observation", "response": ev.text, "step": ev.step, "error": ev.error,
                "end_of_session": False}
    if isinstance(ev, Final):
        out: dict[str, Any] = {
            "message_type": "final", "session_id": ev.session_id, "answer": ev.answer, "end_of_stream": True,
            "end_of_session": True, "sources": [_source_json(s) for s in ev.sources],
            "usage": {"input_tokens": ev.usage.input_tokens, "output_tokens": ev.usage.output_tokens,
                      "llm_calls": ev.usage.llm_calls, "models": list(ev.usage.models)},
            "warnings": list(ev.warnings),
        }
        if ev.end_of_dialog:
            out["end_of_dialog"] = True
        if ev.conversation is not None:
            out["conversation"] = {"id": ev.conversation, "turn": ev.turn}
        return out
    if isinstance(ev, ErrorMessage):
        return {"message_type": "error", "error": {"type": ev.type, "message": ev.message},
                "session_id": ev.session_id, "end_of_session": True}
    raise TypeError(f"not an event: {ev!r}")
