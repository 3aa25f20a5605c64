"""Compact expected-quad notation for builder tests: ``"s p o"`` lines with prefixes."""

from __future__ import annotations

from collections.abc import Iterable

from provgraph.rdf.terms import Quad
from provgraph.rdf.vocab import PREFIXES


def nq(quads: Iterable[Quad]) -> set[str]:
    """Quads as compact lines: prefixed IRIs, graph as a trailing ``@g``."""
    out = set()
    for q in quads:
        line = f"{q.s} {q.p} {q.o}"
        for prefix, base in PREFIXES.items():
            line = line.replace(f"<{base}", f"<{prefix}:")
        line = line.replace("^^<xsd:integer>", "^^int").replace("^^<xsd:double>", "^^dbl").replace("^^<xsd:dateTime>", "^^dt")
        out.add(line + ("" if q.g is None else f" @{q.g.value}"))
    return out
