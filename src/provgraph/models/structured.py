"""Structured-output negotiation: how to ask an endpoint for JSON, learnt once per endpoint+model.

The ladder, best first: ``json_schema`` (``response_format`` with the schema: OpenAI, vLLM,
Ollama, llama.cpp's ``llama-server``), ``json_object`` (``response_format: json_object`` with the
schema in the prompt, and in the llama-cpp-python ``schema`` extension), ``prompt`` (the schema in
the prompt only, the answer repaired and validated). A request is moved one step down when the
server answers any 4xx/5xx whose body points at ``response_format``, the schema or a grammar. What
worked is remembered for the rest of the process (:data:`REMEMBERED`) and logged once.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Literal

from provgraph.models.schema import with_schema_instruction

__all__ = ["Mode", "MODES", "REMEMBERED", "is_format_rejection", "remembered_mode", "remember", "apply_mode", "forget"]

Mode = Literal["json_schema", "json_object", "prompt"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "prompt")

REMEMBERED: dict[tuple[str, str], Mode] = {}
"""``(base_url, model)`` → the best mode the endpoint accepted (or fell back to) in this process."""

_LOCK = threading.Lock()
_LOG = logging.getLogger("provgraph.models")
_POINTERS = ("response_format", "json_schema", "json_object", "schema", "grammar", "structured output")


def is_format_rejection(status: int, body_text: str) -> bool:
    """True when an error response (4xx/5xx) blames the structured-output request."""
    if status < 400:
        return False
    text = body_text.lower()
    return any(p in text for p in _POINTERS)


def remembered_mode(base_url: str, model: str) -> Mode:
    """The mode to start with for this endpoint and model (``json_schema`` until one failed)."""
    with _LOCK:
        return REMEMBERED.get((base_url, model), "json_schema")


def remember(base_url: str, model: str, mode: Mode, reason: str) -> None:
    """Record that ``mode`` is what this endpoint+model gets from now on; logs the change once."""
    with _LOCK:
        before = REMEMBERED.get((base_url, model))
        if before is not None and MODES.index(before) >= MODES.index(mode):
            return
        REMEMBERED[(base_url, model)] = mode
    _LOG.warning("LLM %s at %s: structured output falls back to %s (%s)", model, base_url, mode, reason)


def forget() -> None:
    """Forget every endpoint (tests, and a fresh probe)."""
    with _LOCK:
        REMEMBERED.clear()


def apply_mode(request: dict[str, Any], mode: Mode, schema: dict[str, Any], schema_name: str) -> dict[str, Any]:
    """A copy of a chat request asking for JSON the way ``mode`` does."""
    out = dict(request)
    out.pop("response_format", None)
    if mode == "json_schema":
        out["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "schema": schema, "strict": False},
        }
        return out
    out["messages"] = with_schema_instruction(request["messages"], schema)
    if mode == "json_object":
        out["response_format"] = {"type": "json_object", "schema": schema}
    return out
