"""Stream messages back into typed events: the inverse of ``provgraph.events.to_json``."""

from __future__ import annotations

from typing import Any

import pyoxigraph as ox

from provgraph.errors import InputError
from provgraph.events import (
    Action,
    AnswerPiece,
    ErrorMessage,
    Event,
    Explain,
    Final,
    Observation,
    Source,
    Thought,
    Usage,
)
from provgraph.rdf.convert import from_ox
from provgraph.rdf.terms import Iri, Quad, Term, TripleTerm

__all__ = ["event_from_json", "triple_from_json"]


def triple_from_json(t: dict[str, str]) -> TripleTerm:
    """``{"s", "p", "o"}`` in N-Triples form → a triple term."""
    parsed = list(ox.parse(f"{t['s']} {t['p']} {t['o']} .".encode("utf-8"), format=ox.RdfFormat.N_TRIPLES))
    if len(parsed) != 1:
        raise InputError(f"not one triple: {t!r}")
    triple = parsed[0]
    return TripleTerm(from_ox(triple.subject), from_ox(triple.predicate), from_ox(triple.object))  # type: ignore[arg-type]


def _quads(rows: list[dict[str, Any]]) -> tuple[Quad, ...]:
    """Every ``{"s", "p", "o", "g"}`` of one explain message, parsed as one N-Triples document (fast)."""
    text = "".join(f"{t['s']} {t['p']} {t['o']} .\n" for t in rows)
    parsed = list(ox.parse(text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES))
    if len(parsed) != len(rows):
        raise InputError(f"explain triples: {len(rows)} sent, {len(parsed)} parsed")
    out = []
    for t, triple in zip(rows, parsed):
        graph: Term | None = Iri(t["g"]) if t.get("g") else None
        out.append(Quad(from_ox(triple.subject), from_ox(triple.predicate), from_ox(triple.object),  # type: ignore[arg-type]
                        graph))  # type: ignore[arg-type]
    return tuple(out)


def _source(s: dict[str, Any]) -> Source:
    return Source(document=s["document"], title=s["title"], chunk=s["chunk"], chunk_index=s["chunk_index"],
                  offset=s["offset"], length=s["length"], page=s.get("page"), page_number=s.get("page_number"),
                  section=s.get("section"), section_title=s.get("section_title"), subgraph=s.get("subgraph"),
                  marker=s.get("marker"), edge=triple_from_json(s["edge"]) if s.get("edge") else None)


def event_from_json(m: dict[str, Any]) -> Event:
    """The typed event of one wire message (``message_type`` explain, chunk, …, final, error)."""
    kind = m.get("message_type")
    if kind == "explain":
        return Explain(step=m["step"], explain_id=m["explain_id"], explain_graph=m["explain_graph"],
                       triples=_quads(m["explain_triples"]))
    if kind == "chunk":
        return AnswerPiece(text=m["response"], end_of_stream=m.get("end_of_stream", False))
    if kind == "thought":
        return Thought(text=m["response"], step=m["step"])
    if kind == "action":
        return Action(name=m["name"], arguments=m["arguments"], step=m["step"])
    if kind == "observation":
        return Observation(text=m["response"], step=m["step"], error=m.get("error", False))
    if kind == "final":
        u = m.get("usage") or {}
        return Final(session_id=m["session_id"], answer=m["answer"],
                     sources=tuple(_source(s) for s in m.get("sources", [])),
                     usage=Usage(input_tokens=u.get("input_tokens", 0), output_tokens=u.get("output_tokens", 0),
                                 llm_calls=u.get("llm_calls", 0), models=tuple(u.get("models", ()))),
                     warnings=tuple(m.get("warnings", ())), end_of_dialog=m.get("end_of_dialog", False),
                     conversation=(m.get("conversation") or {}).get("id"), turn=(m.get("conversation") or {}).get("turn"))
    if kind == "error":
        return ErrorMessage(type=m["error"]["type"], message=m["error"]["message"], session_id=m.get("session_id", ""))
    raise InputError(f"unknown message type {kind!r}")
