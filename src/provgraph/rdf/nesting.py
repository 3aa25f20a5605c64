"""Bounding nesting before a parser sees the text: SPARQL queries and N-Quads/TriG data.

pyoxigraph (0.5.13) parses and evaluates by recursion, one native stack frame per level, and a
stack overflow kills the whole process (a segfault, no exception). Measured on an 8 MiB stack:
``{`` nested 2,157 deep, ``!`` 8,993 deep, triple terms ``<<( … )>>`` in N-Quads 17,976 deep,
and chains that the evaluator turns into left-deep trees: ``1+1+…`` 6,844 long, ``{} UNION {}…``
6,454, a property path ``p/p/…`` only 497 (17 KB of stack a step). So before any parser sees a
byte, this scanner (which skips strings, IRIs and comments, as the grammars do) refuses text whose
brackets (``{ ( [ <<``) nest deeper than :data:`MAX_DEPTH`; for SPARQL it also refuses
more than :data:`MAX_OPERATORS` operators and separators in all (each may become a level of
the evaluator's trees; a basic graph pattern of 20,000 triples also overflows, and 128 triples already
take 6 s to plan) and the ``SERVICE`` keyword (the server must not
open connections for its users). Those bounds keep the recursion a small fraction of a thread's
stack; the queries run on a thread with a larger one besides (``store/sparql_run.py``).

Data is scanned as it streams: :class:`NestingScanner` takes chunks and hands back the complete
lines it has checked, so a parser reading through it never sees an unchecked byte.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO

from provgraph.errors import QueryError

__all__ = ["MAX_DEPTH", "MAX_OPERATORS", "NestingScanner", "CheckedReader", "check_query", "check_rdf"]

MAX_DEPTH = 128  # brackets open at once; provgraph's own data and queries stay under 10
_CHUNK = 1 << 16
MAX_OPERATORS = 256  # SPARQL operators and separators in one query (path steps, terms of a sum, UNIONs, triple patterns …)

_IRI_CHARS = rb'[^<>"{}|^`\\\x00-\x20]*'
_IRI = rb"<" + _IRI_CHARS + rb"(?:\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})" + _IRI_CHARS + rb")*>"
_SHORT = rb'"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"|' + rb"'[^'\\\n\r]*(?:\\.[^'\\\n\r]*)*'"
_LONG_BODY = {b'"""': rb'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""', b"'''": rb"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"}
_LONG_END = {quote: re.compile(body, re.S) for quote, body in _LONG_BODY.items()}
_DATA = re.compile(rb'(' + _IRI + rb')|("""|' + rb"''')|(" + _SHORT + rb")|(#[^\n]*)|(<<|[{(\[])|(>>|[})\]])")
# SPARQL also has words (for SERVICE) and the operators whose runs the evaluator nests.
_WORD = rb"[?$]\w+|[A-Za-z_][\w.\-]*:[^\s{}()\[\]<>\"',;#]*|:[^\s{}()\[\]<>\"',;#]*|[A-Za-z_]\w*"
_QUERY = re.compile(rb'(' + _IRI + rb')|("""|' + rb"''')|(" + _SHORT + rb")|(#[^\n]*)|(<<|[{(\[])|(>>|[})\]])"
                    rb"|(" + _WORD + rb")|(\|\||&&|!=|<=|>=|[/|^!+\-*=<>.;,])")
_OPERATOR_WORDS = {b"UNION", b"OPTIONAL", b"MINUS", b"FILTER", b"BIND", b"GRAPH", b"EXISTS", b"NOT", b"IN"}


def _too_deep(what: str, limit: int) -> QueryError:
    return QueryError(f"{what}: brackets nested more than {limit} deep: refused before parsing (nothing was read)")


