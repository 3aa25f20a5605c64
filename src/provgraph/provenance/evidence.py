"""Sentence evidence of a subgraph's facts: ONE compact literal per subgraph (docs/trace-format.md).

``<sg> tg:evidence "0:57 58:112 -"``: one entry per contained fact, in the order of the facts'
canonical N-Triples forms (``str(TripleTerm)``, sorted), each ``offset:length`` of the supporting
sentence(s) in the chunk's text (Unicode code points), or ``-`` when no span is known. One quad,
whatever N is, keeps a subgraph within N + 14 quads (N + 15 with an ontology).

>>> from provgraph.rdf.terms import Iri, Literal, TripleTerm
>>> a = TripleTerm(Iri("urn:e:a"), Iri("urn:p:x"), Literal("1"))
>>> b = TripleTerm(Iri("urn:e:b"), Iri("urn:p:x"), Literal("2"))
>>> encode_evidence([b, a], {b: (10, 5)})
'- 10:5'
>>> decode_evidence('- 10:5', [a, b]) == {b: (10, 5)}
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from provgraph.rdf.terms import TripleTerm

__all__ = ["Span", "canonical_order", "encode_evidence", "decode_evidence"]

Span = tuple[int, int]
_ENTRY = re.compile(r"(\d+):(\d+)")


def canonical_order(facts: Iterable[TripleTerm]) -> list[TripleTerm]:
    """Distinct facts sorted by their canonical N-Triples form."""
    return sorted(set(facts), key=str)


def encode_evidence(facts: Iterable[TripleTerm], spans: Mapping[TripleTerm, Span]) -> str | None:
    """The literal for a subgraph's facts, or None when no fact has a span (nothing is written)."""
    ordered = canonical_order(facts)
    if not any(f in spans for f in ordered):
        return None
    return " ".join(f"{spans[f][0]}:{spans[f][1]}" if f in spans else "-" for f in ordered)


def decode_evidence(text: str, facts: Iterable[TripleTerm]) -> dict[TripleTerm, Span]:
    """Spans by fact; an entry count that does not match the facts gives nothing (never a wrong span)."""
    ordered = canonical_order(facts)
    entries = text.split()
    if len(entries) != len(ordered):
        return {}
    out: dict[TripleTerm, Span] = {}
    for fact, entry in zip(ordered, entries):
        found = _ENTRY.fullmatch(entry)
        if found:
            out[fact] = (int(found.group(1)), int(found.group(2)))
    return out
