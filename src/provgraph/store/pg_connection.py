"""Connections to PostgreSQL and its errors as provgraph's, for every PostgreSQL backend (quads, vectors, records, jobs).

psycopg is imported on first use (the ``scale`` extra), so the embedded default never needs it. A connection the
server dropped (a restart) is opened again on the next call (:class:`PgLink`); the call that met the drop fails with
StoreUnavailable, and :func:`retrying` repeats idempotent work until the server is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from provgraph.errors import StoreError, StoreUnavailable

__all__ = ["pg_connect", "pg_errors", "PgLink", "retrying"]

T = TypeVar("T")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreUnavailable("the PostgreSQL store needs psycopg: pip install 'provgraph[scale]'") from exc
    return psycopg


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def pg_errors(name: str, doing: str, failure: type[Exception] = StoreError) -> Iterator[None]:
    """psycopg's errors as provgraph's: a connection failure is StoreUnavailable, the rest ``failure``."""
    psycopg = _psycopg()
    try:
        yield
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"collection {name}: {doing}: PostgreSQL is unreachable: {_first_line(exc)}") from exc
    except psycopg.Error as exc:
        raise failure(f"collection {name}: {doing} failed: {_first_line(exc)}") from exc


def pg_connect(url: str, name: str) -> Any:
    """A new autocommit connection (StoreUnavailable when the server cannot be reached)."""
    # The named operations' joins are written in the order to run them (from the bound terms outwards): without
    # reordering, planning a 12-way join takes 0.1 ms instead of 20 (its execution: 0.7 ms)
    with pg_errors(name, "connect"):
        return _psycopg().connect(url, autocommit=True, options="-c join_collapse_limit=1 -c from_collapse_limit=1")


class PgLink:
    """One connection that is opened again when the server dropped it (a restart): the failed call raises
    StoreUnavailable, the next one reconnects. ``prepare`` sets up each new connection (types, row factory)."""

    def __init__(self, url: str, name: str, prepare: Callable[[Any], None] | None = None) -> None:
        self.url, self.name, self._prepare = url, name, prepare
        self._conn: Any = None
        self._closed = False

    @property
    def conn(self) -> Any:
        """The open connection (a new one if there is none or the last was broken)."""
        if self._closed:
            raise StoreError(f"collection {self.name}: the connection is closed")
        if self._conn is None or self._conn.closed:
            conn = pg_connect(self.url, self.name)
            if self._prepare is not None:
                with pg_errors(self.name, "connect"):
                    self._prepare(conn)
            self._conn = conn
        return self._conn

    def close(self) -> None:
        """Close the connection for good (idempotent)."""
        self._closed = True
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def retrying(name: str, doing: str, call: Callable[[], T], *, patience: float = 60.0) -> T:
    """``call()`` again while PostgreSQL is unreachable (a restart), for up to ``patience`` seconds; for
    idempotent work only (a call whose commit was made but not reported runs twice)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return call()
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)
