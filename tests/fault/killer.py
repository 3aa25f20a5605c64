"""Test harness: run ``provgraph ARGS`` and SIGKILL this very process at its Nth write.

``python -m tests.fault.killer N ARGS…``: every call that writes (librarian, store, vector
records, flushes, completion records) counts twice, once before and once after it runs; at the
Nth count the process kills itself with SIGKILL, like ``kill -9`` would. N = 0 never kills and
prints ``EVENTS total`` on stderr. Vector batches are made tiny so documents complete (and
vectors are written) one after another, giving crashes in between to recover from.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from typing import Any

from provgraph.extract.pipeline import ExtractionPipeline
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors.records import RecordTable

WRITES = [(SqliteLibrarian, "add"), (SqliteLibrarian, "remove"), (SqliteLibrarian, "mark_complete"),
          (SqliteLibrarian, "clear_complete"), (OxigraphStore, "apply"), (OxigraphStore, "bulk_add"),
          (OxigraphStore, "flush"), (RecordTable, "upsert"), (RecordTable, "remove")]


def main() -> None:
    kill_at, args = int(sys.argv[1]), sys.argv[2:]
    count = 0

    def tick() -> None:
        nonlocal count
        count += 1
        if count == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def counted(method: Any) -> Any:
        @functools.wraps(method)
        def wrapper(*a: Any, **kw: Any) -> Any:
            tick()
            result = method(*a, **kw)
            tick()
            return result
        return wrapper

    for cls, name in WRITES:
        setattr(cls, name, counted(getattr(cls, name)))
    init = ExtractionPipeline.__init__

    def small_batches(self: ExtractionPipeline, *a: Any, **kw: Any) -> None:
        init(self, *a, **{**kw, "batch_size": 2})

    ExtractionPipeline.__init__ = small_batches  # type: ignore[method-assign]
    from provgraph.cli.app import app

    try:
        app(args, standalone_mode=False)
    finally:
        sys.stderr.write(f"EVENTS {count}\n")


if __name__ == "__main__":
    main()
