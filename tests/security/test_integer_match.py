"""The data-safety defect below provgraph: pyoxigraph 0.5.13's on-disk store answers
``quads_for_pattern(s, p, "1023"^^xsd:integer)`` with 1025 and 1030 as well. OxigraphStore's match and
count post-filter the object, so a support-counted removal gathers only the facts it names."""

from __future__ import annotations

from pathlib import Path

from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.store.oxigraph import OxigraphStore

S, P = Iri("urn:s"), Iri("urn:p")


def test_an_integer_pattern_on_disk_matches_only_its_integer(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store", name="u/c") as store:
        store.add([Quad(S, P, Literal.integer(n)) for n in (1023, 1025, 1030)])
        store.flush()
        assert [q.o for q in store.match(S, P, Literal.integer(1023))] == [Literal.integer(1023)]
        assert store.count(S, P, Literal.integer(1023)) == 1
        assert store.count(S, P, Literal.integer(1030)) == 1 and store.count(S, P) == 3
    with OxigraphStore(tmp_path / "store", name="u/c") as reopened:  # read back from RocksDB's files
        assert list(reopened.match(S, P, Literal.integer(1025))) == [Quad(S, P, Literal.integer(1025))]
