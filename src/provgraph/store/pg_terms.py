"""The PostgreSQL store's term dictionary: every RDF term as a 64-bit id and a row.

A term's id is the first 8 bytes of BLAKE2b over its canonical N-Triples text (signed, as
PostgreSQL's ``bigint``), so writers compute ids without asking the database; 0 is the default
graph. A write checks that every id it did not insert itself names the same term (a collision
raises StoreError rather than merging two terms). A triple term's row points at its parts' ids.
PostgreSQL text cannot hold U+0000: such a value is stored JSON-escaped, flagged in ``kind``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from hashlib import blake2b
from typing import NamedTuple

from provgraph.rdf.terms import BlankNode, Iri, Literal, Term, TripleTerm

__all__ = ["DEFAULT_GRAPH", "TermRow", "term_id", "term_rows", "decode_row", "TRIPLE"]

DEFAULT_GRAPH = 0
IRI, BLANK, PLAIN, LANG, TYPED, TRIPLE = 1, 2, 3, 4, 5, 6
_ESCAPED = 16  # added to kind when value is JSON-escaped (it held U+0000)


class TermRow(NamedTuple):
    """A ``terms`` row: id, kind, value (lexical form, IRI, blank id; '' for a triple), extra (language
    or datatype IRI), and a triple term's part ids."""

    id: int
    kind: int
    value: str
    extra: str | None
    ts: int | None
    tp: int | None
    to: int | None


@lru_cache(maxsize=262_144)
def term_id(term: Term) -> int:
    """The term's dictionary id."""
    return int.from_bytes(blake2b(str(term).encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big",
                          signed=True)


def _stored(kind: int, value: str) -> tuple[int, str]:
    return (kind + _ESCAPED, json.dumps(value)) if "\x00" in value else (kind, value)


def _row(term: Term) -> TermRow:
    tid = term_id(term)
    if isinstance(term, Iri):
        return TermRow(tid, IRI, term.value, None, None, None, None)
    if isinstance(term, BlankNode):
        return TermRow(tid, BLANK, term.id, None, None, None, None)
    if isinstance(term, Literal):
        if term.language:
            kind, extra = LANG, term.language
        elif term.datatype is not None:
            kind, extra = TYPED, term.datatype.value
        else:
            kind, extra = PLAIN, None
        stored_kind, value = _stored(kind, term.value)
        return TermRow(tid, stored_kind, value, extra, None, None, None)
    return TermRow(tid, TRIPLE, "", None, term_id(term.s), term_id(term.p), term_id(term.o))


def term_rows(terms: Iterable[Term], into: dict[int, TermRow]) -> None:
    """Add the rows of ``terms`` and of every part of their triple terms to ``into`` (by id)."""
    stack = list(terms)
    while stack:
        term = stack.pop()
        tid = term_id(term)
        if tid in into:
            continue
        into[tid] = _row(term)
        if isinstance(term, TripleTerm):
            stack += (term.s, term.p, term.o)


def decode_row(kind: int, value: str, extra: str | None, parts: tuple[Term, Term, Term] | None) -> Term:
    """The term of a row (a triple term's parts already decoded)."""
    if kind >= _ESCAPED:
        kind, value = kind - _ESCAPED, json.loads(value)
    if kind == IRI:
        return Iri(value)
    if kind == BLANK:
        return BlankNode(value)
    if kind == PLAIN:
        return Literal(value)
    if kind == LANG:
        return Literal(value, language=extra)
    if kind == TYPED:
        return Literal(value, datatype=Iri(extra or ""))
    assert parts is not None
    return TripleTerm(*parts)  # type: ignore[arg-type]
