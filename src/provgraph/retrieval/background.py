"""Blocking I/O that runs beside a question's own work: a commit waiting on its fsync, a keyword search.

SQLite and the quad store release the GIL while they wait or search, so a call handed to
:func:`beside` overlaps the Python work the caller does meanwhile; the caller joins it with
:func:`joined` before anything that depends on it (a trace step is written only after the answer
record it names is durable). One small pool of threads serves every engine of the process.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from threading import Lock
from typing import TypeVar

__all__ = ["beside", "joined"]

T = TypeVar("T")
_WORKERS = 2
_pool: ThreadPoolExecutor | None = None
_lock = Lock()


def beside(fn: Callable[..., T], *args: object) -> Future[T]:
    """Start ``fn(*args)`` on a worker thread; returns its future."""
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="provgraph-io")
    return _pool.submit(fn, *args)


def joined(future: Future[T] | None) -> T | None:
    """Wait for ``future`` (None: nothing was started); its exception is raised here."""
    return None if future is None else future.result()
