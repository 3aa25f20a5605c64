"""Document contents kept outside the librarian's database (``PROVGRAPH_BLOB_URL``): a small protocol, one backend each.

Keys are content addresses (the SHA-256 of the bytes), so a put of the same bytes twice is harmless and a
get returns exactly what was put. The librarian puts a document's bytes before its database transaction and
deletes them once no record references them; ``runtime.py`` picks the backend (``librarian/s3_blobs.py``).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["ExternalBlobs"]


class ExternalBlobs(Protocol):
    """Bytes by content address, in a store of their own."""

    url: str

    def put(self, digest: str, data: bytes) -> None:
        """Store ``data`` under ``digest`` (its SHA-256, hex); durable when this returns."""
        ...

    def get(self, digest: str) -> bytes:
        """The bytes under ``digest``; NotFound when none are."""
        ...

    def delete(self, digest: str) -> None:
        """Forget ``digest``'s bytes (none: nothing to do)."""
        ...

    def close(self) -> None:
        """Release the client; idempotent."""
        ...