class NestingScanner:
    """Checks N-Quads/TriG bytes as they stream: :meth:`feed` returns the complete lines checked so far.

    Cheap where it can be: an N-Quads statement is one line, so a line with at most ``limit`` ``<<``
    cannot nest deeper (a chunk with no more than that in all is passed whole, at ``bytes.count``
    speed); TriG, whose statements span lines, is passed whole while the brackets open before it
    plus those in it stay under the limit. Only past those bounds are tokens read one by one.
    """

    def __init__(self, what: str, fmt: str = "nquads", limit: int = MAX_DEPTH) -> None:
        self.what, self.limit, self.lines = what, limit, fmt == "nquads"
        self.depth = 0
        self._long: bytes | None = None  # the quote of a long string (TriG) open at the end of the last line
        self._pending = b""

    def feed(self, chunk: bytes) -> bytes:
        """Check every complete line of what came so far; returns those lines (the rest waits for its end)."""
        data = self._pending + chunk
        end = data.rfind(b"\n") + 1
        self._pending = data[end:]
        if end:
            self._scan(data[:end])
        return data[:end]

    def finish(self) -> bytes:
        """Check and return the last line (without a newline)."""
        rest, self._pending = self._pending, b""
        self._scan(rest)
        return rest

    def _scan(self, data: bytes) -> None:
        if self.lines:
            if data.count(b"<<") > self.limit:
                for line in data.split(b"\n"):
                    if line.count(b"<<") > self.limit:
                        self.depth = 0
                        self._scan_tokens(line, 0, len(line))
            return
        if self._long is None:
            opens = sum(data.count(b) for b in (b"<<", b"{", b"(", b"["))
            if self.depth + opens <= self.limit and b'"""' not in data and b"'''" not in data:
                closes = sum(data.count(b) for b in (b">>", b"}", b")", b"]"))
                self.depth = max(0, self.depth + opens - closes)  # (a stray closer is the parser's syntax error)
                return
        self._scan_tokens(data, 0, len(data))

    def _scan_tokens(self, data: bytes, pos: int, end: int) -> None:
        """Token by token: when the brackets may pass the limit, or a long string stays open."""
        if self._long is not None:
            closed = _LONG_END[self._long].match(data, pos, end)
            if closed is None:
                return
            pos, self._long = closed.end(), None
        while True:
            found = _DATA.search(data, pos, end)
            if found is None:
                return
            pos = found.end()
            if found.lastindex == 2:  # a long string: find its end (maybe on a later line)
                closed = _LONG_END[found.group(2)].match(data, pos, end)
                if closed is None:
                    self._long = found.group(2)
                    return
                pos = closed.end()
            elif found.lastindex == 5:
                self.depth += 1
                if self.depth > self.limit:
                    raise _too_deep(self.what, self.limit)
            elif found.lastindex == 6:
                self.depth = max(0, self.depth - 1)


def check_query(text: str, what: str = "query") -> None:
    """Refuse a SPARQL query nested deeper than :data:`MAX_DEPTH`, with more than :data:`MAX_OPERATORS`
    operators, or naming ``SERVICE``: one line (QueryError), before pyoxigraph parses anything."""
    data = text.encode("utf-8", "surrogatepass")
    depth, operators, pos = 0, 0, 0
    while True:
        found = _QUERY.search(data, pos)
        if found is None:
            return
        pos, kind = found.end(), found.lastindex
        if kind == 2:
            closed = _LONG_END[found.group(2)].match(data, pos)
            pos = closed.end() if closed else len(data)
        elif kind == 5:
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep(what, MAX_DEPTH)
        elif kind == 6:
            depth = max(0, depth - 1)
        elif kind == 7:
            word = found.group(7).upper()
            if word == b"SERVICE":
                raise QueryError(f"{what}: SERVICE is refused: queries read only this collection")
            if word in _OPERATOR_WORDS:
                operators += 1
        elif kind == 8:
            operators += 1
        if operators > MAX_OPERATORS:
            raise QueryError(f"{what}: more than {MAX_OPERATORS} operators and separators: refused before parsing "
                             "(split the query, or list values in VALUES)")


class CheckedReader:
    """A binary file over ``source`` (bytes or an open file) that hands a parser only checked lines."""

    def __init__(self, source: bytes | BinaryIO, what: str, fmt: str = "nquads", limit: int = MAX_DEPTH) -> None:
        self._source = io.BytesIO(source) if isinstance(source, bytes) else source
        self._scanner = NestingScanner(what, fmt, limit)
        self._ready = b""
        self._done = False

    def read(self, size: int = -1) -> bytes:
        want = size if size is not None and size > 0 else _CHUNK
        while len(self._ready) < want and not self._done:
            chunk = self._source.read(_CHUNK)
            if chunk:
                self._ready += self._scanner.feed(chunk)
            else:
                self._ready += self._scanner.finish()
                self._done = True
        out, self._ready = self._ready[:want], self._ready[want:]
        return out

    def readable(self) -> bool:
        return True


def check_rdf(data: bytes, what: str, fmt: str = "nquads") -> None:
    """Refuse N-Quads/N-Triples/TriG ``data`` nested deeper than :data:`MAX_DEPTH` (QueryError, one line)."""
    scanner = NestingScanner(what, fmt)
    scanner.feed(data)
    scanner.finish()
