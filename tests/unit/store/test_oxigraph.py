from __future__ import annotations

from pathlib import Path

import pytest

from provgraph.errors import NotFound, QueryError, StoreUnavailable
from provgraph.layout import CollectionRef
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, RDFS, TG
from provgraph.rdf.terms import XSD_INTEGER
from provgraph.store import ANY, DEFAULT, OxigraphStore, create_collection, drop_collection, list_collections, open_store

S, P = Iri("urn:e:s"), Iri("urn:p:p")
OBJECTS = {
    "iri": Iri("urn:e:o"),
    "plain": Literal("42"),
    "lang": Literal("42", language="en"),
    "typed": Literal("42", datatype=XSD_INTEGER),
}
CONTAINS_Q = "SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains ?t } } ORDER BY ?sg"
HOSTILE = ['a b<c>"d{e}', "x } ; DROP ALL ; INSERT DATA { <a> <b> <c> } #", "new\nline", "😀 {}", "\\u0022", "'''"]


@pytest.fixture
def store() -> OxigraphStore:
    return OxigraphStore()


def _subgraphs_with(store: OxigraphStore, fact: TripleTerm) -> list[str]:
    return [row["sg"].value for row in store.select(CONTAINS_Q, bind={"t": fact})]  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_triple_term_round_trip_and_exact_containment(store: OxigraphStore, kind: str) -> None:
    facts = {k: TripleTerm(S, P, o) for k, o in OBJECTS.items()}
    store.add(Quad(Iri(f"urn:sg:{k}"), TG.contains, f, GRAPH_SOURCE) for k, f in facts.items())
    store.add([Quad(Iri("urn:sg:extra"), TG.contains, facts[kind], GRAPH_SOURCE)])
    assert [q.o for q in store.match(Iri(f"urn:sg:{kind}"), TG.contains)] == [facts[kind]]
    # found by pattern and by SPARQL: exactly the subgraphs holding THIS fact, not its look-alikes
    assert sorted(q.s.value for q in store.match(None, TG.contains, facts[kind])) == sorted([f"urn:sg:{kind}", "urn:sg:extra"])
    assert _subgraphs_with(store, facts[kind]) == sorted([f"urn:sg:{kind}", "urn:sg:extra"])


def test_fact_differing_only_by_language_or_datatype_is_not_found(store: OxigraphStore) -> None:
    store.add([Quad(Iri("urn:sg:1"), TG.contains, TripleTerm(S, P, Literal("42", language="en")), GRAPH_SOURCE)])
    assert _subgraphs_with(store, TripleTerm(S, P, Literal("42", language="fr"))) == []
    assert _subgraphs_with(store, TripleTerm(S, P, Literal("42"))) == []
    assert _subgraphs_with(store, TripleTerm(S, P, Literal("42", datatype=XSD_INTEGER))) == []


def test_default_graph_and_named_graphs_are_apart(store: OxigraphStore) -> None:
    store.add([Quad(S, P, Literal("k")), Quad(S, P, Literal("prov"), GRAPH_SOURCE)])
    assert [q.o for q in store.match(S, P, g=DEFAULT)] == [Literal("k")]
    assert [q.o for q in store.match(S, P, g=GRAPH_SOURCE)] == [Literal("prov")]
    assert store.count(S, P, g=ANY) == 2
    rows = store.select("SELECT ?o WHERE { ?s ?p ?o }")
    assert [r["o"] for r in rows] == [Literal("k")]  # SPARQL's default graph is the knowledge graph only


def test_apply_is_one_transaction(store: OxigraphStore) -> None:
    old, new = Quad(S, P, Literal("old")), Quad(S, P, Literal("new"))
    store.add([old])
    store.apply(remove=[old], add=[new])
    assert list(store.match(S, P)) == [new]
    store.apply(remove=[new], add=[new])  # idempotent replace
    assert list(store.match(S, P)) == [new]


@pytest.mark.parametrize("label", HOSTILE)
def test_hostile_labels_stay_data(store: OxigraphStore, label: str) -> None:
    q = Quad(S, RDFS.label, Literal(label))
    store.apply(add=[q])  # through the SPARQL-update path
    store.add([Quad(S, RDFS.label, Literal(label, language="en"))])
    assert store.count() == 2
    rows = store.select("SELECT ?s WHERE { ?s rdfs:label ?l }", bind={"l": Literal(label)})
    assert [r["s"] for r in rows] == [S]
    assert store.ask("ASK { ?s rdfs:label ?l }", bind={"l": Literal(label)})
    store.apply(remove=[q])
    assert store.count() == 1


