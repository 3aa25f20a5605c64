"""An extraction job: one loaded document of one collection whose chunks a worker extracts, embeds and commits.

Its id is derived from the collection, the document and its content, so enqueueing the same load twice
names the same job (the queue drops the duplicate, the jobs table keeps one row).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from provgraph.errors import InputError

__all__ = ["Job", "job_id"]


def job_id(user: str, collection: str, document: str, content_hash: str) -> str:
    """The job's idempotency key."""
    return hashlib.sha256(f"{user}\n{collection}\n{document}\n{content_hash}".encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Job:
    """Extract the chunks of ``document`` in ``user``/``collection`` with ``extractors`` (None: the worker's)."""

    id: str
    user: str
    collection: str
    document: str
    extractors: str | None = None

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Job:
        try:
            fields = json.loads(data)
            return cls(**{k: fields[k] for k in ("id", "user", "collection", "document")},
                       extractors=fields.get("extractors"))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not an extraction job: {data[:80]!r} ({exc})") from exc
