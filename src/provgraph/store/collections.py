"""Collections: list, create, drop. A collection belongs to a user; nothing crosses collections."""

from __future__ import annotations

import shutil
from contextlib import suppress
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path

from provgraph.errors import InputError, NotFound
from provgraph.layout import MARKER_FORMAT, CollectionRef, check_name, note_part, verify_part, write_marker
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["CollectionInfo", "list_collections", "create_collection", "drop_collection", "open_store"]


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    """A collection as listed."""

    user: str
    collection: str
    path: Path


def list_collections(home: Path, user: str | None = None) -> list[CollectionInfo]:
    """Every collection under ``home`` (of one user when given), sorted by user then name."""
    users_dir = home / "users"
    if not users_dir.is_dir():
        return []
    users = [check_name("user", user)] if user else sorted(p.name for p in users_dir.iterdir() if p.is_dir())
    found: list[CollectionInfo] = []
    for u in users:
        cdir = users_dir / u / "collections"
        if cdir.is_dir():
            found += [CollectionInfo(u, c.name, c) for c in sorted(cdir.iterdir()) if c.is_dir() and not c.name.startswith(".")]
    return found


def create_collection(ref: CollectionRef, *, exist_ok: bool = True) -> bool:
    """Create the collection's folders; returns False when it already existed."""
    if ref.exists():
        if not exist_ok:
            raise InputError(f"collection {ref} already exists")
        return False
    for d in (ref.store_dir, ref.librarian_dir, ref.vectors_dir):
        d.mkdir(parents=True, exist_ok=True)
    write_marker(ref, {"format": MARKER_FORMAT, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       "parts": []})
    return True


def drop_collection(ref: CollectionRef) -> None:
    """Delete the collection and everything in it (quads, documents, vectors, traces)."""
    if not ref.exists():
        raise NotFound(f"collection {ref} does not exist")
    shutil.rmtree(ref.root)


def open_store(ref: CollectionRef, *, create: bool = True) -> OxigraphStore:
    """Open the collection's quad store (creating the collection if asked)."""
    if not ref.exists():
        if not create:
            raise NotFound(f"collection {ref} does not exist (create it with: provgraph collections create)")
        create_collection(ref)
    existed = verify_part(ref, "store")  # a store that vanished is an error, never recreated over
    store = OxigraphStore(ref.store_dir, name=str(ref))
    if not existed:
        try:
            store.flush()
            note_part(ref, "store")
        except BaseException:
            with suppress(Exception):  # release the lock now, not when the failed frames are collected
                store.close()
            raise
    return store
