"""Payload helpers of the vector records: copies, postable values, appended list items, JSON text."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping
from typing import Any

from provgraph.errors import InputError

__all__ = ["copy_payload", "is_flat", "copy_flat", "postable", "appended", "extended", "list_items", "dump"]


def copy_payload(value: Any) -> Any:
    """A deep copy of JSON-shaped data (callers never share the index's own lists)."""
    if isinstance(value, dict):
        return {k: copy_payload(v) for k, v in value.items()}
    if isinstance(value, list):
        if set(map(type, value)) <= _SCALARS:  # the common case (a list of ids), copied in C
            return list(value)
        return [copy_payload(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


_SCALAR_TYPES = (str, int, float, bool, type(None))
_SCALARS = set(_SCALAR_TYPES)


def is_flat(payload: Mapping[str, Any]) -> bool:
    """Whether every value is a scalar or a list of scalars: :func:`copy_flat` then copies it."""
    return all(type(v) in _SCALARS or (type(v) is list and set(map(type, v)) <= _SCALARS) for v in payload.values())


def copy_flat(payload: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`copy_payload` of a payload :func:`is_flat` says is flat, without looking inside its lists."""
    return {k: v.copy() if type(v) is list else v for k, v in payload.items()}


def postable(payload: Mapping[str, Any]) -> Iterator[tuple[str, Hashable]]:
    """``(field, value)`` for each scalar value and each hashable list item of ``payload``."""
    for field, value in payload.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, Hashable):
                yield field, item


def appended(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[Any]] | None:
    """The items ``new`` appends to ``old``'s list fields, by field; None unless that is all it changes."""
    if old.keys() != new.keys():
        return None
    tail: dict[str, list[Any]] = {}
    for field, after in new.items():
        before = old[field]
        if type(before) is not type(after):
            return None
        if isinstance(after, list):
            if len(after) < len(before) or after[: len(before)] != before:
                return None
            if len(after) > len(before):
                tail[field] = after[len(before):]
        elif before != after:
            return None
    return tail


def extended(stored: Mapping[str, Any], given: Mapping[str, Any], extend: Collection[str],
             holds: Callable[[str, Any], bool]) -> tuple[dict[str, Any], dict[str, list[Any]] | None]:
    """The whole payload ``given`` makes of ``stored`` when its ``extend`` list fields add to the stored lists
    (items already held are skipped, order kept), and the items they add by field when that is all it
    changes (else None). ``holds(field, item)`` says whether the stored list holds a scalar item."""
    whole = dict(given)
    added: dict[str, list[Any]] = {}
    grown: set[str] = set()
    for field in extend:
        items, held = given.get(field), stored.get(field)
        if not isinstance(items, list) or not isinstance(held, list):
            continue  # not a list on both sides: ``given`` replaces it, as without ``extend``
        seen: set[Any] = set()
        fresh = []
        for item in items:
            if isinstance(item, _SCALAR_TYPES):  # answered in O(1), not by scanning the list
                if item in seen or holds(field, item):
                    continue
                seen.add(item)
            elif item in held or item in fresh:
                continue
            fresh.append(item)
        whole[field] = held + fresh
        grown.add(field)
        if fresh:
            added[field] = fresh
    same = stored.keys() == whole.keys() and all(whole[f] == stored[f] for f in whole if f not in grown)
    return whole, added if same else None


def list_items(payload: Mapping[str, Any]) -> int:
    """How many items the payload's list fields hold."""
    return sum(len(v) for v in payload.values() if isinstance(v, list))


def dump(payload: Any, record_id: str) -> str:
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InputError(f"payload of {record_id!r} is not JSON: {exc}") from exc
