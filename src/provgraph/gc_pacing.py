"""How often the cyclic garbage collector runs during provgraph's allocation-heavy work: rarer, or not at all.

Two pacings, one mechanism (a count of the runs that asked, the collector's previous state given back
when the last overlapping run of that pacing ends; a question's stream abandoned without ``aclose`` ends
its run when the stream is finalised):

- :func:`rarer_collections` — extraction and questions. A batch of extractions holds ~10^5 live quads and
  terms until it is written, so at Python's default pace (a young collection every 700 net allocations)
  the collector also ran about four full collections per 1,000 chunks, each walking every long-lived
  object of the process (vector payloads, postings, caches): 0.45 ms a chunk at the first 1,000 chunks,
  1.0 at 20,000 (``bench/scale.py --stages``). A question allocates ~10^4 short-lived objects (rows,
  terms, labelled edges) beside the runtime's long-lived caches: at the default pace one GraphRAG question
  in about a hundred, at 20,000 chunks, ran a full collection of 90-120 ms. Collecting the young
  generation every 10,000 allocations instead makes full collections about twenty times rarer (200
  questions: none, and 12 ms of collection in all instead of 258).
- :func:`collector_paused` — community detection and extractive reports (``communities build`` without an
  LLM). They make hundreds of thousands of acyclic term objects that live until the build ends, so every
  collection walks them all again: at 20,000 chunks that was a third of the build's CPU time. No
  collection runs while it is paused; what it would have freed is freed by reference counts (the terms
  hold no cycles), and anything cyclic waits for the next collection after the build.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

__all__ = ["YOUNG_THRESHOLD", "rarer_collections", "collector_paused"]

YOUNG_THRESHOLD = 10_000
"""Net allocations between young-generation collections during a run (Python's default: 700)."""

_lock = threading.Lock()
_runs = {"rarer": 0, "paused": 0}
_saved_threshold: tuple[int, int, int] | None = None
_was_enabled = True


def _start(pacing: str) -> None:
    global _saved_threshold, _was_enabled
    with _lock:
        if _runs[pacing] == 0:
            if pacing == "rarer":
                _saved_threshold = gc.get_threshold()
                young, *older = _saved_threshold
                gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
            else:
                _was_enabled = gc.isenabled()
                gc.disable()
        _runs[pacing] += 1


def _end(pacing: str) -> None:
    global _saved_threshold
    with _lock:
        _runs[pacing] -= 1
        if _runs[pacing] > 0:
            return
        if pacing == "rarer" and _saved_threshold is not None:
            gc.set_threshold(*_saved_threshold)
            _saved_threshold = None
        elif pacing == "paused" and _was_enabled:
            gc.enable()


@contextmanager
def _paced(pacing: str) -> Iterator[None]:
    _start(pacing)
    try:
        yield
    finally:
        _end(pacing)


def rarer_collections() -> AbstractContextManager[None]:
    """Raise the young-generation threshold to :data:`YOUNG_THRESHOLD` (never lower it) for the block."""
    return _paced("rarer")


def collector_paused() -> AbstractContextManager[None]:
    """No cyclic garbage collection in the block (nor in any overlapping one); the collector's state is restored
    when the last overlapping block ends."""
    return _paced("paused")
