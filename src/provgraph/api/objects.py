"""Typed results over the wire: provgraph's result dataclasses as JSON and back, field for field.

The Python clients ask for this form (``?form=objects``) so that ``Client.trace`` gives the very
``GraphRagTrace`` that ``Provgraph.trace`` gives, and ``Client.load`` the same ``LoadResult`` list.
A dataclass is ``{"$type": NAME, "fields": {...}}``; a date ``{"$datetime": ISO}``; a tuple a list.
Only the classes named below are ever built from a message.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from provgraph.errors import InputError
from provgraph.events import Source
from provgraph.explain import model, ranking
from provgraph.extract.base import ChunkInput
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.ingest.pipeline import LoadResult
from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import BlankNode, Iri, Literal, Quad, TripleTerm

__all__ = ["to_objects", "from_objects"]

_CLASSES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (Iri, Literal, BlankNode, TripleTerm, Quad, Source, LlmCall, ChunkInput, ChunkOutcome, LoadResult,
                *(v for m in (model, ranking) for v in vars(m).values() if isinstance(v, type)
                  and dataclasses.is_dataclass(v) and v.__module__ == m.__name__))
}


def to_objects(value: Any) -> Any:
    """JSON-ready form of a result (dataclasses, tuples, dates, plain values)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _CLASSES.get(name) is not type(value):
            raise TypeError(f"{name} is not a wire type")
        return {"$type": name, "fields": {f.name: to_objects(getattr(value, f.name))
                                          for f in dataclasses.fields(value) if f.init}}
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [to_objects(v) for v in value]
    if isinstance(value, dict):
        return {"$map": {str(k): to_objects(v) for k, v in value.items()}}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} has no wire form")


def from_objects(data: Any, *, top: bool = True) -> Any:
    """The result :func:`to_objects` wrote (sequences come back as tuples; a top-level list stays a list)."""
    if isinstance(data, list):
        items = [from_objects(v, top=False) for v in data]
        return items if top else tuple(items)
    if isinstance(data, dict):
        if "$datetime" in data:
            try:
                return datetime.fromisoformat(str(data["$datetime"]))
            except ValueError as exc:
                raise InputError(f"not a date: {exc}") from None
        if isinstance(data.get("$map"), dict):
            return {k: from_objects(v, top=False) for k, v in data["$map"].items()}
        name = data.get("$type")
        cls = _CLASSES.get(name) if isinstance(name, str) else None
        fields = data.get("fields")
        if cls is None or not isinstance(fields, dict):
            raise InputError(f"not a provgraph result: {str(name)[:80]!r} (expected $type and fields)")
        try:
            return cls(**{str(k): from_objects(v, top=False) for k, v in fields.items()})
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"not a valid {name}: {exc}") from None
    return data
