"""Postings of a vector index's payloads: ``field -> value -> keys``, for filtered searches.

A value held by one record keeps that key bare, not in a one-key set: at scale most values
(chunk ids of an entity's list) name one record, and sets are what the garbage collector walks.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from provgraph.vectors.payloads import postable

__all__ = ["Postings"]


class Postings:
    """Which keys hold each scalar payload value (and each hashable list item) of each field."""

    def __init__(self) -> None:
        self._fields: dict[str, dict[Hashable, int | set[int]]] = {}

    def keys(self, field: str, value: Hashable) -> set[int]:
        """The keys posted under ``field = value`` (do not change the set returned)."""
        keys = self._fields.get(field, {}).get(value, set())
        return {keys} if isinstance(keys, int) else keys

    def holds(self, field: str, value: Hashable, key: int) -> bool:
        """Whether ``key`` is posted under ``field = value``."""
        keys = self._fields.get(field, {}).get(value)
        return keys == key if isinstance(keys, int) else keys is not None and key in keys

    def post(self, key: int, payload: Mapping[str, Any], *, remove: bool = False) -> None:
        """Post (or, with ``remove``, unpost) every postable value of ``payload`` under ``key``."""
        self._pairs(key, postable(payload), remove=remove)

    def repost(self, key: int, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Post what ``new`` adds to ``old`` and unpost what it drops, field by field."""
        for field in old.keys() | new.keys():
            before, after = old.get(field), new.get(field)
            if before == after:
                continue
            if isinstance(before, list) and isinstance(after, list) and after[: len(before)] == before:
                gone: set[tuple[str, Hashable]] = set()  # the list grew at its end: post the new items only
                added = set(postable({field: after[len(before):]}))
            else:
                gone = set(postable({field: before})) if field in old else set()
                added = set(postable({field: after})) if field in new else set()
            self._pairs(key, gone - added, remove=True)
            self._pairs(key, added - gone)

    def _pairs(self, key: int, pairs: Iterable[tuple[str, Hashable]], *, remove: bool = False) -> None:
        for field, value in pairs:
            values = self._fields.setdefault(field, {})
            keys = values.get(value)
            if remove:
                if isinstance(keys, int):
                    if keys == key:
                        del values[value]
                elif keys is not None:
                    keys.discard(key)
                    if len(keys) == 1:
                        values[value] = next(iter(keys))
                    elif not keys:
                        del values[value]
            elif keys is None:
                values[value] = key
            elif isinstance(keys, int):
                if keys != key:
                    values[value] = {keys, key}
            else:
                keys.add(key)
