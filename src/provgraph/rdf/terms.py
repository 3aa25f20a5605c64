"""Immutable, hashable RDF 1.2 terms and quads with a canonical N-Triples form.

>>> str(Iri("urn:doc:a"))
'<urn:doc:a>'
>>> str(Literal("chat", language="fr"))
'"chat"@fr'
>>> str(Literal.integer(3))
'"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
>>> str(TripleTerm(Iri("urn:s"), Iri("urn:p"), Literal("o")))
'<<( <urn:s> <urn:p> "o" )>>'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Union

from provgraph.errors import InputError

__all__ = [
    "Iri",
    "Literal",
    "BlankNode",
    "TripleTerm",
    "Quad",
    "Term",
    "Subject",
    "XSD_STRING",
    "XSD_INTEGER",
    "XSD_DOUBLE",
    "XSD_DATETIME",
    "RDF_LANG_STRING",
]

_XSD = "http://www.w3.org/2001/XMLSchema#"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# a scheme, then none of the characters RFC 3987 forbids in an IRI (and N-Triples' IRIREF rejects)
_VALID_IRI = re.compile(r'[A-Za-z][A-Za-z0-9+.\-]*:[^\x00-\x20<>"{}|^`\\]*')
_LANG = re.compile(r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$")
_BNODE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True, slots=True)
class Iri:
    """An absolute IRI. Raises :class:`InputError` for text an IRI cannot hold."""

    value: str

    def __post_init__(self) -> None:
        if not _VALID_IRI.fullmatch(self.value):
            raise InputError(f"not a valid absolute IRI: {self.value!r} (use rdf.mint_iri for arbitrary text)")

    def __str__(self) -> str:
        return f"<{self.value}>"


XSD_STRING = Iri(_XSD + "string")
XSD_INTEGER = Iri(_XSD + "integer")
XSD_DOUBLE = Iri(_XSD + "double")
XSD_DATETIME = Iri(_XSD + "dateTime")
RDF_LANG_STRING = Iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


_NEEDS_ESCAPE = re.compile('[\\\\"\x00-\x1f\x7f]')


def _escape_one(match: re.Match[str]) -> str:
    ch = match.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04X}"


def _escape(text: str) -> str:
    return _NEEDS_ESCAPE.sub(_escape_one, text)


@dataclass(frozen=True, slots=True)
class Literal:
    """A literal: plain (xsd:string), language-tagged, or typed.

    A plain literal and one typed ``xsd:string`` are the same term (RDF 1.1+), so
    ``datatype`` is normalised to ``None`` for ``xsd:string``. Language tags are lower-cased.
    """

    value: str
    language: str | None = None
    datatype: Iri | None = None

    def __post_init__(self) -> None:
        if self.language is None and type(self.value) is str:  # the common case: plain or typed
            if self.datatype is not None and self.datatype == XSD_STRING:
                object.__setattr__(self, "datatype", None)
            return
        if not isinstance(self.value, str):
            raise InputError(f"literal value must be text, got {type(self.value).__name__}")
        if self.language is not None:
            if not _LANG.match(self.language):
                raise InputError(f"not a valid language tag: {self.language!r}")
            if self.datatype is not None and self.datatype != RDF_LANG_STRING:
                raise InputError("a literal has either a language tag or a datatype, not both")
            object.__setattr__(self, "language", self.language.lower())
            object.__setattr__(self, "datatype", None)
        elif self.datatype == XSD_STRING:
            object.__setattr__(self, "datatype", None)

    @classmethod
    def integer(cls, n: int) -> Literal:
        """An ``xsd:integer`` literal."""
        return cls(str(int(n)), datatype=XSD_INTEGER)

    @classmethod
    def double(cls, x: float) -> Literal:
        """An ``xsd:double`` literal."""
        return cls(repr(float(x)), datatype=XSD_DOUBLE)

    @classmethod
    def timestamp(cls, when: datetime) -> Literal:
        """An ``xsd:dateTime`` literal in UTC, written with a ``Z``."""
        if when.tzinfo is None:
            raise InputError("times must be timezone-aware")
        utc = when.astimezone(timezone.utc).replace(tzinfo=None)
        # canonical lexical form (as stores give it back): fraction without trailing zeros
        text = utc.isoformat(timespec="microseconds").rstrip("0").rstrip(".")
        return cls(text + "Z", datatype=XSD_DATETIME)

    def to_python(self) -> str | int | float | datetime:
        """The value as a Python object for the known datatypes, else the lexical form."""
        if self.datatype == XSD_INTEGER:
            return int(self.value)
        if self.datatype == XSD_DOUBLE:
            return float(self.value)
        if self.datatype == XSD_DATETIME:
            return datetime.fromisoformat(self.value.replace("Z", "+00:00"))
        return self.value

    def __str__(self) -> str:
        text = f'"{_escape(self.value)}"'
        if self.language:
            return f"{text}@{self.language}"
        if self.datatype is not None:
            return f"{text}^^{self.datatype}"
        return text


@dataclass(frozen=True, slots=True)
class BlankNode:
    """A blank node with a local identifier."""

    id: str

    def __post_init__(self) -> None:
        if not _BNODE.match(self.id):
            raise InputError(f"not a valid blank node id: {self.id!r}")

    def __str__(self) -> str:
        return f"_:{self.id}"


@dataclass(frozen=True, slots=True)
class TripleTerm:
    """An RDF 1.2 triple term ``<<( s p o )>>``; it may only stand in object position."""

    s: Iri | BlankNode
    p: Iri
    o: Term
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_triple(self.s, self.p, self.o)
        object.__setattr__(self, "_hash", hash((self.s, self.p, self.o)))

    def __hash__(self) -> int:  # computed once: triple terms key the sets and maps of every walk
        return self._hash

    def __reduce__(self) -> tuple[type[TripleTerm], tuple[Subject, Iri, Term]]:
        return TripleTerm, (self.s, self.p, self.o)  # rebuilt, so the hash is this process's

    def __str__(self) -> str:
        return f"<<( {self.s} {self.p} {self.o} )>>"


_SUBJECTS = frozenset({Iri, BlankNode})
_OBJECTS = frozenset({Iri, BlankNode, Literal, TripleTerm})


def _check_triple(s: object, p: object, o: object) -> None:
    if type(p) is Iri and type(s) in _SUBJECTS and type(o) in _OBJECTS:  # exact types: no need to look further
        return
    if not isinstance(s, (Iri, BlankNode)):
        raise InputError(f"a triple's subject must be an IRI or blank node, got {s!r}")
    if not isinstance(p, Iri):
        raise InputError(f"a triple's predicate must be an IRI, got {p!r}")
    if not isinstance(o, (Iri, BlankNode, Literal, TripleTerm)):
        raise InputError(f"not an RDF term: {o!r}")


Term = Union[Iri, Literal, BlankNode, TripleTerm]
Subject = Union[Iri, BlankNode]


@dataclass(frozen=True, slots=True)
class Quad:
    """A statement in a named graph; ``g=None`` is the default graph."""

    s: Subject
    p: Iri
    o: Term
    g: Iri | None = None

    def __post_init__(self) -> None:
        _check_triple(self.s, self.p, self.o)
        if self.g is not None and not isinstance(self.g, Iri):
            raise InputError(f"a graph name must be an IRI, got {self.g!r}")

    @property
    def triple(self) -> TripleTerm:
        """The quad's statement as a triple term."""
        return TripleTerm(self.s, self.p, self.o)

    def in_graph(self, g: Iri | None) -> Quad:
        """The same statement in another graph."""
        return Quad(self.s, self.p, self.o, g)

    def __str__(self) -> str:
        """The canonical N-Quads line, without the trailing newline."""
        graph = f" {self.g}" if self.g is not None else ""
        return f"{self.s} {self.p} {self.o}{graph} ."
