"""A small JSON Schema validator for the subset provgraph's prompts use.

Keywords: ``type`` (object, array, string, number, integer, boolean, null, or a list of them),
``properties``, ``required``, ``additionalProperties`` (bool or schema), ``items``, ``enum``,
``maxItems``, ``minItems``, ``maxLength``, ``minLength``. Others are ignored, so a schema that
uses more still validates the part we understand.

>>> schema_errors({"id": "a1"}, {"type": "object", "required": ["id", "reason"]})
["$: missing required property 'reason'"]
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["schema_errors", "schema_instruction", "with_schema_instruction"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_errors(data: Any, schema: dict[str, Any], *, limit: int = 20) -> list[str]:
    """Every way ``data`` breaks ``schema`` (at most ``limit``), each as ``"<path>: <problem>"``."""
    errors: list[str] = []
    _check(data, schema, "$", errors, limit)
    return errors


def schema_instruction(schema: dict[str, Any]) -> str:
    """Prompt text asking for JSON that matches ``schema`` (for models without structured output)."""
    return "Reply with one JSON value that matches this JSON schema, and nothing else:\n" + json.dumps(
        schema, ensure_ascii=False, separators=(",", ":")
    )


def with_schema_instruction(messages: list[dict[str, str]], schema: dict[str, Any]) -> list[dict[str, str]]:
    """Chat messages (request dicts) with :func:`schema_instruction` added to the system message (or a new one)."""
    hint = schema_instruction(schema)
    out = [dict(m) for m in messages]
    if out and out[0]["role"] == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{hint}"
    else:
        out.insert(0, {"role": "system", "content": hint})
    return out


def _type_ok(value: Any, name: str) -> bool:
    if name not in _TYPES:
        return True
    if isinstance(value, bool) and name in ("number", "integer"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _check(value: Any, schema: dict[str, Any], path: str, errors: list[str], limit: int) -> None:
    if len(errors) >= limit or not isinstance(schema, dict):
        return
    wanted = schema.get("type")
    if wanted is not None:
        names = wanted if isinstance(wanted, list) else [wanted]
        if not any(_type_ok(value, n) for n in names):
            errors.append(f"{path}: expected {' or '.join(names)}, got {_kind(value)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: shorter than {schema['minLength']} characters")
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _check(item, items, f"{path}[{i}]", errors, limit)
    elif isinstance(value, dict):
        _check_object(value, schema, path, errors, limit)


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str, errors: list[str], limit: int) -> None:
    properties: dict[str, Any] = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in value:
            errors.append(f"{path}: missing required property {key!r}")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            _check(item, properties[key], f"{path}.{key}", errors, limit)
        elif extra is False:
            errors.append(f"{path}: unexpected property {key!r}")
        elif isinstance(extra, dict):
            _check(item, extra, f"{path}.{key}", errors, limit)


def _kind(value: Any) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _type_ok(value, name):
            return name
    return type(value).__name__
