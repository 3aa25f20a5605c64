"""The vector index contract: ids + unit vectors + small JSON payloads, cosine search.

A collection has two indexes, by name: ``entities`` (payload: entity IRI, label, chunk ids) and
``chunks`` (payload: chunk id, document id). An index records the embedding model and dimension
it was created with; using it with another raises :class:`~provgraph.errors.IndexError_`.

``where`` filters are exact matches on payload fields, all of which must hold. When the payload
field is a list, a scalar wanted value matches if the list contains it, and a list of wanted
values matches if the list contains every one of them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Hit", "VectorIndex", "ENTITIES", "CHUNKS", "matches"]

ENTITIES = "entities"
"""Index of entity labels; payload ``{"entity": IRI, "label": str, "chunks": [chunk IRI, …]}``."""

CHUNKS = "chunks"
"""Index of chunk texts; payload ``{"chunk": IRI, "document": IRI}``."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: cosine similarity ``score`` in [-1, 1], higher is closer."""

    id: str
    score: float
    payload: dict[str, Any]


def matches(payload: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Whether ``payload`` satisfies the ``where`` filter (see the module docstring)."""
    if not where:
        return True
    for key, wanted in where.items():
        if key not in payload:
            return False
        have = payload[key]
        if isinstance(have, list):
            if isinstance(wanted, list):
                if not all(w in have for w in wanted):
                    return False
            elif wanted not in have:
                return False
        elif have != wanted:
            return False
    return True


@runtime_checkable
class VectorIndex(Protocol):
    """A persistent vector index in one folder. Single writer; not safe across processes."""

    @property
    def model(self) -> str:
        """The embedding model name recorded at creation."""
        ...

    @property
    def dimension(self) -> int:
        """The vector length recorded at creation."""
        ...

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[dict[str, Any]], *,
               extend: Collection[str] = ()) -> None:
        """Insert or replace (same id) records; atomic and idempotent. Vectors are normalised.

        ``extend`` names payload list fields whose given items are added to a stored record's list
        (items it already holds are skipped, order kept) instead of replacing it; a new record takes
        them as given. Raises IndexError_ on a dimension mismatch, InputError on mismatched lengths.
        """
        ...

    def search(self, vector: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None) -> list[Hit]:
        """The ``k`` records most similar to ``vector`` (cosine), best first, filtered by ``where``."""
        ...

    def get(self, ids: Sequence[str], *, fields: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
        """Payloads (copies) of the ``ids`` present, by id, with only the ``fields`` named if given; absent
        ids are left out."""
        ...

    def delete(self, ids: Sequence[str]) -> int:
        """Remove records by id (unknown ids ignored); returns how many went. Atomic, idempotent."""
        ...

    def delete_where(self, where: Mapping[str, Any]) -> int:
        """Remove every record whose payload matches ``where``; returns how many went."""
        ...

    def count(self) -> int:
        """Number of records."""
        ...

    def ids(self) -> list[str]:
        """Every record's id (for consistency checks)."""
        ...

    def flush(self) -> None:
        """Persist derived structures (the ANN graph); records are durable after each write."""
        ...

    def close(self) -> None:
        """Flush and release the files; idempotent."""
        ...
