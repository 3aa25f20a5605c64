"""The librarian's ``records`` table: its schema and the mapping between rows and records."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from provgraph.librarian import completions
from provgraph.errors import InputError
from provgraph.librarian.base import PARENT_KINDS, NewRecord, Record
from provgraph.librarian.blobs import BLOB_TABLE, sha256_hex

__all__ = ["SCHEMA_VERSION", "SCHEMA", "COLUMNS", "UPSERT", "iso", "to_record", "Prepared", "check_batch"]
# the librarian's and the lexical index's files are read through a memory map this large (SQLite's mmap_size):
# a page read is a copy-free look into the OS's page cache, not a read() into SQLite's 2 MB cache
MMAP_BYTES = 1 << 28

SCHEMA_VERSION = 2
SCHEMA = completions.SCHEMA + """
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    parent_id TEXT REFERENCES records(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    title TEXT,
    mime_type TEXT NOT NULL,
    metadata TEXT NOT NULL,
    tags TEXT NOT NULL,
    size INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    created TEXT NOT NULL,
    number INTEGER,
    char_offset INTEGER,
    char_length INTEGER
);
CREATE INDEX IF NOT EXISTS records_parent ON records(parent_id, number);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind, created);
CREATE INDEX IF NOT EXISTS records_content ON records(content_hash);
CREATE INDEX IF NOT EXISTS records_text ON records(text_hash);
""" + BLOB_TABLE
COLUMNS = (
    "id, kind, parent_id, title, mime_type, metadata, tags, size, content_hash, text_hash, created,"
    " number, char_offset, char_length"
)
UPSERT = (
    f"INSERT INTO records ({COLUMNS}) VALUES ({', '.join('?' * 14)}) ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS.replace(" ", "").split(",")[1:])
)
def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def to_record(row: sqlite3.Row) -> Record:
    return Record(
        id=row["id"],
        kind=row["kind"],
        parent_id=row["parent_id"],
        title=row["title"],
        mime_type=row["mime_type"],
        metadata=json.loads(row["metadata"]),
        tags=tuple(json.loads(row["tags"])),
        size=row["size"],
        content_hash=row["content_hash"],
        created=datetime.fromisoformat(row["created"]),
        number=row["number"],
        offset=row["char_offset"],
        length=row["char_length"],
    )


class Prepared:
    """One new record with its encoded text and digests."""

    def __init__(self, rec: NewRecord) -> None:
        self.rec = rec
        self.text = rec.text if rec.text is not None else ""
        text_bytes = self.text.encode("utf-8")
        self.content_hash = sha256_hex(rec.data)
        self.text_bytes = None if text_bytes == rec.data else text_bytes
        self.text_hash = self.content_hash if self.text_bytes is None else sha256_hex(text_bytes)

    def row(self, created: str) -> tuple[Any, ...]:
        r = self.rec
        meta = json.dumps(dict(sorted(r.metadata.items())), ensure_ascii=False)
        tags = json.dumps(list(r.tags), ensure_ascii=False)
        return (r.id, r.kind, r.parent_id, r.title, r.mime_type, meta, tags, len(r.data), self.content_hash,
                self.text_hash, created, r.number, r.offset, r.length)  # fmt: skip


def check_batch(batch: Sequence[Prepared], stored: Callable[[str], tuple[str, str] | None]) -> None:
    """No id twice, parents exist with the right kind, and each part's text is its parent's slice.

    ``stored(id)`` gives a stored record's kind and text (None when absent), for parents not in the batch.
    """
    by_id: dict[str, Prepared] = {}
    for prep in batch:
        if prep.rec.id in by_id:
            raise InputError(f"record {prep.rec.id} appears twice in one add()")
        by_id[prep.rec.id] = prep
    parent_texts: dict[str, tuple[str, str] | None] = {}
    for prep in batch:
        rec = prep.rec
        if rec.parent_id is None:
            continue
        parent = by_id.get(rec.parent_id)
        kind: str
        if parent is not None:
            kind, text = parent.rec.kind, parent.text
        else:
            if rec.parent_id not in parent_texts:
                parent_texts[rec.parent_id] = stored(rec.parent_id)
            found = parent_texts[rec.parent_id]
            if found is None:
                raise InputError(f"record {rec.id}: parent {rec.parent_id} does not exist")
            kind, text = found
        if kind not in PARENT_KINDS[rec.kind]:
            raise InputError(f"record {rec.id}: a {rec.kind} cannot be under a {kind} ({rec.parent_id})")
        assert rec.offset is not None and rec.length is not None
        if text[rec.offset : rec.offset + rec.length] != prep.text:
            raise InputError(
                f"record {rec.id}: its text is not the text of {rec.parent_id} at offset {rec.offset},"
                f" length {rec.length}"
            )
