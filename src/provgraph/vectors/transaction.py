"""One write transaction on a vector index's SQLite file, SQLite's errors raised as the index's own.

    with Transaction(db, folder) as tx:
        tx.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", ("2",))
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType

from provgraph.errors import IndexError_

__all__ = ["Transaction"]


class Transaction:
    """``with`` block running one SQLite transaction; SQLite errors become IndexError_."""

    def __init__(self, db: sqlite3.Connection, folder: Path) -> None:
        self._db = db
        self._folder = folder

    def __enter__(self) -> sqlite3.Connection:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise IndexError_(f"vector index {self._folder}: cannot write: {exc}") from exc
        return self._db

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
                return
            except sqlite3.Error as error:
                self._rollback()
                raise IndexError_(f"vector index {self._folder}: write failed: {error}") from None
        self._rollback()
        if isinstance(exc, sqlite3.Error):
            raise IndexError_(f"vector index {self._folder}: write failed: {exc}") from None

    def _rollback(self) -> None:
        """Roll back if SQLite has not already done so (it does on a full disk)."""
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the original failure is the one to report
