"""Content-addressed blobs named by the SHA-256 of their bytes; equal bytes are stored once.

Small blobs (pages, chunks, answers: up to ``INLINE_LIMIT`` bytes) live in the librarian's SQLite
table ``blobs``, inside the caller's transaction, so thousands of chunks cost no file each. Larger
ones are files ``<dir>/blobs/ab/cdef…``, written to a temporary name, fsynced, renamed into place
and their folder fsynced, so a reader never sees a half-written blob and a blob ``put`` has
returned survives a power cut (the completion record, written later, can rely on it). Deciding when a
blob is unused is the caller's job.
"""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

from provgraph.errors import NO_SPACE_ADVICE, StoreError, out_of_space
from provgraph.layout import replace_durably, sync_dir

__all__ = ["BlobStore", "sha256_hex", "INLINE_LIMIT", "BLOB_TABLE"]

INLINE_LIMIT = 256 * 1024
BLOB_TABLE = "CREATE TABLE IF NOT EXISTS blobs (digest TEXT PRIMARY KEY, data BLOB NOT NULL);"


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in lowercase hex."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Blobs in the ``blobs`` table of ``conn()`` (small) or as files under ``root`` (large)."""

    def __init__(self, root: Path, conn: Callable[[], sqlite3.Connection], *, inline_limit: int = INLINE_LIMIT) -> None:
        self.root = root
        self._conn = conn
        self.inline_limit = inline_limit

    def _inline(self, digest: str) -> bytes | None:
        row = self._conn().execute("SELECT data FROM blobs WHERE digest = ?", (digest,)).fetchone()
        return None if row is None else bytes(row[0])

    def path(self, digest: str) -> Path:
        """Where the blob ``digest`` lives."""
        return self.root / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        """Whether the blob ``digest`` is stored."""
        return self._inline(digest) is not None or self.path(digest).is_file()

    def put(self, data: bytes, digest: str | None = None) -> tuple[str, bool]:
        """Store ``data``; returns its digest and whether a new FILE was written.

        Small blobs go into the table within the caller's transaction (a rollback undoes them).
        """
        digest = digest or sha256_hex(data)
        if len(data) <= self.inline_limit:
            self._conn().execute("INSERT OR IGNORE INTO blobs (digest, data) VALUES (?, ?)", (digest, data))
            return digest, False
        target = self.path(digest)
        if target.is_file():
            return digest, False
        tmp = target.parent / f".tmp-{uuid.uuid4().hex}"
        try:
            self._make_folder(target.parent)
            tmp.write_bytes(data)
            replace_durably(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            advice = f": {NO_SPACE_ADVICE}" if out_of_space(exc) else ""
            raise StoreError(f"librarian: cannot write blob {target}: {exc.strerror or exc}{advice}") from exc
        return digest, True

    def _make_folder(self, folder: Path) -> None:
        """Create ``folder`` (and ``root``) if missing, each new name made durable in its parent."""
        for level in (self.root, folder):
            if not level.is_dir():
                level.mkdir(parents=True, exist_ok=True)
                sync_dir(level.parent)

    def put_many(self, blobs: dict[str, bytes]) -> list[str]:
        """Store many blobs (digest → bytes); returns the digests written as new FILES."""
        small = [(d, b) for d, b in blobs.items() if len(b) <= self.inline_limit]
        self._conn().executemany("INSERT OR IGNORE INTO blobs (digest, data) VALUES (?, ?)", small)
        written: list[str] = []
        try:
            for digest, data in blobs.items():
                if len(data) > self.inline_limit and self.put(data, digest)[1]:
                    written.append(digest)
        except BaseException:
            for digest in written:  # this call's new files: nothing committed uses them
                self.delete(digest)
            raise
        return written

    def get(self, digest: str) -> bytes:
        """The bytes of blob ``digest``; :class:`StoreError` if missing or damaged."""
        inline = self._inline(digest)
        if inline is not None:
            return inline
        target = self.path(digest)
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise StoreError(f"librarian: blob {target} is missing or unreadable ({exc.strerror or exc})") from exc
        if sha256_hex(data) != digest:
            raise StoreError(f"librarian: blob {target} is damaged (its SHA-256 does not match its name)")
        return data

    def damage(self, digest: str) -> str | None:
        """What is wrong with the stored blob ``digest`` (missing, or bytes not matching), or None."""
        if self._inline(digest) is not None:
            return None
        try:
            data = self.path(digest).read_bytes()
        except OSError as exc:
            return f"missing or unreadable ({exc.strerror or exc})"
        return None if sha256_hex(data) == digest else "damaged (its SHA-256 does not match its name)"

    def delete(self, digest: str) -> None:
        """Delete blob ``digest`` if present (and its folder when it becomes empty)."""
        self._conn().execute("DELETE FROM blobs WHERE digest = ?", (digest,))
        target = self.path(digest)
        try:
            target.unlink(missing_ok=True)
            target.parent.rmdir()
        except OSError:
            pass  # folder not empty, or already gone
