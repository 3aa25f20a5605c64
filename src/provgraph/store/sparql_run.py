"""A user's SPARQL query, run with a deadline and capped results, streamed as it is evaluated.

pyoxigraph can neither cancel a running query nor bound its results, and it evaluates by recursion.
So each query runs on its own thread, with a 256 MiB stack (virtual: pages are touched only as deep
as the recursion goes), which owns the query's result object from start to end (a result dropped on
another thread leaks the store's lock). It serialises the results itself, one solution at a time,
into chunks handed over a small queue (so memory stays bounded however the reader keeps up), and
checks between solutions whether the deadline passed, the rows or bytes reached their caps, or the
reader went away; then it stops evaluating. Results past a cap end with a truncation signal
(SPARQL JSON: a top-level ``"truncated"`` member; N-Triples: a last ``# truncated:`` comment; CSV and
the table: a notice on stderr); a deadline passed before the first chunk is a :class:`QueryTimeout`.

What this cannot stop is a query that computes for long without producing a solution (a sort or an
aggregate over a large join): the reader gets its timeout at the deadline, but the thread runs on
until the first solution comes out, and only then stops. A worker process that could be killed was
measured and not chosen (see docs/api.md, "SPARQL limits").
"""

from __future__ import annotations

import csv
import io
import json
import queue
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import pyoxigraph as ox

from provgraph.errors import ProvgraphError, QueryError


class SparqlSource(Protocol):
    """What runs a user's query: the embedded store, or a PostgreSQL collection's Oxigraph replica."""

    @property
    def name(self) -> str: ...

    def raw_query(self, sparql: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples: ...

__all__ = ["ResultLimits", "QueryResults", "QueryTimeout", "Truncated", "run_query", "cancel_all", "STACK_BYTES"]

STACK_BYTES = 256 * 2**20
_CHUNK = 64 * 1024
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_running: weakref.WeakSet[threading.Event] = weakref.WeakSet()
_stack_lock = threading.Lock()


class QueryTimeout(ProvgraphError):
    """The query passed its deadline before its first results."""


@dataclass(frozen=True)
class ResultLimits:
    """Caps on one query: rows (solutions or triples), serialised bytes, seconds (None: no cap)."""

    max_rows: int | None = None
    max_bytes: int | None = None
    timeout_s: float | None = None


@dataclass(frozen=True)
class Truncated:
    """The last item of capped results: why they stop (``rows``, ``bytes`` or ``timeout``) and a sentence."""

    reason: str
    message: str


def _json_term(term: Any) -> dict[str, Any]:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Triple):
        return {"type": "triple", "value": {"subject": _json_term(term.subject), "predicate": _json_term(
            term.predicate), "object": _json_term(term.object)}}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != _XSD_STRING:
        out["datatype"] = term.datatype.value
    return out


def _csv_value(term: Any) -> str:
    if term is None:
        return ""
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Triple):
        return " ".join(_csv_value(t) for t in (term.subject, term.predicate, term.object))
    return str(term.value)


@dataclass(frozen=True)
class _Kind:
    name: str  # json, csv, ntriples or rows: what the chunks that follow are


class _Writer:
    """Serialises one result kind into chunks; counts rows and bytes."""

    def __init__(self, result: Any, fmt: str) -> None:
        self.fmt, self.rows, self.bytes = fmt, 0, 0
        self.names = [v.value for v in result.variables] if isinstance(result, ox.QuerySolutions) else []
        self._buffer = io.StringIO()
        self._csv = csv.writer(self._buffer, lineterminator="\r\n")

    def head(self) -> str:
        if self.fmt == "json":
            return json.dumps({"head": {"vars": self.names}}, separators=(",", ":"))[:-1] + ',"results":{"bindings":['
        if self.fmt == "csv":
            self._csv.writerow(self.names)
            return self._take()
        return ""

    def row(self, item: Any) -> str:
        self.rows += 1
        if self.fmt == "ntriples":
            return f"{item} .\n"
        if self.fmt == "csv":
            self._csv.writerow([_csv_value(item[n]) for n in self.names])
            return self._take()
        binding = {n: _json_term(item[n]) for n in self.names if item[n] is not None}
        return ("," if self.rows > 1 else "") + json.dumps(binding, ensure_ascii=False, separators=(",", ":"))

    def tail(self, stop: Truncated | None) -> str:
        return self.closing(self.fmt, stop)

    @staticmethod
    def closing(fmt: str, stop: Truncated | None) -> str:
        """What ends results of ``fmt`` (with the truncation signal when ``stop``)."""
        if fmt == "json":
            extra = "" if stop is None else "," + json.dumps({"truncated": {"reason": stop.reason,
                                                                           "message": stop.message}},
                                                             ensure_ascii=False, separators=(",", ":"))[1:-1]
            return "]}" + extra + "}"
        if fmt == "ntriples" and stop is not None:
            return f"# truncated: {stop.message}\n"
        return ""

    def _take(self) -> str:
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return text


