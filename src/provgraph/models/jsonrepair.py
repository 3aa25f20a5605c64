"""Get JSON out of what an LLM actually wrote.

Handles: code fences (```json … ```), prose before or after the value, trailing commas, and
JSON Lines (one object per line). Raises :class:`~provgraph.errors.MalformedOutput` with the raw
text when no JSON value can be recovered.

>>> parse_json('Sure! ```json\\n{"a": [1, 2,],}\\n``` Hope it helps.')
{'a': [1, 2]}
>>> parse_json('{"id": "a"}\\n{"id": "b"}')
[{'id': 'a'}, {'id': 'b'}]
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from provgraph.errors import MalformedOutput
from provgraph.models.base import JsonCompletion, Usage
from provgraph.models.schema import schema_errors

__all__ = ["parse_json", "parse_jsonl", "parse_validated", "json_completion", "JsonLines", "strip_trailing_commas",
           "close_truncated"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_OPENERS = "{["
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a string after its opening quote
_CLOSES_NEXT = re.compile(r"[ \t\r\n]*[}\]]")  # white space, then a closing bracket
_CLOSER = {"{": "}", "[": "]"}


@dataclass(frozen=True, slots=True)
class JsonLines:
    """The JSON objects found one per line, and how many non-empty lines were not JSON objects."""

    items: list[dict[str, Any]]
    dropped: int


def parse_json(text: str) -> Any:
    """The JSON value in ``text``; several objects one per line become a list.

    Raises :class:`MalformedOutput` (``raw`` = ``text``) when nothing parses.
    """
    if not text or not text.strip():
        raise MalformedOutput("model output is empty: expected JSON", raw=text or "")
    stripped = text.strip()
    value, ok = _loads(stripped)
    if ok:
        return value
    for match in _FENCE.finditer(text):
        value, ok = _loads_region(match.group(2))
        if ok:
            return value
    value, ok = _loads_region(text)
    if ok:
        return value
    reason = "the JSON is cut off (unbalanced brackets)" if _looks_truncated(text) else "no JSON value found"
    raise MalformedOutput(f"model output is not JSON: {reason}; output starts {_preview(text)}", raw=text)


def parse_validated(text: str, schema: dict[str, Any], *, what: str) -> Any:
    """:func:`parse_json`, then check against ``schema``; ``what`` names the model and schema in errors.

    Raises :class:`MalformedOutput` (``raw`` = ``text``) when either step fails.
    """
    try:
        data = parse_json(text)
    except MalformedOutput as exc:
        raise MalformedOutput(f"{what}: {exc}", raw=text) from exc
    problems = schema_errors(data, schema)
    if problems:
        raise MalformedOutput(f"{what} does not match the schema: {'; '.join(problems[:5])}", raw=text)
    return data


def json_completion(
    text: str, usage: Usage, schema: dict[str, Any], *, model: str, schema_name: str, cut_off: bool = False
) -> JsonCompletion:
    """A backend's answer ``text`` as a :class:`JsonCompletion`, through :func:`parse_validated`.

    ``cut_off``: the model stopped at its token limit; the complete items before the cut are kept
    (:func:`close_truncated`). Raises :class:`MalformedOutput` naming ``model`` and ``schema_name``
    when the text is not valid.
    """
    what = f"{model} answer for {schema_name!r}"
    try:
        data = parse_validated(text, schema, what=what)
    except MalformedOutput:
        valid = lambda value: not schema_errors(value, schema)  # noqa: E731
        closed = close_truncated(text, valid) if cut_off or _looks_truncated(text) else None
        if closed is None:
            if cut_off:
                cut = f"{what}: stopped at its token limit before any complete item"
                raise MalformedOutput(cut, raw=text) from None
            raise
        data = parse_validated(closed, schema, what=what)
    return JsonCompletion(data, text, usage)


def close_truncated(text: str, accept: Callable[[Any], bool] = lambda value: True) -> str | None:
    """JSON cut off mid-value, cut back to its last complete element that ``accept`` takes, and closed.

    None when no cut is left or the text is not truncated JSON.

    >>> close_truncated('{"items": [{"a": 1}, {"a": 2}, {"a": "thr')
    '{"items": [{"a": 1}, {"a": 2}]}'
    """
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (where to cut, closers needed there)
    for i, ch in _outside_strings(text, start):
        if ch in _OPENERS:
            stack.append(_CLOSER[ch])
            if ch == "[":
                cuts.append((i + 1, "".join(reversed(stack))))
        elif ch in "}]":
            if not stack or ch != stack.pop():
                return None
            if not stack:
                return None  # balanced: not a truncation
        elif ch == ",":
            cuts.append((i, "".join(reversed(stack))))
    for i, closers in reversed(cuts):
        candidate = text[start:i] + closers
        value, ok = _loads(candidate)
        if ok and value is not None and accept(value):
            return candidate
    return None


def parse_jsonl(text: str) -> JsonLines:
    """Objects from JSON Lines output (fences and prose lines tolerated); never raises.

    A line holding a JSON array of objects contributes each object.
    """
    items: list[dict[str, Any]] = []
    dropped = 0
    body = "\n".join(m.group(2) for m in _FENCE.finditer(text)) or text
    for line in body.splitlines():
        line = line.strip().rstrip(",")
        if not line or line.startswith("```"):
            continue
        value, ok = _loads(line)
        if not ok:
            found = _values(line)
            value, ok = (found[0], True) if len(found) == 1 else (None, False)
        if ok and isinstance(value, dict):
            items.append(value)
        elif ok and isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            items.extend(value)
        else:
            dropped += 1
    return JsonLines(items, dropped)


def strip_trailing_commas(text: str) -> str:
    """Remove commas directly before ``}`` or ``]`` (outside strings)."""
    out: list[str] = []
    kept = 0
    for i, ch in _outside_strings(text):
        if ch == "," and _CLOSES_NEXT.match(text, i + 1):
            out.append(text[kept:i])
            kept = i + 1
    out.append(text[kept:])
    return "".join(out)


def _outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """Index and character of each character from ``start`` outside JSON strings (an unclosed one runs to the end)."""
    i, n = start, len(text)
    while i < n:
        if text[i] == '"':
            closed = _STRING_REST.match(text, i + 1)
            i = closed.end() if closed else n
        else:
            yield i, text[i]
            i += 1


def _loads(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), True
    except ValueError:
        pass
    try:  # the repair pass only when plain JSON failed: it walks every character
        return json.loads(strip_trailing_commas(text)), True
    except ValueError:
        return None, False


def _loads_region(text: str) -> tuple[Any, bool]:
    """One value, or several objects (JSON Lines) as a list."""
    value, ok = _loads(text.strip())
    if ok:
        return value, True
    found = _values(text)
    if len(found) == 1:
        return found[0], True
    if len(found) > 1 and all(isinstance(v, dict) for v in found):
        return found, True
    return (found[0], True) if found else (None, False)


def _values(text: str) -> list[Any]:
    """Every balanced top-level ``{…}``/``[…]`` in ``text`` that parses, left to right."""
    found: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] not in _OPENERS:
            i += 1
            continue
        end = _balanced_end(text, i)
        if end is None:
            if _looks_like_json_start(text, i):
                break  # an unterminated value: what follows is a fragment of it, not an answer
            i += 1
            continue
        value, ok = _loads(text[i : end + 1])
        if ok:
            found.append(value)
            i = end + 1
        else:
            i += 1
    return found


def _balanced_end(text: str, start: int) -> int | None:
    stack = [_CLOSER[text[start]]]
    for i, ch in _outside_strings(text, start + 1):
        if ch in _OPENERS:
            stack.append(_CLOSER[ch])
        elif ch in "}]":
            if ch != stack.pop():
                return None
            if not stack:
                return i
    return None


def _looks_like_json_start(text: str, i: int) -> bool:
    rest = text[i + 1 : i + 40].lstrip()
    return bool(rest) and rest[0] in '"{['


def _looks_truncated(text: str) -> bool:
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    return start >= 0 and _balanced_end(text, start) is None


def _preview(text: str, size: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat[:size] + ("…" if len(flat) > size else ""))
