"""Low: a full disk is advice to free space, never to "restore a backup" (which would not help, and
needs space too): the store that cannot open, a vector index that cannot be read, a librarian write,
a librarian that cannot open, and a large text written as a file of its own."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pyoxigraph as ox
import pytest

from provgraph.errors import IndexError_, StoreError
from provgraph.librarian import sqlite as sqlite_librarian
from provgraph.librarian.base import NewRecord
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors import records

FREE = "the disk is full: free some space, then run the command again"


def test_a_store_that_cannot_open_on_a_full_disk_says_free_space(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def full(path: str) -> ox.Store:
        raise OSError(errno.ENOSPC, "IO error: No space left on device: While appending to file: OPTIONS-000007")

    monkeypatch.setattr(ox, "Store", full)
    with pytest.raises(StoreError) as caught:
        OxigraphStore(tmp_path / "store", name="u/c")
    message = str(caught.value)
    assert message.endswith(FREE) and "restore a backup" not in message, message


def test_a_vector_index_that_cannot_be_read_on_a_full_disk_says_free_space(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(records.sqlite3, "connect", connect)
    with pytest.raises(IndexError_) as caught:
        records.RecordTable(tmp_path / "chunks", model="m", dimension=4)
    message = str(caught.value)
    assert message.endswith(FREE) and "restore a backup" not in message and "cannot be read" in message, message


class _FullDisk:
    """A SQLite connection on a full disk: reads answer, writes (and the journal's set-up) fail as SQLite's do."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, *args: object) -> object:
        if sql.lstrip().upper().startswith(("BEGIN", "INSERT", "PRAGMA JOURNAL_MODE")):
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def test_a_librarian_write_on_a_full_disk_says_free_space(tmp_path: Path) -> None:
    librarian = SqliteLibrarian(tmp_path / "librarian")
    librarian._db = _FullDisk(librarian._db)  # type: ignore[arg-type,assignment]
    with pytest.raises(StoreError) as caught:
        librarian.add([NewRecord(id="urn:doc:a", kind="document", content="Marie Curie.")])
    message = str(caught.value)
    assert message.endswith(FREE) and "restore a backup" not in message, message


def test_a_librarian_that_cannot_open_on_a_full_disk_says_free_space(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite_librarian.sqlite3, "connect", lambda *a, **k: _FullDisk(connect(*a, **k)))
    with pytest.raises(StoreError) as caught:
        SqliteLibrarian(tmp_path / "librarian")
    message = str(caught.value)
    assert message.endswith(FREE) and "restore a backup" not in message, message


def test_a_large_text_on_a_full_disk_says_free_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts over the inline limit are files of their own: the OS's ENOSPC, not SQLite's wording."""
    librarian = SqliteLibrarian(tmp_path / "librarian", inline_limit=16)

    def full(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(StoreError) as caught:
        librarian.add([NewRecord(id="urn:doc:a", kind="document", content="Marie Curie discovered polonium.")])
    message = str(caught.value)
    assert message.endswith(FREE) and "restore a backup" not in message, message
    librarian.close()
