"""Bounds on the JSON schemas provgraph sends to models, and the output budget they imply.

Servers that constrain decoding with a grammar (llama.cpp's GBNF, built from the schema) expand
``maxLength: N`` into about N grammar rules and ``maxItems: N`` into N repetitions: a schema with
``maxLength: 20000`` made llama.cpp's grammar builder fail, and the in-process provider crash.
Every schema sent to a model must therefore pass :func:`grammar_problems`: every string and array
bounded, no single bound above the limits below, and the sum of string bounds small.
:func:`token_budget` turns those bounds into the ``max_tokens`` of a call.

>>> grammar_problems({"type": "string", "maxLength": 4000})
['$: maxLength 4000 is above 1000']
>>> token_budget({"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 30}})
32
"""

from __future__ import annotations

from typing import Any

from provgraph.errors import ModelError

__all__ = [
    "MAX_STRING_LENGTH",
    "MAX_ITEMS",
    "MAX_TOTAL_STRING_LENGTH",
    "grammar_problems",
    "ensure_grammar_safe",
    "token_budget",
    "clamped",
    "output_tokens",
]

MAX_STRING_LENGTH = 1000
"""Largest ``maxLength`` of one string (llama.cpp's converter handled 1000 on the measured server)."""

MAX_ITEMS = 60
"""Largest ``maxItems`` of one array."""

MAX_TOTAL_STRING_LENGTH = 3000
"""Largest sum of ``maxLength`` over the schema's string nodes (the grammar's size grows with it)."""

MAX_DEPTH = 6
"""Deepest nesting of objects and arrays."""

_CHARS_PER_TOKEN = 3
"""Pessimistic characters per token for budgets (JSON and short words tokenise densely)."""


def grammar_problems(schema: dict[str, Any]) -> list[str]:
    """Every way ``schema`` breaks the bounds above, each as ``"<path>: <problem>"``; empty when safe."""
    problems: list[str] = []
    total = _walk(schema, "$", 0, problems)
    if total > MAX_TOTAL_STRING_LENGTH:
        problems.append(f"$: string bounds add up to {total}, above {MAX_TOTAL_STRING_LENGTH}")
    return problems


def ensure_grammar_safe(schema: dict[str, Any], name: str) -> None:
    """Raise :class:`ModelError` (before anything is sent) when ``schema`` is not grammar-safe."""
    problems = grammar_problems(schema)
    if problems:
        raise ModelError(f"schema {name!r} is not safe to send to a model: {'; '.join(problems[:3])}")


def token_budget(schema: dict[str, Any]) -> int:
    """Most tokens a JSON value valid against the (bounded) ``schema`` can take, with some slack."""
    return _budget(schema, 0)


def output_tokens(schema: dict[str, Any], cap: int, asked: int | None = None) -> int:
    """The ``max_tokens`` of a JSON call: the schema's :func:`token_budget`, the backend's ``cap`` and
    the caller's ``asked`` (e.g. an extraction sized to its chunk), whichever is smallest."""
    return max(16, min(token_budget(schema), cap, asked or cap))


def clamped(schema: dict[str, Any], *, string_limit: int, items_limit: int) -> dict[str, Any]:
    """A copy of ``schema`` with every string's ``maxLength`` and every array's ``maxItems`` at most
    the limits (set where missing): a stricter schema, e.g. a tool's arguments inside a step schema."""
    out = dict(schema)
    types = _types(out)
    if "string" in types and "enum" not in out:
        out["maxLength"] = min(int(out.get("maxLength", string_limit)), string_limit)
    if "array" in types:
        out["maxItems"] = min(int(out.get("maxItems", items_limit)), items_limit)
        if isinstance(out.get("items"), dict):
            out["items"] = clamped(out["items"], string_limit=string_limit, items_limit=items_limit)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: clamped(v, string_limit=string_limit, items_limit=items_limit) if isinstance(v, dict)
                             else v for k, v in out["properties"].items()}
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = clamped(out["additionalProperties"], string_limit=string_limit,
                                              items_limit=items_limit)
    for keyword in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(keyword), list):
            out[keyword] = [clamped(v, string_limit=string_limit, items_limit=items_limit) if isinstance(v, dict)
                            else v for v in out[keyword]]
    return out


def _types(schema: dict[str, Any]) -> list[str]:
    wanted = schema.get("type")
    if isinstance(wanted, list):
        return [str(t) for t in wanted]
    if isinstance(wanted, str):
        return [wanted]
    if "properties" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    return []


def _walk(schema: Any, path: str, depth: int, problems: list[str]) -> int:
    """Check one node; returns the sum of string bounds below it."""
    if not isinstance(schema, dict):
        problems.append(f"{path}: not a schema object")
        return 0
    if depth > MAX_DEPTH:
        problems.append(f"{path}: nested deeper than {MAX_DEPTH}")
        return 0
    types = _types(schema)
    total = 0
    if "string" in types and "enum" not in schema:
        limit = schema.get("maxLength")
        if not isinstance(limit, int):
            problems.append(f"{path}: string without maxLength")
        elif limit > MAX_STRING_LENGTH:
            problems.append(f"{path}: maxLength {limit} is above {MAX_STRING_LENGTH}")
        else:
            total += limit
    if "array" in types:
        limit = schema.get("maxItems")
        if not isinstance(limit, int):
            problems.append(f"{path}: array without maxItems")
        elif limit > MAX_ITEMS:
            problems.append(f"{path}: maxItems {limit} is above {MAX_ITEMS}")
        items = schema.get("items")
        if isinstance(items, dict):
            total += _walk(items, f"{path}[]", depth + 1, problems)
    for key, sub in (schema.get("properties") or {}).items():
        total += _walk(sub, f"{path}.{key}", depth + 1, problems)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        total += _walk(extra, f"{path}.*", depth + 1, problems)
    for keyword in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(keyword) or []):
            total += _walk(sub, f"{path}.{keyword}[{i}]", depth + 1, problems)
    return total


def _budget(schema: dict[str, Any], depth: int) -> int:
    if depth > MAX_DEPTH or not isinstance(schema, dict):
        return 8
    types = _types(schema)
    cost = 0
    if "enum" in schema:
        cost = max(len(str(v)) for v in schema["enum"] or [""]) // _CHARS_PER_TOKEN + 2
    elif "string" in types:
        cost = int(schema.get("maxLength", MAX_STRING_LENGTH)) // _CHARS_PER_TOKEN + 4
    if "array" in types:
        items = schema.get("items")
        per_item = _budget(items, depth + 1) + 1 if isinstance(items, dict) else 8
        cost = max(cost, int(schema.get("maxItems", MAX_ITEMS)) * per_item + 2)
    if "object" in types:
        properties = schema.get("properties") or {}
        if properties:
            size = sum(_budget(sub, depth + 1) + len(key) // _CHARS_PER_TOKEN + 3 for key, sub in properties.items())
        else:
            size = 64  # a free-form object (e.g. tool arguments)
        cost = max(cost, size + 2)
    return max(cost, 4)
