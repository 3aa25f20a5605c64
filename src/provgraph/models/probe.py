"""Ask the configured LLM what it supports: structured output, streaming, usage reports.

Two small calls (a JSON answer against a tiny schema, a short stream); the first settles the
structured-output mode (:mod:`provgraph.models.structured`) for the rest of the process.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from provgraph.errors import ModelError, ModelUnavailable
from provgraph.models.base import ChatModel, system, user

__all__ = ["ProbeResult", "probe"]

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 20}},
    "required": ["answer"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one endpoint+model did; each ``*_error`` says why a capability is missing."""

    model: str
    structured_output: str | None
    json_ok: bool
    json_error: str | None
    streaming: bool
    stream_error: str | None
    usage: str
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


async def probe(llm: ChatModel) -> ProbeResult:
    """Probe ``llm`` with two tiny calls. A model that answers but lacks a capability is reported; one that
    cannot be reached at all (refused, timed out: :class:`ModelUnavailable`) raises, as any command would.

    ``structured_output`` is the mode the endpoint accepted, ``None`` when the JSON call failed (nothing
    was measured).
    """
    started = time.monotonic()
    messages = [system("Reply with JSON."), user('What is the capital of France? Reply as {"answer": "..."}')]
    json_error: str | None = None
    usage = "none"
    try:
        reply = await llm.complete_json(messages, schema=_SCHEMA, schema_name="probe", max_tokens=32)
        usage = "estimated" if reply.usage.estimated else "reported"
    except ModelUnavailable:
        raise
    except ModelError as exc:
        json_error = _line(exc)
    mode = None if json_error is not None else getattr(llm, "structured_mode", "grammar (in-process)")
    stream_error: str | None = None
    stream_usage = "none"
    try:
        stream = llm.stream([user("Say hello.")], max_tokens=8)
        await stream.collect()
        assert stream.usage is not None
        stream_usage = "estimated" if stream.usage.estimated else "reported"
    except ModelError as exc:
        stream_error = _line(exc)
    return ProbeResult(
        model=llm.name,
        structured_output=None if mode is None else str(mode),
        json_ok=json_error is None,
        json_error=json_error,
        streaming=stream_error is None,
        stream_error=stream_error,
        usage=f"{usage} (completions), {stream_usage} (streams)",
        seconds=round(time.monotonic() - started, 2),
    )


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
