"""Blocking I/O that runs beside a question's own work: a commit waiting on its fsync, a keyword search.

SQLite and the quad store release the GIL while they wait or search, so a call started with
:func:`running` overlaps the Python work of the ``with`` block; the block ends only once the call
has finished (its result, or its exception, is then in the future), so nothing is left running
past its caller. One small pool of threads serves every engine of the process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from threading import Lock
from typing import TypeVar

__all__ = ["running"]

T = TypeVar("T")
_WORKERS = 2
_pool: ThreadPoolExecutor | None = None
_lock = Lock()


def _submit(fn: Callable[..., T], *args: object) -> Future[T]:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="provgraph-io")
    return _pool.submit(fn, *args)


@contextmanager
def running(fn: Callable[..., T], *args: object) -> Iterator[Future[T]]:
    """``fn(*args)`` on a worker thread during the block; the block's end waits for it."""
    future = _submit(fn, *args)
    try:
        yield future
    finally:
        future.exception()  # waits; the outcome stays in the future for the caller to read
