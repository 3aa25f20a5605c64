"""provgraph on a PostgreSQL store (PROVGRAPH_STORE_URL): the runtime picks it, the commands that read
through the named operations work, the same corpus gives the same quads, records and vectors as on the embedded store."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.errors import ConfigError
from provgraph.librarian.postgres import PgLibrarian
from provgraph.runtime import Runtime
from provgraph.store.oxigraph import OxigraphStore
from provgraph.store.postgres import PostgresStore, list_pg_collections
from provgraph.vectors.pgvector_index import PgVectorIndex
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS

_STAMP = re.compile(rb'"\d{4}-\d\d-\d\dT[^"]*"\^\^<http://www.w3.org/2001/XMLSchema#dateTime>')


def _timeless(nquads: bytes) -> list[bytes]:
    return sorted(_STAMP.sub(b'"T"', line) for line in nquads.splitlines())


def test_the_runtime_picks_the_store_from_the_url(pg_url: str, tmp_path: Path) -> None:
    name = f"rt-{uuid.uuid4().hex[:8]}"
    with Runtime(load_settings(home=str(tmp_path), collection=name, store_url=pg_url, llm="none")) as rt:
        assert isinstance(rt.store, PostgresStore)
        with pytest.raises(ConfigError, match="its quads are in PostgreSQL"):
            rt.sparql_store  # noqa: B018
    with Runtime(load_settings(home=str(tmp_path), collection=name, llm="none")) as rt:
        assert isinstance(rt.store, OxigraphStore) and rt.sparql_store is rt.store
    with pytest.raises(ConfigError, match="must be a postgresql:// URL"):
        Runtime(load_settings(home=str(tmp_path), collection=name, store_url="mysql://x", llm="none")).store  # noqa: B018


def test_the_corpus_on_postgresql_has_the_embedded_quads(pg_url: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"corpus-{uuid.uuid4().hex[:8]}"
    assert run("load", str(CORPUS), "-C", "embedded").code == 0
    embedded = run("export", "-C", "embedded").out.encode()
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    loaded = run("load", str(CORPUS), "-C", name)
    assert loaded.code == 0, loaded.err
    assert _timeless(run("export", "-C", name).out.encode()) == _timeless(embedded)
    with Runtime(load_settings(collection="embedded", store_url="", llm="none")) as emb, \
            Runtime(load_settings(collection=name, store_url=pg_url, llm="none")) as rt:
        assert isinstance(rt.chunk_index, PgVectorIndex) and isinstance(rt.entity_index, PgVectorIndex)
        for mine, theirs in ((rt.chunk_index, emb.chunk_index), (rt.entity_index, emb.entity_index)):
            assert mine.ids() == sorted(theirs.ids()) and mine.get(mine.ids()) == theirs.get(mine.ids())
        assert not any(rt.ref.vectors_dir.rglob("records.sqlite"))  # the vectors are in PostgreSQL only
        assert isinstance(rt.librarian, PgLibrarian) and not (rt.ref.librarian_dir / "librarian.sqlite3").exists()
        assert rt.librarian.complete_documents() == emb.librarian.complete_documents()
        assert [(r.id, r.content_hash) for r in rt.librarian.list()] == \
            [(r.id, r.content_hash) for r in emb.librarian.list()]
    assert re.search(r"5 document\(s\), \d+ quads: consistent", run("check", "-C", name).out)
    tree = run("provenance", "urn:doc:radium_institute.txt", "-C", name)
    assert tree.code == 0 and "Claudius Regaud" in tree.out
    assert run("traces", "list", "-C", name).out.strip() == f"no traces in default/{name}"
    removed = run("documents", "remove", "urn:doc:radium_institute.txt", "-C", name)
    assert removed.code == 0 and re.search(r"removed urn:doc:radium_institute.txt \(\d+ quads\)", removed.out)
    assert re.search(r"4 document\(s\), \d+ quads: consistent", run("check", "-C", name).out)
    sparql = run("sparql", "SELECT * WHERE { ?s ?p ?o } LIMIT 1", "-C", name)
    assert sparql.code == 2 and "set PROVGRAPH_REPLICA_URL" in sparql.err
    assert run("collections", "drop", name, "--yes").code == 0
    assert ("default", name) not in list_pg_collections(pg_url)


def test_a_home_without_the_collection_lists_and_reads_it(pg_url: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL a collection is the database's, not a home's: one created and loaded from one home is listed and
    read from another (a second machine, a server replica); its local folder holds only derived parts."""
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    name = f"h-{uuid.uuid4().hex[:8]}"
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    assert run("--home", first, "load", str(CORPUS / "becquerel_rays.txt"), "-C", name).code == 0
    listed = run("--home", second, "collections", "list", "--format", "json")
    assert listed.code == 0 and {"user": "default", "collection": name} in json.loads(listed.out)
    shown = run("--home", second, "documents", "list", "-C", name)
    assert shown.code == 0 and "becquerel_rays.txt" in shown.out
