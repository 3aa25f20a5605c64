"""TrustGraph wire mode: the stream's messages in the shape TrustGraph's own clients read (opt-in).

Facts from TrustGraph's public schema and client (``GraphRagResponse``/``DocumentRagResponse``:
``message_type`` "chunk" or "explain", ``response``, ``end_of_stream``, ``end_of_session``,
``explain_id``, ``explain_graph``, ``explain_triples``, ``in_token``, ``out_token``, ``model``,
``error``; ``AgentResponse``: ``message_type`` "thought", "action", "observation", "answer",
``content``, ``end_of_message``, ``end_of_dialog``). Its client stops reading a request at the
first message with ``end_of_session`` or ``end_of_dialog``, or an envelope marked ``complete``, and
takes RAG text from ``response``, agent text from ``content``. So here a RAG stream ends with a
chunk message (empty ``response``, ``end_of_stream`` and ``end_of_session`` true) carrying the
token counts, and the sources and session ID as extra fields; an agent's with an ``answer``
message with ``end_of_dialog``. Requests may use TrustGraph's names: ``query`` for ``question``,
kebab-case limits (``entity-limit``), ``streaming`` (ignored: provgraph always streams).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["WIRES", "to_trustgraph", "from_trustgraph_request", "check_wire"]

WIRES = ("provgraph", "trustgraph")
_DROPPED = ("streaming", "user", "workspace", "flow")


def check_wire(wire: str | None) -> str:
    """``provgraph`` (the default) or ``trustgraph``; a one-line InputError otherwise."""
    from provgraph.errors import InputError

    if wire in (None, "", "provgraph"):
        return "provgraph"
    if wire != "trustgraph":
        raise InputError(f"unknown wire {wire!r}: use provgraph or trustgraph")
    return wire


def from_trustgraph_request(request: dict[str, Any]) -> dict[str, Any]:
    """A TrustGraph-style request body with provgraph's names (``query`` → ``question``, kebab → snake case)."""
    out: dict[str, Any] = {}
    for key, value in request.items():
        if key in _DROPPED:
            continue
        name = "question" if key == "query" else key.replace("-", "_")
        out[name] = value
    return out


def _usage(final: dict[str, Any]) -> dict[str, Any]:
    u = final.get("usage") or {}
    models = u.get("models") or []
    return {"in_token": u.get("input_tokens"), "out_token": u.get("output_tokens"),
            "model": models[0] if models else None}


def to_trustgraph(message: dict[str, Any], *, agent: bool) -> dict[str, Any]:
    """One provgraph stream message (``to_json``'s form) as TrustGraph's clients read it."""
    kind = message["message_type"]
    if kind == "explain":
        return {"message_type": "explain", "response": "", "end_of_stream": False, "end_of_session": False,
                **{k: message[k] for k in ("explain_id", "explain_graph", "explain_triples")}}
    if kind == "error":
        return {"message_type": "error", "response": "", "content": "", "error": message["error"],
                "end_of_stream": True, "end_of_session": True, "end_of_dialog": agent}
    if agent:
        return _agent(kind, message)
    if kind == "chunk":
        return {"message_type": "chunk", "response": message["response"], "end_of_stream": message["end_of_stream"],
                "end_of_session": False}
    if kind == "final":
        return {"message_type": "chunk", "response": "", "end_of_stream": True, "end_of_session": True,
                **_usage(message), "session_id": message["session_id"], "answer": message["answer"],
                "sources": message["sources"], "warnings": message["warnings"],
                **({"conversation": message["conversation"]} if "conversation" in message else {})}
    raise ValueError(f"no TrustGraph form for a {kind!r} message")


def _agent(kind: str, message: dict[str, Any]) -> dict[str, Any]:
    def step(tg_kind: str, content: str, *, last: bool = True) -> dict[str, Any]:
        return {"message_type": tg_kind, "content": content, "end_of_message": last, "end_of_dialog": False,
                "end_of_session": False}

    if kind == "thought":
        return step("thought", message["response"])
    if kind == "action":
        return step("action", f"{message['name']} {json.dumps(message['arguments'], ensure_ascii=False)}")
    if kind == "observation":
        return step("observation", message["response"])
    if kind == "chunk":
        return step("answer", message["response"], last=message["end_of_stream"])
    if kind == "final":
        return {"message_type": "answer", "content": "", "end_of_message": True, "end_of_dialog": True,
                "end_of_session": True, **_usage(message), "session_id": message["session_id"],
                "answer": message["answer"], "sources": message["sources"], "warnings": message["warnings"]}
    raise ValueError(f"no TrustGraph form for an agent's {kind!r} message")