def test_ask_construct_and_errors(store: OxigraphStore) -> None:
    store.add([Quad(S, P, Literal("v"))])
    assert store.ask("ASK { ?s <urn:p:p> 'v' }")
    assert store.construct("CONSTRUCT { ?s <urn:p:q> ?o } WHERE { ?s ?p ?o }") == [Quad(S, Iri("urn:p:q"), Literal("v"))]
    with pytest.raises(QueryError, match=r"collection memory: invalid SPARQL: error at 1:"):
        store.select("SELECT ?x WHERE {")
    with pytest.raises(QueryError, match="not a SELECT query"):
        store.select("ASK { ?s ?p ?o }")
    with pytest.raises(QueryError, match="invalid variable name"):
        store.select("SELECT ?x WHERE { ?x ?p ?o }", bind={"x} . ?a": S})


def _sample() -> list[Quad]:
    facts = [TripleTerm(S, P, o) for o in OBJECTS.values()]
    quads = [Quad(S, P, o) for o in OBJECTS.values()]
    quads += [Quad(Iri("urn:sg:1"), TG.contains, f, GRAPH_SOURCE) for f in facts]
    quads += [Quad(S, RDFS.label, Literal(h)) for h in HOSTILE]
    quads.append(Quad(Iri("urn:q:1"), TG.query, Literal("?"), Iri("urn:graph:retrieval")))
    return quads


@pytest.mark.parametrize("fmt", ["nquads", "trig"])
def test_export_import_gives_the_identical_set(store: OxigraphStore, fmt: str) -> None:
    store.add(_sample())
    data = store.export_bytes(fmt)  # type: ignore[arg-type]
    fresh = OxigraphStore()
    assert fresh.import_data(data, fmt) == len(_sample())  # type: ignore[arg-type]
    assert set(fresh.match()) == set(store.match()) == set(_sample())


def test_import_with_syntax_error_imports_nothing(store: OxigraphStore) -> None:
    data = b"<urn:a> <urn:b> <urn:c> .\n<urn:a> <urn:b> <urn:c> <urn:d> <urn:e> .\n"
    with pytest.raises(QueryError, match=r"line 2"):
        store.import_data(data)
    assert store.count() == 0


def test_collections_are_isolated(tmp_path: Path) -> None:
    refs = [CollectionRef(tmp_path, "alice", "c"), CollectionRef(tmp_path, "alice", "d"), CollectionRef(tmp_path, "bob", "c")]
    for i, ref in enumerate(refs):
        with open_store(ref) as st:
            st.add([Quad(S, P, Literal(str(i))), Quad(Iri("urn:sg:x"), TG.contains, TripleTerm(S, P, Literal(str(i))), GRAPH_SOURCE)])
    for i, ref in enumerate(refs):
        with open_store(ref, create=False) as st:
            assert [q.o for q in st.match(S, P)] == [Literal(str(i))]
            assert [r["o"] for r in st.select("SELECT ?o WHERE { ?s ?p ?o }")] == [Literal(str(i))]
            assert st.count() == 2
    assert [(c.user, c.collection) for c in list_collections(tmp_path)] == [("alice", "c"), ("alice", "d"), ("bob", "c")]
    assert [(c.user, c.collection) for c in list_collections(tmp_path, "bob")] == [("bob", "c")]
    drop_collection(refs[0])
    with pytest.raises(NotFound, match="alice/c does not exist"):
        open_store(refs[0], create=False)
    assert create_collection(refs[1]) is False


def test_persistence_and_single_writer(tmp_path: Path) -> None:
    ref = CollectionRef(tmp_path, "u", "c")
    st = open_store(ref)
    st.add([Quad(S, P, Literal("kept"))])
    with pytest.raises(StoreUnavailable, match="open in another provgraph process"):
        OxigraphStore(ref.store_dir, name=str(ref))
    st.close()
    with open_store(ref) as again:
        assert [q.o for q in again.match()] == [Literal("kept")]


def test_bad_names_cannot_escape(tmp_path: Path) -> None:
    from provgraph.errors import InputError

    for bad in ("../x", ".hidden", "a/b", "", "x" * 65):
        with pytest.raises(InputError, match="invalid collection name"):
            CollectionRef(tmp_path, "u", bad)
