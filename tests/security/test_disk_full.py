"""Low: a full disk is advice to free space, never to "restore a backup" (which would not help, and
needs space too): the store that cannot open, a vector index that cannot be read, a librarian write."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pyoxigraph as ox
import pytest

from provgraph.errors import IndexError_, StoreError
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
