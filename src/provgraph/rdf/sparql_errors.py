"""What a SPARQL text that does not parse as a query says to a person: one readable line.

The parser lists every character class it expected (several lines of ``'\\u{00C0}'..='\\u{00D6}'``); an
unknown prefix is named instead, with the predefined ones, and an update is told that queries
are read-only here.

>>> syntax_message("SELECT * WHERE { ?s foo:p ?o }", "error at 1:26: expected one of Prefix not found, ['%']")
"error at 1:26: unknown prefix 'foo:' (predefined: prov: rdf: rdfs: xsd: dc: skos: owl: tg:; declare it with PREFIX foo: <…>)"
"""

from __future__ import annotations

import re

from provgraph.rdf.vocab import PREFIXES

__all__ = ["is_update", "syntax_message", "READ_ONLY"]

READ_ONLY = ("SPARQL is read-only here: this is an update (INSERT, DELETE, LOAD, CLEAR…), not a query; "
             "change data with provgraph load, documents remove or import")
_POSITION = re.compile(r"^error at (\d+):(\d+): ")
_PROLOGUE = re.compile(r"\A(?:\s+|#[^\n]*\n?|(?:PREFIX\s+[\w.-]*:\s*<[^>]*>)|(?:BASE\s*<[^>]*>))*", re.IGNORECASE)
_UPDATE = re.compile(r"(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.IGNORECASE)
_PREFIXED = re.compile(r"([A-Za-z][\w.-]*)?:$")
_MAX = 240


def is_update(text: str) -> bool:
    """Whether ``text`` (after its PREFIX/BASE prologue and comments) starts as a SPARQL update."""
    return _UPDATE.match(text, _PROLOGUE.match(text).end()) is not None  # type: ignore[union-attr]


def syntax_message(text: str, message: str) -> str:
    """The parser's ``message`` on ``text`` as one line: an unknown prefix named, a long list shortened."""
    flat = " ".join(message.split())
    position = _POSITION.match(flat)
    if "Prefix not found" in flat and position:
        prefix = _prefix_before(text, int(position.group(1)), int(position.group(2)))
        known = " ".join(f"{p}:" for p in PREFIXES)
        name = f"'{prefix}:'" if prefix is not None else "a prefix"
        declare = f"PREFIX {prefix}: <…>" if prefix is not None else "PREFIX"
        return f"{position.group(0)}unknown prefix {name} (predefined: {known}; declare it with {declare})"
    if len(flat) > _MAX:  # the rest of "expected one of …" lists character classes, not words
        cut = flat.rfind(", ", 0, _MAX)
        flat = flat[: cut if cut > 0 else _MAX] + ", …"
    return flat


def _prefix_before(text: str, line: int, column: int) -> str | None:
    """The prefix name ending just before 1-based ``line``:``column`` (the parser stops after its colon)."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    head = lines[line - 1][: max(column - 1, 0)]
    for end in range(len(head), 0, -1):  # the colon may be at or just before the reported column
        found = _PREFIXED.search(head[:end])
        if found:
            return found.group(1) or ""
    return None
