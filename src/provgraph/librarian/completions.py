"""Completion records: which documents are loaded in every store (see docs/integrity.md).

A row of ``completions`` is written LAST when a document is loaded (after its quads, records and
vectors are durable) and dropped FIRST when it changes; deleting the document's record drops it too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

__all__ = ["SCHEMA", "ADOPT", "mark", "clear", "complete"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    document TEXT PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
    content_hash TEXT NOT NULL,
    completed TEXT NOT NULL
);"""

ADOPT = "INSERT OR IGNORE INTO completions SELECT id, content_hash, created FROM records WHERE kind = 'document'"
"""Run once when a librarian from before completion records is opened: its documents were complete."""

_CURRENT = ("SELECT c.document FROM completions c JOIN records r ON r.id = c.document"
            " WHERE c.content_hash = r.content_hash")
_BATCH = 500


def mark(db: sqlite3.Connection, ids: Sequence[str], now: str) -> None:
    """Record documents ``ids`` as complete for their current content (inside a write transaction)."""
    for i in range(0, len(ids), _BATCH):
        part = list(ids[i : i + _BATCH])
        db.execute("INSERT OR REPLACE INTO completions SELECT id, content_hash, ? FROM records"
                   f" WHERE kind = 'document' AND id IN ({', '.join('?' * len(part))})", [now, *part])


def clear(db: sqlite3.Connection, id: str) -> None:  # noqa: A002 - the librarian's name for a record id
    """Drop document ``id``'s completion record."""
    db.execute("DELETE FROM completions WHERE document = ?", (id,))


def complete(db: sqlite3.Connection, id: str | None = None) -> set[str]:  # noqa: A002
    """The documents (or just ``id``) with a completion record for their current content."""
    if id is None:
        return {r[0] for r in db.execute(_CURRENT)}
    return {r[0] for r in db.execute(_CURRENT + " AND c.document = ?", (id,))}
