"""The librarian: keeps every document, page, section, chunk and answer with its text.

Records form a tree (document → page or section → chunk; answers stand alone), mirroring the
provenance of SPEC §4.1. Each record has raw content bytes (for a document, the file as
loaded) and a text (for a document, its decoded text; for parts and chunks, their slice of
the parent's text). Part offsets count characters of the parent's text, so
``text(parent)[offset:offset + length] == text(part)``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol, get_args

from provgraph.errors import InputError

__all__ = ["RecordKind", "KINDS", "PARENT_KINDS", "NewRecord", "Record", "Librarian"]

RecordKind = Literal["document", "page", "section", "chunk", "answer"]
KINDS: frozenset[str] = frozenset(get_args(RecordKind))
# Which kinds each kind may hang under; documents and answers are roots.
PARENT_KINDS: dict[str, frozenset[str]] = {
    "document": frozenset(),
    "answer": frozenset(),
    "page": frozenset({"document"}),
    "section": frozenset({"document"}),
    "chunk": frozenset({"document", "page", "section"}),
}


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A record to add.

    Attributes:
        id: the record's IRI (as a string).
        kind: ``document``, ``page``, ``section``, ``chunk`` or ``answer``.
        content: the raw bytes (a ``str`` is stored as UTF-8).
        text: the record's text; ``None`` means ``content`` decoded as UTF-8.
        parent_id: the parent record; ``None`` exactly for documents and answers.
        number: page number, section number or chunk index (required for parts and chunks).
        offset, length: the position in the parent's text (required for parts and chunks).
        created: when it was made; ``None`` means now (UTC).
    """

    id: str
    kind: RecordKind
    content: bytes | str
    text: str | None = None
    parent_id: str | None = None
    title: str | None = None
    mime_type: str = "text/plain"
    metadata: Mapping[str, str] = field(default_factory=dict)
    tags: Sequence[str] = ()
    number: int | None = None
    offset: int | None = None
    length: int | None = None
    created: datetime | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InputError("a librarian record needs a non-empty id")
        if self.kind not in KINDS:
            raise InputError(f"record {self.id}: unknown kind {self.kind!r}; use one of {', '.join(sorted(KINDS))}")
        if isinstance(self.content, str):
            object.__setattr__(self, "content", self.content.encode("utf-8"))
        if self.text is None:
            try:
                object.__setattr__(self, "text", self.content.decode("utf-8"))  # type: ignore[union-attr]
            except UnicodeDecodeError as exc:
                raise InputError(f"record {self.id}: content is not UTF-8 text; pass its text explicitly") from exc
        object.__setattr__(self, "metadata", dict(self.metadata))
        object.__setattr__(self, "tags", tuple(self.tags))
        if any(not isinstance(k, str) or not isinstance(v, str) for k, v in self.metadata.items()):
            raise InputError(f"record {self.id}: metadata keys and values must be strings")
        if any(not isinstance(t, str) for t in self.tags):
            raise InputError(f"record {self.id}: tags must be strings")
        if self.created is not None and self.created.tzinfo is None:
            raise InputError(f"record {self.id}: created must be timezone-aware (UTC)")
        self._check_tree_fields()

    def _check_tree_fields(self) -> None:
        rooted = not PARENT_KINDS[self.kind]
        if rooted and self.parent_id is not None:
            raise InputError(f"record {self.id}: a {self.kind} cannot have a parent")
        if not rooted:
            if not self.parent_id:
                raise InputError(f"record {self.id}: a {self.kind} needs a parent_id")
            if self.number is None or self.offset is None or self.length is None:
                raise InputError(f"record {self.id}: a {self.kind} needs number, offset and length")
        for name in ("number", "offset", "length"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise InputError(f"record {self.id}: {name} must be an integer >= 0, got {value!r}")

    @property
    def data(self) -> bytes:
        """The content as bytes."""
        assert isinstance(self.content, bytes)
        return self.content


@dataclass(frozen=True, slots=True)
class Record:
    """A stored record (its bytes and text are fetched separately).

    Attributes:
        size: the content's length in bytes.
        content_hash: SHA-256 (hex) of the content bytes.
        created: when the record was first stored as it is now (UTC).
    """

    id: str
    kind: RecordKind
    parent_id: str | None
    title: str | None
    mime_type: str
    metadata: dict[str, str]
    tags: tuple[str, ...]
    size: int
    content_hash: str
    created: datetime
    number: int | None = None
    offset: int | None = None
    length: int | None = None


class Librarian(Protocol):
    """Stores records with their bytes and text; one librarian per collection.

    Every method raises :class:`~provgraph.errors.StoreError` when the storage itself fails.
    ``generation`` grows with every write this process makes (derived indexes resync when it moved);
    ``content_generation`` too, except for writes that only add answer records.
    """

    @property
    def generation(self) -> int: ...

    @property
    def content_generation(self) -> int: ...

    def add(self, records: Sequence[NewRecord]) -> None:
        """Add or replace ``records``, all or nothing; idempotent for identical records.

        A parent may be in the same batch or already stored. Replacing a record whose content
        or text changed removes its stored descendants that the batch does not re-add (they
        were cut from the old text). Raises :class:`~provgraph.errors.InputError` for a
        missing parent, a wrong parent kind, a duplicate id in the batch, or a part whose text
        is not its parent's text at its offset.
        """
        ...

    def get(self, id: str) -> Record:
        """The record ``id``; :class:`~provgraph.errors.NotFound` if absent."""
        ...

    def content(self, id: str) -> bytes:
        """The raw bytes of record ``id``; :class:`~provgraph.errors.NotFound` if absent."""
        ...

    def text(self, id: str) -> str:
        """The text of record ``id``; :class:`~provgraph.errors.NotFound` if absent."""
        ...

    def texts(self, ids: Iterable[str], *, missing_ok: bool = False) -> dict[str, str]:
        """The texts of many records in one call; :class:`~provgraph.errors.NotFound` naming
        the absent ids unless ``missing_ok`` (then they are left out)."""
        ...

    def list(self, kind: RecordKind | None = None, parent: str | None = None) -> builtins.list[Record]:
        """Records, optionally of one ``kind`` and/or under one ``parent``; ordered by number
        under a parent, else oldest first. :class:`~provgraph.errors.InputError` for an unknown kind."""
        ...

    def children(self, id: str) -> builtins.list[Record]:
        """The direct children of ``id``, ordered by number; :class:`~provgraph.errors.NotFound` if absent."""
        ...

    def remove(self, id: str) -> int:
        """Remove ``id`` and all its descendants, and blobs no longer used; returns how many
        records went. Atomic. :class:`~provgraph.errors.NotFound` if absent."""
        ...

    def exists(self, id: str) -> bool:
        """Whether record ``id`` is stored."""
        ...

    def mark_complete(self, ids: Sequence[str]) -> None:
        """Write the completion records of documents ``ids``: the LAST write of loading them,
        after their quads, records and vectors are durable. Removing a document drops its record."""
        ...

    def clear_complete(self, id: str) -> None:
        """Drop document ``id``'s completion record (the FIRST write of changing it)."""
        ...

    def is_complete(self, id: str) -> bool:
        """Whether document ``id`` has a completion record for its current content."""
        ...

    def complete_documents(self) -> set[str]:
        """Every document with a completion record for its current content."""
        ...

    def damaged_blobs(self) -> builtins.list[tuple[str, str, Path, str]]:
        """Records whose bytes or text are missing or damaged: (id, kind, where, what is wrong)."""
        ...

    def close(self) -> None:
        """Release the librarian's resources; idempotent."""
        ...
