"""Test harness: a real process writing a collection, as a server or a long `load` does.

``python -m tests.fault.live_writer backups CORPUS OUT``: loads the files of CORPUS one at a time
into collection ``live`` (the Python API, tiny vector batches) in one thread while the main thread
takes backups of it through ``Runtime.backup`` — the function a server's backup route calls — into
``OUT/backup-N.tar``, until the load is done (between two documents the load waits for a backup, so
some are taken mid-load however fast either runs); prints ``BACKUPS n``.

``python -m tests.fault.live_writer hold CORPUS GO``: loads CORPUS into ``live``, prints ``READY``
and keeps the collection open (its store locked) until the file GO exists.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

from provgraph.extract.pipeline import ExtractionPipeline
from provgraph.session import Provgraph

MAX_BACKUPS = 8


def _small_batches() -> None:
    init = ExtractionPipeline.__init__

    def small(self: ExtractionPipeline, *a: Any, **kw: Any) -> None:
        init(self, *a, **{**kw, "batch_size": 2})

    ExtractionPipeline.__init__ = small  # type: ignore[method-assign]


def main() -> None:
    mode, corpus, target = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    _small_batches()
    files = sorted(p for p in corpus.iterdir() if p.is_file())
    with Provgraph("live", chunk_size=600, chunk_overlap=50, llm="none") as pg:
        if mode == "hold":
            pg.load(files)
            print("READY", flush=True)
            while not target.exists():
                time.sleep(0.05)
            return
        failed: list[BaseException] = []
        backups = threading.Condition()
        taken = 0

        def load() -> None:
            try:
                for n, f in enumerate(files):
                    pg.load([f])
                    time.sleep(0.4)  # room for backups between documents too
                    if n < len(files) - 1:  # and at least one, however fast either runs
                        with backups:
                            before = taken
                            backups.wait_for(lambda: taken > before or taken >= MAX_BACKUPS, timeout=120)
            except BaseException as exc:  # reported by the main thread
                failed.append(exc)

        writer = threading.Thread(target=load)
        writer.start()
        while writer.is_alive() and not pg.runtime.librarian.list(kind="document"):
            time.sleep(0.02)  # from the first document on
        while writer.is_alive() and taken < MAX_BACKUPS:
            pg.runtime.backup(target / f"backup-{taken}.tar")
            with backups:
                taken += 1
                backups.notify_all()
            time.sleep(0.05)
        writer.join()
        if failed:
            raise failed[0]
        print(f"BACKUPS {taken}", flush=True)


if __name__ == "__main__":
    main()
