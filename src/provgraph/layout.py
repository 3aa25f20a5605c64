"""Where a collection's data lives on disk (a leaf module: every layer may use it).

    {home}/users/{user}/collections/{collection}/
        store/        pyoxigraph (RocksDB) quad store
        librarian/    SQLite metadata + content-addressed bytes
        vectors/      vector indexes (entities, chunks)
        collection.json   the marker: format version and which parts have been created

The marker tells a collection that was never created (no folder) from one whose files vanished:
a part listed in it must be there and look like what it is, checked cheaply on every open
(:func:`verify_part`); a part that is missing or damaged is an error, never recreated over.

User and collection names are restricted to ``[A-Za-z0-9_.-]`` (1–64 characters, not starting
with a dot), so a name can never walk out of its folder.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from provgraph.errors import IndexError_, InputError, StoreError

__all__ = ["CollectionRef", "check_name", "MARKER", "MARKER_FORMAT", "read_marker", "write_marker", "note_part", "forget_part",
           "set_aside_index", "verify_part", "part_files", "replace_durably", "sync_dir"]

MARKER = "collection.json"
MARKER_FORMAT = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"

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


def part_files(ref: CollectionRef, part: str) -> Path:
    """The file whose presence shows a part exists: ``store``, ``librarian`` or ``vectors/NAME``."""
    if part == "store":
        return ref.store_dir / "CURRENT"
    if part == "librarian":
        return ref.librarian_dir / "librarian.sqlite3"
    if part.startswith("vectors/"):
        return ref.vectors_dir / part.split("/", 1)[1] / "records.sqlite"
    raise InputError(f"unknown collection part {part!r}")


def read_marker(ref: CollectionRef) -> dict[str, object]:
    """The collection's marker; a collection made before markers is adopted (its existing parts listed)."""
    path = ref.root / MARKER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
            raise ValueError("not a collection marker")
        return data
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        raise StoreError(f"collection {ref}: the marker {path} is damaged ({exc}): restore a backup") from exc
    parts = [p for p in ("store", "librarian") if _has_files(part_files(ref, p).parent)]
    if ref.vectors_dir.is_dir():
        parts += [f"vectors/{d.name}" for d in sorted(ref.vectors_dir.iterdir()) if _has_files(d)]
    data = {"format": MARKER_FORMAT, "created": _now(), "parts": parts}
    write_marker(ref, data)
    return data


def write_marker(ref: CollectionRef, data: dict[str, object]) -> None:
    """Replace the marker atomically."""
    path = ref.root / MARKER
    tmp = path.with_name(f".{MARKER}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    replace_durably(tmp, path)


def sync_dir(folder: Path) -> None:
    """fsync a folder, so that names created, renamed or removed in it survive a power cut."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(tmp: Path, target: Path) -> None:
    """Make the written file ``tmp`` durable (fsync), rename it to ``target``, fsync the folder.

    A reader sees the old file or the whole new one, and after a power cut the new one is there
    whole once this has returned.
    """
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    sync_dir(target.parent)


def note_part(ref: CollectionRef, part: str) -> None:
    """Record that ``part`` now exists (after it was created and opened)."""
    data = read_marker(ref)
    parts = list(data["parts"])  # type: ignore[call-overload]
    if part not in parts:
        data["parts"] = sorted([*parts, part])
        write_marker(ref, data)


def forget_part(ref: CollectionRef, part: str) -> None:
    """Record that ``part`` is gone on purpose (moved aside, to be rebuilt)."""
    data = read_marker(ref)
    data["parts"] = [p for p in data["parts"] if p != part]  # type: ignore[attr-defined]
    write_marker(ref, data)


def set_aside_index(ref: CollectionRef, name: str) -> Path | None:
    """Move a damaged or missing index out of the way (kept, never deleted) so it is rebuilt empty."""
    folder = ref.vectors_dir / name
    forget_part(ref, f"vectors/{name}")
    if not folder.exists():
        return None
    aside = folder.with_name(f"{name}.damaged-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}")
    folder.rename(aside)
    return aside


def verify_part(ref: CollectionRef, part: str) -> bool:
    """Whether ``part`` exists (True) or was never created (False); raises when it vanished or is damaged."""
    if part not in read_marker(ref)["parts"]:  # type: ignore[operator]
        return False
    path = part_files(ref, part)
    vectors = part.startswith("vectors/")
    fix = ("run: provgraph check --repair -C {c} (it rebuilds vectors from the store and the librarian)"
           if vectors else "restore a backup (provgraph restore FILE -C {c}); nothing was changed").format(
               c=ref.collection)
    error = IndexError_ if vectors else StoreError
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        raise error(f"collection {ref}: {path} is missing: {fix}") from None
    if part == "store" and size == 0 or part != "store" and head != _SQLITE_MAGIC:
        raise error(f"collection {ref}: {path} is damaged (not a {'RocksDB' if part == 'store' else 'SQLite'}"
                    f" file): {fix}")
    return True


def _has_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
