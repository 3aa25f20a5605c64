"""The SPARQL replica of a PostgreSQL collection: an Oxigraph server fed from the outbox gives the embedded store's
rows; it follows removals, survives a row applied twice, shows its lag in ``check`` and is rebuilt from PostgreSQL."""

from __future__ import annotations

import json
import uuid

import pytest

from provgraph.config import load_settings
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS

QUERIES = (
    "SELECT ?s ?o WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?o } ORDER BY ?s ?o",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g",
    "SELECT ?sg ?t WHERE { GRAPH <urn:graph:source> { ?sg <https://trustgraph.ai/ns/contains> ?t } } ORDER BY ?sg ?t",
    "ASK { ?s ?p ?o }",
)


def _rows(collection: str) -> list[str]:
    out = []
    for query in QUERIES:
        result = run("sparql", query, "--format", "json", "-C", collection)
        assert result.code == 0, result.err
        out.append(result.out)
    return out


def test_sparql_through_the_replica_gives_the_embedded_rows(pg_url: str, oxigraph_url: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"rep-{uuid.uuid4().hex[:8]}"

    def on_postgres(yes: bool) -> None:
        if yes:
            monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
            monkeypatch.setenv("PROVGRAPH_REPLICA_URL", oxigraph_url)
        else:
            monkeypatch.delenv("PROVGRAPH_STORE_URL", raising=False)
            monkeypatch.delenv("PROVGRAPH_REPLICA_URL", raising=False)

    assert run("load", str(CORPUS), "-C", "embedded").code == 0
    embedded = _rows("embedded")
    on_postgres(True)
    monkeypatch.delenv("PROVGRAPH_REPLICA_URL")
    assert run("load", str(CORPUS), "-C", name).code == 0
    refused = run("sparql", QUERIES[0], "-C", name)
    assert refused.code == 2 and "set PROVGRAPH_REPLICA_URL" in refused.err
    on_postgres(True)
    assert "SPARQL replica: not built (the first query builds it, or: provgraph replica rebuild)" in run("check", "-C", name).out
    rebuilt = run("replica", "rebuild", "-C", name)
    assert rebuilt.code == 0 and f"rebuilt the SPARQL replica of default/{name} at {oxigraph_url}" in rebuilt.out
    assert _rows(name) == embedded
    assert json.loads(embedded[0])["results"]["bindings"]  # real rows were compared
    with Runtime(load_settings(collection=name, llm="none")) as rt:  # a second replica keeps the outbox's rows
        rt.store._fetch("INSERT INTO {s}.replicas (url, applied) VALUES ('http://127.0.0.1:9/', 0) RETURNING 1")  # type: ignore[attr-defined]

    # writes after the rebuild reach the replica through the outbox: a removal and a question's trace
    for postgres in (False, True):
        on_postgres(postgres)
        collection = name if postgres else "embedded"
        assert run("documents", "remove", "urn:doc:radium_institute.txt", "-C", collection).code == 0
        assert run("graph-rag", "-q", "Who discovered polonium?", "-C", collection, "--no-trace").code == 0
    on_postgres(False)
    after = _rows("embedded")
    assert after != embedded
    on_postgres(True)
    behind = run("check", "-C", name)
    assert behind.code == 0 and behind.out.splitlines()[-1] == "SPARQL replica: 1 write(s) behind"
    assert _rows(name) == after  # a query catches up first
    assert run("check", "-C", name).out.splitlines()[-1] == "SPARQL replica: 0 write(s) behind"

    # every row applied a second time (a crash between an update and its record) changes nothing
    with Runtime(load_settings(collection=name, llm="none")) as rt:
        rt.store._fetch("UPDATE {s}.replicas SET applied = 0 RETURNING 1")  # type: ignore[attr-defined]
        assert rt.replica().sync() == 1
    assert _rows(name) == after
    rebuilt = run("replica", "rebuild", "-C", name)
    assert rebuilt.code == 0 and _rows(name) == after
    assert run("collections", "drop", name, "--yes").code == 0


def test_two_collections_on_one_server_each_get_their_own_rows(pg_url: str, oxigraph_url: str,
                                                               monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The first query builds the replica; a collection queried after another was rebuilt into the same server is
    rebuilt again first (never answered from the other's quads); dropping a collection forgets the server it held."""
    one, two = (f"rep-{uuid.uuid4().hex[:8]}" for _ in range(2))
    doc = tmp_path / "two.md"
    doc.write_text("# Two\n\nOnly the second collection holds this page.\n")
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    monkeypatch.setenv("PROVGRAPH_REPLICA_URL", oxigraph_url)
    assert run("load", str(CORPUS), "-C", one).code == 0
    assert run("load", str(doc), "-C", two).code == 0
    docs = "SELECT DISTINCT ?d WHERE { { ?d a <https://trustgraph.ai/ns/Document> } UNION { GRAPH ?g { ?d a <https://trustgraph.ai/ns/Document> } } } ORDER BY ?d"
    first = run("sparql", docs, "--format", "csv", "-C", one)  # never built: built now
    assert first.code == 0 and "urn:doc:radium_institute.txt" in first.out and "two.md" not in first.out
    second = run("sparql", docs, "--format", "csv", "-C", two)
    assert second.code == 0 and second.out.splitlines()[1:] and "radium" not in second.out
    assert "SPARQL replica: not built" in run("check", "-C", one).out  # the server now holds the other
    assert run("sparql", docs, "--format", "csv", "-C", one).out == first.out
    assert run("check", "-C", one).out.splitlines()[-1] == "SPARQL replica: 0 write(s) behind"
    with Runtime(load_settings(collection=one, llm="none")) as rt:
        holders = rt.store._fetch("SELECT url, schema_name FROM provgraph_replicas WHERE url = %s",  # type: ignore[attr-defined]
                                  (oxigraph_url.rstrip("/"),))
        assert holders == [(oxigraph_url.rstrip("/"), rt.store.schema)]  # type: ignore[attr-defined]
        assert rt.store._fetch("SELECT url FROM {s}.replicas") == [(oxigraph_url.rstrip("/"),)]  # type: ignore[attr-defined]
    assert run("collections", "drop", one, "--yes").code == 0
    with Runtime(load_settings(collection=two, llm="none")) as rt:
        assert rt.store._fetch("SELECT url FROM provgraph_replicas WHERE url = %s",  # type: ignore[attr-defined]
                               (oxigraph_url.rstrip("/"),)) == []
        assert rt.store._fetch("SELECT url FROM {s}.replicas") == []  # type: ignore[attr-defined]
    assert run("collections", "drop", two, "--yes").code == 0
