"""The quad store contract every backend satisfies (structurally; no inheritance needed).

Writes are batches: one call, one transaction — all of it is written or none of it.
Reads see the default graph and named graphs separately: ``match(g=DEFAULT)`` is the default
graph only, ``match(g=ANY)`` every graph. SPARQL queries see the store's real default graph
(extracted knowledge) unless they name a graph with ``GRAPH``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from enum import Enum
from pathlib import Path
from typing import BinaryIO, Literal, Protocol

from provgraph.rdf.terms import Iri, Quad, Subject, Term
from provgraph.store.queries import NamedQueries

__all__ = ["QuadStore", "ANY", "DEFAULT", "GraphSel", "Row", "RdfFormat", "SelectResult"]


class _Sel(Enum):
    ANY = "any"


ANY = _Sel.ANY  #: match quads in every graph
DEFAULT = None  #: match quads in the default graph only
GraphSel = Iri | None | _Sel

Row = dict[str, Term]
RdfFormat = Literal["nquads", "trig"]


class SelectResult:
    """Rows of a SPARQL SELECT with its variable names in query order."""

    def __init__(self, variables: list[str], rows: list[Row]) -> None:
        self.variables = variables
        self.rows = rows

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


class QuadStore(NamedQueries, Protocol):
    """A collection's quads: knowledge (default graph), provenance and traces (named graphs).

    The generations grow with writes (derived caches compare against them): ``generation`` with every
    write, ``knowledge_generation`` with writes that may touch the default graph, ``source_generation``
    with writes that may touch any graph but the traces'. The fixed-shape reads are the named
    operations of :class:`~provgraph.store.queries.NamedQueries`.
    """

    name: str

    @property
    def generation(self) -> int: ...

    @property
    def knowledge_generation(self) -> int: ...

    @property
    def source_generation(self) -> int: ...

    def add(self, quads: Iterable[Quad]) -> int:
        """Add quads in one transaction; returns how many were given. Idempotent."""
        ...

    def bulk_add(self, quads: Iterable[Quad]) -> int:
        """Add many quads as fast as the backend can; it may leave part of them written on failure."""
        ...

    def apply(self, *, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add in ONE transaction (replace). Idempotent. Raises StoreError."""
        ...

    def match(
        self, s: Subject | None = None, p: Iri | None = None, o: Term | None = None, *, g: GraphSel = ANY
    ) -> Iterator[Quad]:
        """Quads matching a pattern; ``None`` is a wildcard for s, p, o; ``o`` may be a triple term."""
        ...

    def count(self, s: Subject | None = None, p: Iri | None = None, o: Term | None = None, *, g: GraphSel = ANY) -> int:
        """How many quads match the pattern."""
        ...

    def __len__(self) -> int:
        """How many quads the store holds."""
        ...

    def select(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> SelectResult:
        """Run a SPARQL SELECT; user values go in ``bind`` (never into the query text). Raises QueryError."""
        ...

    def ask(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> bool:
        """Run a SPARQL ASK."""
        ...

    def construct(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> list[Quad]:
        """Run a SPARQL CONSTRUCT; the triples come back as default-graph quads."""
        ...

    def export(self, out: BinaryIO, fmt: RdfFormat = "nquads") -> None:
        """Write every quad of every graph to ``out``."""
        ...

    def export_bytes(self, fmt: RdfFormat = "nquads") -> bytes:
        """Every quad, serialised (the same bytes ``export`` writes)."""
        ...

    def import_data(self, data: bytes | Path, fmt: RdfFormat = "nquads") -> int:
        """Load N-Quads or TriG atomically (a syntax error imports nothing); returns quads added."""
        ...

    def flush(self) -> None:
        """Make every write so far durable (raises StoreError when it cannot)."""
        ...

    def close(self) -> None:
        """Release the store (and its lock)."""
        ...