def _produce(open_store: Callable[[], AbstractContextManager[SparqlSource]], text: str, fmt: str,
             limits: ResultLimits, deadline: float | None, out: queue.Queue[Any], stop: threading.Event) -> None:
    """The query's thread: evaluate, serialise, hand chunks over, stop at a cap, the deadline or ``stop``."""

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    name = "?"
    try:
        with open_store() as store:
            name = store.name
            result = store.raw_query(text)
            try:
                if isinstance(result, ox.QueryBoolean):
                    put(_Kind("boolean"))
                    put(bool(result))
                    return
                if isinstance(result, ox.QueryTriples):
                    fmt = "ntriples"
                writer = _Writer(result, fmt)
                put(_Kind(fmt))
                if fmt == "rows":
                    put(writer.names)
                pending = [writer.head()]
                size, ended = len(pending[0]), None
                for item in result:
                    if stop.is_set():
                        return
                    if deadline is not None and time.monotonic() > deadline:
                        ended = Truncated("timeout", f"the query passed its limit of {limits.timeout_s:g} s; "
                                                     f"the first {writer.rows} results are here")
                        break
                    if limits.max_rows is not None and writer.rows >= limits.max_rows:
                        ended = Truncated("rows", f"only the first {limits.max_rows} results are sent (the limit): "
                                                  "narrow the query or page it with LIMIT and OFFSET")
                        break
                    if fmt == "rows":
                        writer.rows += 1
                        if not put([item[n] for n in writer.names]):
                            return
                        continue
                    piece = writer.row(item)
                    writer.bytes += len(piece)
                    if limits.max_bytes is not None and writer.bytes > limits.max_bytes:
                        ended = Truncated("bytes", f"only the first {writer.rows - 1} results are sent: they reach "
                                                   f"the limit of {limits.max_bytes} bytes; narrow the query or "
                                                   "page it with LIMIT and OFFSET")
                        break
                    pending.append(piece)
                    size += len(piece)
                    if size >= _CHUNK:
                        if not put("".join(pending).encode()):
                            return
                        pending, size = [], 0
                if fmt != "rows":
                    pending.append(writer.tail(ended))
                    put("".join(pending).encode())
                if ended is not None:
                    put(ended)
            finally:
                del result
    except (ProvgraphError, OSError, ValueError, RuntimeError) as exc:
        if not isinstance(exc, ProvgraphError):
            exc = QueryError(f"collection {name}: query failed: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}")
        put(exc.with_traceback(None))
    finally:
        put(None)


def run_query(open_store: Callable[[], AbstractContextManager[SparqlSource]], text: str, fmt: str,
              limits: ResultLimits) -> QueryResults:
    """The results of ``text``: first their kind (``json``, ``csv``, ``rows``; ``ntriples`` for CONSTRUCT and
    DESCRIBE, ``boolean`` for ASK), then chunks of it (bytes), or for ``rows`` the variable names and then
    each solution's terms, or for ``boolean`` the answer; a :class:`Truncated` comes last when a cap stopped them. Errors come out of the
    iterator (a syntax error on the first ``next``); a deadline passed before the first results raises
    :class:`QueryTimeout`."""
    deadline = None if limits.timeout_s is None else time.monotonic() + limits.timeout_s
    out: queue.Queue[Any] = queue.Queue(maxsize=4)
    stop = threading.Event()
    _running.add(stop)
    with _stack_lock:  # the stack size applies to threads started meanwhile: only this one is
        previous = threading.stack_size(STACK_BYTES)
        try:
            worker = threading.Thread(target=_produce, args=(open_store, text, fmt, limits, deadline, out, stop),
                                      name="sparql", daemon=True)
            worker.start()
        finally:
            threading.stack_size(previous)
    return QueryResults(out, stop, deadline, limits)


class QueryResults:
    """The iterator :func:`run_query` returns: the kind first, then chunks (or rows), a :class:`Truncated` last
    when a cap stopped them. :meth:`cancel` (or the end of the iteration) stops the query's thread."""

    def __init__(self, out: queue.Queue[Any], stop: threading.Event, deadline: float | None,
                 limits: ResultLimits) -> None:
        self._out, self._stop, self._deadline, self._limits = out, stop, deadline, limits
        self.kind, self._started, self._done = "", False, False

    def __iter__(self) -> QueryResults:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        try:
            return self._next()
        except BaseException:
            self.cancel()
            raise

    def _next(self) -> Any:
        wait = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
        try:
            item = self._out.get(timeout=wait)
        except queue.Empty:  # the query computes without producing: give up on it at the deadline
            seconds = self._limits.timeout_s or 0
            if not self._started:
                raise QueryTimeout(f"the query took longer than the limit of {seconds:g} s") from None
            self._out, ended = queue.Queue(), Truncated("timeout", f"the query passed its limit of {seconds:g} s")
            if self.kind != "rows":
                self._out.put(ended)
                return _Writer.closing(self.kind, ended).encode()
            item = ended
        if item is None:
            self.cancel()
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, _Kind):
            self.kind = item.name
            return item.name
        self._started = True
        if isinstance(item, Truncated):
            self.cancel()
        return item

    def cancel(self) -> None:
        """Stop the query's thread at its next solution; nothing more comes out."""
        self._done = True
        self._stop.set()


def cancel_all() -> None:
    """Stop every running query at its next solution (the server's shutdown)."""
    for stop in list(_running):
        stop.set()
