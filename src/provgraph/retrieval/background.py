"""Blocking I/O that runs beside a question's own work: a commit waiting on its fsync, a keyword search.

SQLite and the quad store release the GIL while they wait or search, so a call started with
:func:`running` overlaps the Python work of the ``with`` block. The block ends only once the call has
finished, so nothing is left running past its caller; a call no worker has picked up by then (both
busy, or no free core on a loaded machine) is taken back and made by the caller itself, so the caller
never waits for a worker to be scheduled. One small pool of threads serves every engine of the process.

A call that fails on a worker releases what its frames held before its exception crosses to the
caller: pyoxigraph's result objects may only be dropped on the thread that made them (one dropped on
another thread is leaked, and with it the store's lock until the process ends).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from threading import Event, Lock
from traceback import clear_frames
from typing import Generic, TypeVar

__all__ = ["running", "Beside"]

T = TypeVar("T")
_WORKERS = 2
_HANDOFF = 0.0005  # seconds a handoff waits for a worker to start the call
_pool: ThreadPoolExecutor | None = None
_lock = Lock()


def _made_here(fn: Callable[..., T], *args: object) -> T:
    try:
        return fn(*args)
    except BaseException as exc:
        seen: set[int] = set()
        failure: BaseException | None = exc
        while failure is not None and id(failure) not in seen:  # its cause and context held frames too
            seen.add(id(failure))
            clear_frames(failure.__traceback__)
            failure = failure.__cause__ or failure.__context__
        raise


def _started(started: Event, fn: Callable[..., T], *args: object) -> T:
    started.set()
    return fn(*args)


def _submit(fn: Callable[..., T], *args: object) -> Future[T]:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="provgraph-io")
    return _pool.submit(_made_here, fn, *args)


class Beside(Generic[T]):
    """A call made on a worker thread, or by the caller when no worker has started it yet.

    ``handoff`` lets a worker start the call at once: the caller gives up the GIL until one has (for at
    most half a millisecond) instead of keeping it until its own next blocking call, or for the interpreter's
    whole switch interval (5 ms) when its work is pure Python: a call that spends its time without the
    GIL (a RocksDB commit) then runs beside even a short stretch of the caller's work.
    """

    def __init__(self, fn: Callable[..., T], *args: object, handoff: bool = False) -> None:
        self._fn, self._args = fn, args
        if not handoff:
            self._future = _submit(fn, *args)
            return
        started = Event()
        self._future = _submit(_started, started, fn, *args)
        started.wait(_HANDOFF)

    def settle(self) -> None:
        """Wait for the call, or make it here if no worker has started it; its outcome is kept."""
        if self._future.cancel():  # still queued: do it now rather than wait for a worker
            future: Future[T] = Future()
            try:
                future.set_result(self._fn(*self._args))
            except BaseException as exc:  # kept for result(), as a worker's failure would be
                future.set_exception(exc)
            self._future = future
        self._future.exception()

    def result(self) -> T:
        """The call's value (made here if no worker has started it); its exception is raised here."""
        self.settle()
        return self._future.result()


@contextmanager
def running(fn: Callable[..., T], *args: object, handoff: bool = False) -> Iterator[Beside[T]]:
    """``fn(*args)`` beside the block; the block's end settles it (see :class:`Beside`)."""
    call = Beside(fn, *args, handoff=handoff)
    try:
        yield call
    finally:
        call.settle()
