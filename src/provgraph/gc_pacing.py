"""Rarer garbage collections while extractions are built and written, and while a question is answered.

A batch of extractions holds ~10^5 live quads and terms until it is written, so at Python's default
pace (a young collection every 700 net allocations) the collector also ran about four full
collections per 1,000 chunks, each walking every long-lived object of the process (vector payloads,
postings, caches): 0.45 ms a chunk at the first 1,000 chunks, 1.0 at 20,000 (``bench/scale.py
--stages``). A question allocates ~10^4 short-lived objects (rows, terms, labelled edges) beside the
runtime's long-lived caches: at the default pace one GraphRAG question in about a hundred, at 20,000
chunks, ran a full collection of 90-120 ms. Collecting the young generation every 10,000 allocations
instead makes full collections about twenty times rarer (200 questions: none, and 12 ms of collection
in all instead of 258). The previous thresholds come back when the last overlapping run ends (a
question's stream abandoned without ``aclose`` ends its run when the stream is finalised).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "rarer_collections"]

YOUNG_THRESHOLD = 10_000
"""Net allocations between young-generation collections during a run (Python's default: 700)."""

_lock = threading.Lock()
_runs = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def rarer_collections() -> Iterator[None]:
    """Raise the young-generation threshold to :data:`YOUNG_THRESHOLD` (never lower it) for the block."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            young, *older = _saved
            gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
