"""`check [--repair]`, the completion record, removal of entity vectors, `backup`/`restore`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from provgraph.config import Settings, load_settings
from provgraph.layout import CollectionRef
from provgraph.rdf.ids import document_iri
from provgraph.rdf.terms import Iri
from provgraph.runtime import Runtime
from tests.cli_runner import run

ONLY_B = "urn:provgraph:entity:frederick%20soddy"


def _write(tmp_path: Path) -> tuple[Path, Path]:
    a = tmp_path / "a.txt"
    a.write_text("Marie Curie discovered polonium in 1898. Pierre Curie worked with Marie Curie.", encoding="utf-8")
    b = tmp_path / "b.txt"
    b.write_text("Ernest Rutherford worked with Frederick Soddy. Marie Curie met Ernest Rutherford.", encoding="utf-8")
    return a, b


def _check(*extra: str, collection: str = "default") -> dict:
    r = run("check", "-C", collection, "--format", "json", *extra)
    data = json.loads(r.out)
    assert (r.code == 0) == data["consistent"]
    return data


def _kinds(data: dict, key: str = "problems") -> set[str]:
    return {p["kind"] for p in data[key]}


def _ids(index: str, collection: str = "default") -> set[str]:
    with Runtime(load_settings(collection=collection), create=False) as rt:
        return set(getattr(rt, index).ids())


def test_a_clean_load_is_consistent_and_complete(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    assert run("load", str(a), str(b)).code == 0
    checked = {k: v for k, v in _check().items() if k != "replica_pending"}  # a PostgreSQL collection's replica lag
    assert checked == {"collection": "default/default", "consistent": True, "documents": 2,
                       "quads": checked["quads"], "problems": [], "repaired": [], "remaining": []}
    with Runtime(load_settings(), create=False) as rt:
        assert rt.librarian.complete_documents() == {document_iri("a.txt").value, document_iri("b.txt").value}


def test_removing_a_document_drops_the_vectors_of_entities_it_alone_supported(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    assert run("load", str(a), str(b)).code == 0
    before = _ids("entity_index")
    assert ONLY_B in before and "urn:provgraph:entity:marie%20curie" in before
    assert run("documents", "remove", "b.txt").code == 0
    after = _ids("entity_index")
    assert ONLY_B not in after and "urn:provgraph:entity:ernest%20rutherford" not in after
    assert "urn:provgraph:entity:marie%20curie" in after  # a.txt still supports her
    assert not any(c for c in _ids("chunk_index") if c not in _ids("chunk_index"))
    assert _check()["consistent"]


def test_check_finds_and_repair_fixes_lost_vectors_and_orphans(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    assert run("load", str(a), str(b)).code == 0
    with Runtime(load_settings(), create=False) as rt:
        chunk = sorted(rt.chunk_index.ids())[0]
        rt.chunk_index.delete([chunk])
        rt.entity_index.delete([ONLY_B])
        rt.entity_index.upsert(["urn:provgraph:entity:nobody"], rt.embedder.embed(["nobody"]),
                               [{"entity": "urn:provgraph:entity:nobody", "label": "nobody", "chunks": []}])
        orphan_sg = Iri("urn:subgraph:orphan")
        rt.store.add([q for q in _orphan_subgraph(orphan_sg)])
    found = _check()
    assert {(p["kind"], p["subject"]) for p in found["problems"]} == {
        ("chunk-vector-missing", chunk), ("entity-vector-missing", ONLY_B),
        ("entity-vector-orphan", "urn:provgraph:entity:nobody"), ("orphan-subgraph", orphan_sg.value)}
    repaired = _check("--repair")
    assert repaired["consistent"] and repaired["remaining"] == [] and len(repaired["repaired"]) == 4
    assert _check()["consistent"]
    assert ONLY_B in _ids("entity_index") and chunk in _ids("chunk_index")


def _orphan_subgraph(sg: Iri) -> list:
    from provgraph.rdf.terms import Quad, TripleTerm
    from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, TG

    fact = TripleTerm(Iri("urn:provgraph:entity:ghost"), Iri("urn:provgraph:entity:rel/haunts"), Iri("urn:x"))
    return [Quad(sg, RDF.type, TG.Subgraph, GRAPH_SOURCE), Quad(sg, PROV.wasDerivedFrom, Iri("urn:chunk:gone"),
                                                                  GRAPH_SOURCE),
            Quad(sg, TG.contains, fact, GRAPH_SOURCE), Quad(fact.s, fact.p, fact.o)]


def test_a_document_without_its_completion_record_is_reported_and_redone(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    assert run("load", str(a), str(b)).code == 0
    with Runtime(load_settings(), create=False) as rt:
        rt.librarian.clear_complete(document_iri("b.txt").value)
        rt.chunk_index.delete_where({"document": document_iri("b.txt").value})  # vectors lost with the crash
    found = _check("--repair")
    assert _kinds(found, "remaining") == {"incomplete-document"}
    r = run("load", str(a), str(b), "--format", "json")
    assert {d["document"]: d["status"] for d in json.loads(r.out)["documents"]} == {
        document_iri("a.txt").value: "unchanged", document_iri("b.txt").value: "resumed"}
    assert _check()["consistent"]


@pytest.mark.embedded_only  # the embedded store's files
def test_bad_open_names_the_file_and_recreates_nothing(tmp_path: Path) -> None:
    a, _ = _write(tmp_path)
    assert run("load", str(a)).code == 0
    ref = CollectionRef(Path(load_settings().home), "default", "default")
    current = ref.store_dir / "CURRENT"
    current.rename(tmp_path / "CURRENT")
    files = sorted(p.name for p in ref.store_dir.iterdir())
    r = run("sparql", "SELECT * WHERE { ?s ?p ?o }")
    assert r.code == 4 and r.err.count("\n") == 1 and f"{current} is missing: restore a backup" in r.err
    assert sorted(p.name for p in ref.store_dir.iterdir()) == files  # nothing created over it
    (tmp_path / "CURRENT").rename(current)
    db = ref.librarian_dir / "librarian.sqlite3"
    saved = db.read_bytes()
    db.write_bytes(b"\0" * len(saved))
    r = run("documents", "list")
    assert r.code == 4 and f"{db} is damaged (not a SQLite file)" in r.err and r.out == ""
    assert db.read_bytes() == b"\0" * len(saved)
    db.write_bytes(saved)
    records = ref.vectors_dir / "chunks" / "records.sqlite"
    records.unlink()
    r = run("document-rag", "-q", "Who discovered polonium?")
    assert r.code == 4 and f"{records} is missing: run: provgraph check --repair" in r.err
    assert not records.exists()
    assert _kinds(_check()) == {"index-unreadable"}
    assert _check("--repair")["consistent"] and _check()["consistent"]


def test_never_created_is_not_the_same_as_vanished() -> None:
    r = run("documents", "list", "-C", "nosuch")
    assert r.code == 3 and "collection default/nosuch does not exist" in r.err


@pytest.mark.embedded_only  # backup archives the embedded store (PostgreSQL: export)
def test_backup_restore_round_trip_refuses_a_non_empty_target(tmp_path: Path) -> None:
    a, b = _write(tmp_path)
    assert run("load", str(a), str(b)).code == 0
    archive = tmp_path / "c.tar"
    r = run("backup", "-C", "default", str(archive))
    assert r.code == 0 and "2 document(s)" in r.out
    r = run("restore", str(archive), "-C", "default")
    assert r.code == 2 and "collection default/default is not empty" in r.err
    assert run("restore", str(archive), "-C", "copy").code == 0
    assert run("export", "-C", "copy").out == run("export", "-C", "default").out
    assert _ids("chunk_index", "copy") == _ids("chunk_index") and _ids("entity_index", "copy") == _ids("entity_index")
    assert _check(collection="copy")["consistent"]
    assert json.loads(run("documents", "list", "-C", "copy", "--format", "json").out) == json.loads(
        run("documents", "list", "--format", "json").out)
    assert run("documents", "remove", "a.txt", "-C", "copy").code == 0
    assert run("restore", str(archive), "-C", "copy", "--force").code == 0
    assert len(json.loads(run("documents", "list", "-C", "copy", "--format", "json").out)) == 2


def test_restore_rejects_what_is_not_a_backup(tmp_path: Path) -> None:
    bogus = tmp_path / "x.tar"
    bogus.write_bytes(b"not a tar")
    r = run("restore", str(bogus), "-C", "x")
    assert r.code == 2 and "not a provgraph backup" in r.err
    assert not CollectionRef(Path(load_settings().home), "default", "x").exists()


def test_import_says_it_restores_graph_data_only(tmp_path: Path) -> None:
    data = tmp_path / "d.nq"
    data.write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    r = run("import", str(data), "-C", "g")
    assert r.code == 0 and "graph data only" in r.out and "provgraph backup" in r.out


@pytest.mark.embedded_only  # the embedded librarian's SQLite schema
def test_a_collection_from_before_completion_records_counts_as_complete(tmp_path: Path) -> None:
    a, _ = _write(tmp_path)
    assert run("load", str(a)).code == 0
    settings: Settings = load_settings()
    db = CollectionRef(Path(settings.home), "default", "default").librarian_dir / "librarian.sqlite3"
    con = sqlite3.connect(db)
    con.execute("DROP TABLE completions")
    con.execute("PRAGMA user_version=1")
    con.commit()
    con.close()
    r = run("load", str(a), "--format", "json")
    assert json.loads(r.out)["documents"][0]["status"] == "unchanged"


def _answers(home: Path) -> list[tuple[str, str, list]]:
    import runpy

    demo = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "demo.py"))
    asked = [("graph-rag", q) for q in demo["QUESTIONS"]] + [("document-rag", demo["DOC_QUESTION"])]
    out = []
    for command, question in asked:
        r = run("--home", str(home), command, "-q", question, "-C", "corpus", "--format", "json", "--llm", "none")
        assert r.code == 0, r.err
        final = json.loads(r.out.strip().splitlines()[-1])
        sources = [{k: v for k, v in s.items() if k != "session_id"} for s in final["sources"]]
        out.append((question, final["answer"], sources))
    return out


@pytest.mark.embedded_only  # backup archives the embedded store (PostgreSQL: export)
def test_backup_then_restore_into_a_fresh_home_answers_every_demo_question_identically(
        corpus_settings: Settings, tmp_path: Path) -> None:
    home = Path(corpus_settings.home)
    archive = tmp_path / "corpus.tar"
    assert run("--home", str(home), "backup", "-C", "corpus", str(archive)).code == 0
    before = _answers(home)
    fresh = tmp_path / "fresh-home"
    r = run("--home", str(fresh), "restore", str(archive), "-C", "corpus")
    assert r.code == 0, r.err
    assert _answers(fresh) == before
    assert run("--home", str(fresh), "check", "-C", "corpus").code == 0
