"""Where a collection's data lives on disk (a leaf module: every layer may use it).

    {home}/users/{user}/collections/{collection}/
        store/        pyoxigraph (RocksDB) quad store
        librarian/    SQLite metadata + content-addressed bytes
        vectors/      vector indexes (entities, chunks)

User and collection names are restricted to ``[A-Za-z0-9_.-]`` (1–64 characters, not starting
with a dot), so a name can never walk out of its folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from provgraph.errors import InputError

__all__ = ["CollectionRef", "check_name"]

_NAME = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}$")


def check_name(kind: str, name: str) -> str:
    """Return ``name`` if it is a valid user or collection name, else raise :class:`InputError`."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputError(
            f"invalid {kind} name {name!r}: use 1-64 letters, digits, '_', '-' or '.', not starting with '.'"
        )
    return name


@dataclass(frozen=True, slots=True)
class CollectionRef:
    """One ``(user, collection)`` under a data directory: the unit of isolation."""

    home: Path
    user: str
    collection: str

    def __post_init__(self) -> None:
        check_name("user", self.user)
        check_name("collection", self.collection)

    @property
    def root(self) -> Path:
        """The collection's folder."""
        return self.home / "users" / self.user / "collections" / self.collection

    @property
    def store_dir(self) -> Path:
        """The quad store's folder."""
        return self.root / "store"

    @property
    def librarian_dir(self) -> Path:
        """The librarian's folder."""
        return self.root / "librarian"

    @property
    def vectors_dir(self) -> Path:
        """The vector indexes' folder."""
        return self.root / "vectors"

    def exists(self) -> bool:
        """Whether the collection has been created."""
        return self.root.is_dir()

    def __str__(self) -> str:
        return f"{self.user}/{self.collection}"
