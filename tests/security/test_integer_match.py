"""The data-safety defect below provgraph: pyoxigraph 0.5.13's on-disk store answers
``quads_for_pattern(s, p, "1023"^^xsd:integer)`` with 1025 and 1030 as well. OxigraphStore's match and
count post-filter the object, so a support-counted removal gathers only the facts it names."""

from __future__ import annotations

from pathlib import Path

from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, TG
from provgraph.store.oxigraph import OxigraphStore
from provgraph.store.support import subgraph_removal

S, P = Iri("urn:s"), Iri("urn:p")
SG1, SG2 = Iri("urn:sg:1"), Iri("urn:sg:2")


def test_an_integer_pattern_on_disk_matches_only_its_integer(tmp_path: Path) -> None:
    with OxigraphStore(tmp_path / "store", name="u/c") as store:
        store.add([Quad(S, P, Literal.integer(n)) for n in (1023, 1025, 1030)])
        store.flush()
        assert [q.o for q in store.match(S, P, Literal.integer(1023))] == [Literal.integer(1023)]
        assert store.count(S, P, Literal.integer(1023)) == 1
        assert store.count(S, P, Literal.integer(1030)) == 1 and store.count(S, P) == 3
    with OxigraphStore(tmp_path / "store", name="u/c") as reopened:  # read back from RocksDB's files
        assert list(reopened.match(S, P, Literal.integer(1025))) == [Quad(S, P, Literal.integer(1025))]


def test_a_removal_on_disk_takes_only_the_integer_facts_it_names(tmp_path: Path) -> None:
    """The support-counted removal gathers a subgraph's facts and their support by match: without the post-filter
    the claims on the facts holding 1025 and 1030 count as support of 1023's, and the removal leaves it behind
    (the issue: matches on other integers make a removal take or keep facts it does not name)."""
    facts = {n: TripleTerm(S, P, Literal.integer(n)) for n in (1023, 1025, 1030)}
    with OxigraphStore(tmp_path / "store", name="u/c") as store:
        store.add([Quad(t.s, t.p, t.o) for t in facts.values()]
                  + [Quad(SG1, TG.contains, facts[1023], GRAPH_SOURCE)]
                  + [Quad(SG2, TG.contains, facts[n], GRAPH_SOURCE) for n in (1025, 1030)])
        store.flush()
        removal = set(subgraph_removal(store, [SG1]))
        assert {q for q in removal if q.g is None} == {Quad(S, P, Literal.integer(1023))}
        assert Quad(SG1, TG.contains, facts[1023], GRAPH_SOURCE) in removal
        assert not {q for q in removal if q.s == SG2}
