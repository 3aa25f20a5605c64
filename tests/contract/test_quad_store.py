"""The QuadStore protocol's writes, pattern reads, files and generations behave alike on every backend."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from provgraph.errors import QueryError
from provgraph.rdf.terms import BlankNode, Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, GRAPH_SOURCE
from provgraph.store.base import ANY, DEFAULT, QuadStore
from provgraph.store.oxigraph import IMPORT_BATCH, OxigraphStore
from tests.contract.data import AB, NQUADS

X, Y, P = Iri("urn:t:x"), Iri("urn:t:y"), Iri("urn:t:p")
FACT = TripleTerm(X, P, Literal("v", language="en"))
QUADS = [Quad(X, P, Y), Quad(X, P, Literal("a\nb \"q\" \x00 é")), Quad(BlankNode("b1"), P, FACT, GRAPH_SOURCE),
         Quad(Iri("urn:t:sg"), P, TripleTerm(X, P, FACT), GRAPH_SOURCE), Quad(X, P, Y, GRAPH_RETRIEVAL)]


def test_add_is_idempotent_and_pattern_reads_are_exact(empty_store: QuadStore) -> None:
    assert empty_store.add(QUADS) == 5
    assert empty_store.add(QUADS[:2]) == 2
    assert len(empty_store) == 5
    assert set(empty_store.match()) == set(QUADS)
    assert set(empty_store.match(X, g=DEFAULT)) == set(QUADS[:2])
    assert set(empty_store.match(X, P, Y, g=ANY)) == {QUADS[0], QUADS[4]}
    assert list(empty_store.match(o=FACT)) == [QUADS[2]]
    assert list(empty_store.match(o=TripleTerm(X, P, FACT), g=GRAPH_SOURCE)) == [QUADS[3]]
    assert list(empty_store.match(p=Y)) == []
    assert empty_store.count(X) == 3 and empty_store.count(g=GRAPH_SOURCE) == 2 and empty_store.count() == 5


def test_an_integer_object_matches_only_itself(empty_store: QuadStore) -> None:
    empty_store.add([Quad(X, P, Literal.integer(n)) for n in range(1000, 1100)])
    assert [q.o for q in empty_store.match(None, P, Literal.integer(1023))] == [Literal.integer(1023)]
    assert empty_store.count(o=Literal.integer(1050)) == 1


def test_apply_replaces_in_one_write(empty_store: QuadStore) -> None:
    empty_store.add(QUADS)
    gone = [QUADS[0], QUADS[1], QUADS[3]]  # (the embedded store cannot remove blank nodes: SPARQL's DELETE DATA)
    empty_store.apply(remove=gone, add=[Quad(Y, P, X)])
    assert set(empty_store.match()) == {QUADS[2], QUADS[4], Quad(Y, P, X)}
    empty_store.apply(remove=[Quad(Y, P, X)])
    empty_store.apply(remove=[Quad(Y, P, X)])  # idempotent
    assert set(empty_store.match()) == {QUADS[2], QUADS[4]}


def test_generations_follow_the_graphs_written(empty_store: QuadStore) -> None:
    before = (empty_store.generation, empty_store.knowledge_generation, empty_store.source_generation)
    empty_store.add([Quad(X, P, Y, GRAPH_RETRIEVAL)])
    traces = (empty_store.generation, empty_store.knowledge_generation, empty_store.source_generation)
    assert traces[0] > before[0] and traces[1:] == before[1:]
    empty_store.add([Quad(X, P, Y, GRAPH_SOURCE)])
    assert empty_store.knowledge_generation == traces[1] and empty_store.source_generation > traces[2]
    empty_store.add([Quad(X, P, Y)])
    assert empty_store.knowledge_generation > traces[1]


def test_a_syntax_error_imports_nothing(empty_store: QuadStore) -> None:
    with pytest.raises(QueryError, match=r"cannot import nquads \(line 2\)"):
        empty_store.import_data(b"<urn:t:a> <urn:t:b> <urn:t:c> .\n<urn:t:a> <urn:t:b> .\n")
    assert len(empty_store) == 0


def test_an_import_of_several_batches_is_whole_or_nothing(empty_store: QuadStore) -> None:
    n = IMPORT_BATCH + 7
    text = "".join(f'<urn:t:s{i}> <urn:t:p> "{i}" <urn:t:g> .\n' for i in range(n)).encode()
    with pytest.raises(QueryError, match=rf"cannot import nquads \(line {n + 1}\)"):
        empty_store.import_data(text + b"<urn:t:a> <urn:t:b> .\n")
    assert len(empty_store) == 0
    assert empty_store.import_data(text) == n == len(empty_store)
    assert empty_store.count(Iri("urn:t:s7"), Iri("urn:t:p")) == 1


def test_export_is_byte_identical_to_the_embedded_export(empty_store: QuadStore, tmp_path: Path) -> None:
    empty_store.import_data(NQUADS)
    embedded = OxigraphStore(tmp_path / "reference")  # on disk, as collections are (memory orders differently)
    embedded.import_data(NQUADS)
    assert empty_store.export_bytes() == embedded.export_bytes()
    assert empty_store.export_bytes("trig") == embedded.export_bytes("trig")
    out = io.BytesIO()
    empty_store.export(out)
    assert out.getvalue() == embedded.export_bytes() and str(AB).encode() in out.getvalue()
    empty_store.flush()
