"""Test harness: run ``provgraph ARGS`` and SIGKILL this very process at its Nth write.

``python -m tests.fault.killer N ARGS…``: every call that writes (librarian, store, vector
records, flushes, completion records) counts twice, once before and once after it runs; at the
Nth count the process kills itself with SIGKILL, like ``kill -9`` would. N = 0 never kills and
prints ``EVENTS total`` and ``MOMENTS m1,m2,…`` on stderr, each moment named ``before:Class.method``
or ``after:Class.method``, so a test can kill in every phase. Vector batches are made tiny so documents complete (and
vectors are written) one after another, giving crashes in between to recover from. With
``KILLER_LARGE_PARTS=1`` in the environment, parts are made as at scale (:func:`make_parts_large`)
and blob-file writes and index flushes (HNSW graph saves) are counted too.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from typing import Any

from collections.abc import Callable
from pathlib import Path

from provgraph.extract.pipeline import ExtractionPipeline
from provgraph.librarian.blobs import BlobStore
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors.records import RecordTable
from provgraph.vectors.usearch_index import UsearchIndex

WRITES = [(SqliteLibrarian, "add"), (SqliteLibrarian, "remove"), (SqliteLibrarian, "mark_complete"),
          (SqliteLibrarian, "clear_complete"), (OxigraphStore, "apply"), (OxigraphStore, "bulk_add"),
          (OxigraphStore, "flush"), (RecordTable, "upsert"), (RecordTable, "remove")]


LARGE_WRITES = [(BlobStore, "put"), (UsearchIndex, "flush")]


def make_parts_large(setattr_: Callable[[object, str, object], None]) -> None:
    """Documents' bytes in blob files (inline limit 2,500 bytes) and every index with a saved HNSW graph."""
    lib_init, index_init = SqliteLibrarian.__init__, UsearchIndex.__init__

    def lib(self: SqliteLibrarian, path: Path, **kw: int) -> None:
        lib_init(self, path, inline_limit=2500)  # documents (3-4 kB) are files, chunks (2,000 chars) inline

    def index(self: UsearchIndex, folder: Path, **kw: Any) -> None:
        index_init(self, folder, **{**kw, "exact_threshold": 1})

    setattr_(SqliteLibrarian, "__init__", lib)
    setattr_(UsearchIndex, "__init__", index)


def main() -> None:
    kill_at, args = int(sys.argv[1]), sys.argv[2:]
    moments: list[str] = []

    def tick(moment: str) -> None:
        moments.append(moment)
        if len(moments) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def counted(method: Any, label: str) -> Any:
        @functools.wraps(method)
        def wrapper(*a: Any, **kw: Any) -> Any:
            tick(f"before:{label}")
            result = method(*a, **kw)
            tick(f"after:{label}")
            return result
        return wrapper

    large = os.environ.get("KILLER_LARGE_PARTS") == "1"
    if large:
        make_parts_large(setattr)
    for cls, name in WRITES + (LARGE_WRITES if large else []):
        setattr(cls, name, counted(getattr(cls, name), f"{cls.__name__}.{name}"))
    init = ExtractionPipeline.__init__

    def small_batches(self: ExtractionPipeline, *a: Any, **kw: Any) -> None:
        init(self, *a, **{**kw, "batch_size": 2})

    ExtractionPipeline.__init__ = small_batches  # type: ignore[method-assign]
    from provgraph.cli.app import app

    try:
        app(args, standalone_mode=False)
    finally:
        sys.stderr.write(f"EVENTS {len(moments)}\nMOMENTS {','.join(moments)}\n")


if __name__ == "__main__":
    main()
