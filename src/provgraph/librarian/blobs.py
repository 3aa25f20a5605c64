"""Content-addressed blob files: ``<dir>/blobs/ab/cdef…`` named by the SHA-256 of the bytes.

Equal bytes are stored once. Files are written to a temporary name and renamed into place, so
a reader never sees a half-written blob. Deciding when a blob is unused is the caller's job.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

from provgraph.errors import StoreError

__all__ = ["BlobStore", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in lowercase hex."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Blob files under ``root`` (created when missing)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        """Where the blob ``digest`` lives."""
        return self.root / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        """Whether the blob ``digest`` is stored."""
        return self.path(digest).is_file()

    def put(self, data: bytes, digest: str | None = None) -> tuple[str, bool]:
        """Store ``data``; returns its digest and whether a new file was written."""
        digest = digest or sha256_hex(data)
        target = self.path(digest)
        if target.is_file():
            return digest, False
        tmp = target.parent / f".tmp-{uuid.uuid4().hex}"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"librarian: cannot write blob {target}: {exc.strerror or exc}") from exc
        return digest, True

    def get(self, digest: str) -> bytes:
        """The bytes of blob ``digest``; :class:`StoreError` if missing or damaged."""
        target = self.path(digest)
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise StoreError(f"librarian: blob {target} is missing or unreadable ({exc.strerror or exc})") from exc
        if sha256_hex(data) != digest:
            raise StoreError(f"librarian: blob {target} is damaged (its SHA-256 does not match its name)")
        return data

    def delete(self, digest: str) -> None:
        """Delete blob ``digest`` if present (and its folder when it becomes empty)."""
        target = self.path(digest)
        try:
            target.unlink(missing_ok=True)
            target.parent.rmdir()
        except OSError:
            pass  # folder not empty, or already gone
