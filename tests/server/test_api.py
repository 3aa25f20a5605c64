"""``provgraph serve`` over HTTP: a real server process, tokens, isolation, SSE, WebSocket, limits, client."""

from __future__ import annotations

import asyncio
import inspect
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import httpx
import pytest

from provgraph import AsyncClient, Client, Provgraph
from provgraph.api.tokens import TokenStore
from provgraph.config import load_settings
from provgraph.errors import InputError, NotFound
from provgraph.events import Explain, Final
from provgraph.explain.model import GraphRagTrace, Trace
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.ingest.pipeline import LoadResult
from provgraph.explain.traces import list_traces
from provgraph.rdf.vocab import TG
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS, corpus_module_env
from tests.server.live import LiveServer, corpus_copy, free_port, live_server, user_tokens
from tests.server.test_remote_cli import normalised

pytestmark = pytest.mark.server

Q = "Who discovered polonium?"


class Api:
    def __init__(self, server: LiveServer, tokens: dict[str, str], local: Path) -> None:
        self.server = server
        self.tokens = tokens
        self.local = local

    def http(self, user: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return httpx.Client(base_url=self.server.url + "/api/v1", headers=headers, timeout=60)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[Api]:
    home = corpus_copy(tmp_path_factory, _corpus_home, "api")
    local = corpus_copy(tmp_path_factory, _corpus_home, "api-local")
    tokens = user_tokens(home, "default", "bob")
    # 2 MB: a backup of the corpus (0.8 MB) with the module's traces (70 KB a GraphRAG trace) is restored in one body
    with live_server(home, "--max-body-mb", "2", "--concurrency", "3", env=corpus_module_env("api")) as server:
        yield Api(server, tokens, local)


def test_requests_need_a_valid_token(api: Api) -> None:
    with api.http(None) as anon:
        r = anon.get("/collections")
        assert r.status_code == 401
        assert r.json()["error"]["type"] == "Unauthorized"
        assert anon.get("/collections", headers={"Authorization": "Bearer pgt_wrong"}).status_code == 401
        assert anon.get("/health").status_code == 200
    with api.http("bob") as bob:
        assert bob.get("/whoami").json() == {"user": "bob"}


def test_a_revoked_token_is_refused_at_once(api: Api) -> None:
    store = TokenStore(api.server.home)
    info, text = store.create("carol")
    with httpx.Client(base_url=api.server.url + "/api/v1", headers={"Authorization": f"Bearer {text}"}) as carol:
        assert carol.get("/whoami").json() == {"user": "carol"}
        store.revoke(info.id)
        assert carol.get("/whoami").status_code == 401


def test_another_users_collections_do_not_exist_for_bob(api: Api) -> None:
    with api.http("default") as owner:
        assert {"user": "default", "collection": "corpus"} in owner.get("/collections").json()
    with api.http("bob") as bob:
        assert bob.get("/collections").json() == []
        missing = "collection bob/corpus does not exist (create it with: provgraph collections create)"
        for method, path, body in [
            ("GET", "/collections/corpus/documents", None),
            ("GET", "/collections/corpus/documents/becquerel_rays.txt", None),
            ("GET", "/collections/corpus/provenance/becquerel_rays.txt", None),
            ("GET", "/collections/corpus/traces", None),
            ("GET", "/collections/corpus/export", None),
            ("POST", "/collections/corpus/sparql", {"query": "ASK { ?s ?p ?o }"}),
            ("POST", "/graph-rag", {"collection": "corpus", "question": Q}),
            ("POST", "/document-rag", {"collection": "corpus", "question": Q}),
            ("DELETE", "/collections/corpus/documents/becquerel_rays.txt", None),
            ("GET", "/collections/corpus/traces/some-session", None),
            ("DELETE", "/collections/corpus/traces/some-session", None),
            ("DELETE", "/collections/corpus/traces?before=2999-01-01", None),
            ("POST", "/collections/corpus/extract", {"chunks": []}),
            ("GET", "/collections/corpus/backup", None),
            ("GET", "/collections/corpus/check", None),
            ("POST", "/collections/corpus/repair", None),
        ]:
            r = bob.request(method, path, json=body)
            assert r.status_code == 404, (path, r.text)
            assert r.json()["error"] == {"type": "NotFound", "message": missing}, path
        r = bob.delete("/collections/corpus")
        assert (r.status_code, r.json()["error"]["message"]) == (404, "collection bob/corpus does not exist")
    r = run("--url", api.server.url, "--token", api.tokens["bob"], "documents", "list", "-C", "corpus", "-U", "default")
    assert (r.code, r.err) == (3, "error: collection default/corpus does not exist "
                                  "(create it with: provgraph collections create)\n")
    with api.http("default") as owner:  # still all there
        assert len(owner.get("/collections/corpus/documents").json()) == 5


def test_sse_data_lines_are_what_format_json_prints(api: Api) -> None:
    with api.http("default") as owner, owner.stream(
            "POST", "/graph-rag", json={"collection": "corpus", "question": Q},
            headers={"Accept": "text/event-stream"}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in r.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines)
    streamed = [json.loads(line[6:]) for line in lines]
    local = run("--home", str(api.local), "graph-rag", "-q", Q, "-C", "corpus", "--format", "json", "--llm", "none")
    printed = [json.loads(line) for line in local.out.splitlines()]
    assert normalised(json.dumps(streamed)) == normalised(json.dumps(printed))
    assert [m["message_type"] for m in streamed][-1] == "final"


def test_without_sse_one_json_with_the_final_message_and_the_steps(api: Api) -> None:
    with api.http("default") as owner:
        body = owner.post("/document-rag", json={"collection": "corpus", "question": Q}).json()
        failed = owner.post("/agent", json={"collection": "corpus", "question": Q})
    assert body["final"]["message_type"] == "final"
    assert [s["step"] for s in body["steps"]] == ["question", "exploration", "synthesis"]
    assert body["final"]["answer"] and body["final"]["sources"]
    assert failed.status_code == 400
    assert failed.json()["error"]["type"] == "ConfigError"


def test_the_client_gives_typed_answers_and_events(api: Api) -> None:
    with Client(api.server.url, api.tokens["default"], collection="corpus") as pg:
        answer = pg.graph_rag(Q)
        events = list(pg.stream_graph_rag(Q))
        trace = pg.trace(answer.session_id)
        assert [d["id"] for d in pg.documents()][:1] == ["urn:doc:becquerel_rays.txt"]
    assert answer.sources and all(s.document.startswith("urn:doc:") for s in answer.sources)
    assert [s.step for s in answer.steps] == ["question", "ranking", "exploration", "focus", "synthesis"]
    assert all(isinstance(s, Explain) and s.triples for s in answer.steps)
    assert isinstance(events[-1], Final) and isinstance(events[0], Explain)
    assert isinstance(trace, GraphRagTrace) and trace.question.session_id == answer.session_id
    assert trace.synthesis is not None and trace.focus is not None and trace.focus.edges

    async def ask() -> Any:
        async with AsyncClient(api.server.url, api.tokens["bob"], collection="corpus") as bob:
            return await bob.graph_rag(Q)

    with pytest.raises(NotFound, match="collection bob/corpus does not exist"):
        asyncio.run(ask())


def test_upload_loads_in_the_background_and_reports_progress(api: Api, tmp_path: Path) -> None:
    files = [CORPUS / "becquerel_rays.txt", CORPUS / "polonium_and_radium.md"]
    with Client(api.server.url, api.tokens["bob"], collection="mine") as bob:
        loaded = bob.load(files)
        outcomes = bob.extract([c for r in loaded for c in r.chunks])
        assert [c["collection"] for c in bob.collections()] == ["mine"]
        assert bob.remove("polonium_and_radium.md") > 0
        assert [d["id"] for d in bob.documents()] == ["urn:doc:becquerel_rays.txt"]
        job = bob.load_job(files)
    with Provgraph(collection="mine", home=tmp_path / "home", llm="none") as pg:  # the same, in-process
        assert loaded == pg.load(files)
        assert outcomes == pg.extract([c for r in loaded for c in r.chunks])
    assert all(isinstance(r, LoadResult) for r in loaded) and [r.status for r in loaded] == ["loaded", "loaded"]
    assert outcomes and all(isinstance(o, ChunkOutcome) and o.skipped for o in outcomes)
    assert [(d["document"], d["status"]) for d in job["result"]["documents"]] == [
        ("urn:doc:becquerel_rays.txt", "unchanged"), ("urn:doc:polonium_and_radium.md", "loaded")]


def test_client_traces_are_the_in_process_ones(api: Api, tmp_path: Path) -> None:
    with Client(api.server.url, api.tokens["default"], collection="corpus") as pg:
        answer = pg.graph_rag("What are Becquerel rays?")
        remote_trace = pg.trace(answer.session_id)
        summaries = pg.traces(limit=3)
        counts = pg.backup(tmp_path / "corpus.tar")
    home = tmp_path / "home"
    with Client(api.server.url, api.tokens["bob"], collection="from-backup") as bob:
        assert bob.restore(tmp_path / "corpus.tar") == {"collection": "bob/from-backup", "documents": 5,
                                                        "quads": counts["quads"]}
        with pytest.raises(InputError, match="collection bob/from-backup is not empty"):
            bob.restore(tmp_path / "corpus.tar")
        assert bob.trace(answer.session_id) == remote_trace
    run("--home", str(home), "restore", str(tmp_path / "corpus.tar"), "-C", "corpus")
    with Provgraph(collection="corpus", home=home, llm="none") as local:
        assert local.trace(answer.session_id) == remote_trace
        assert summaries == list_traces(local.runtime.store, limit=3)
    assert counts["documents"] == 5 and summaries[0].session_id == answer.session_id


def test_deleting_a_trace_takes_it_and_only_it(api: Api) -> None:
    with Client(api.server.url, api.tokens["default"], collection="corpus") as pg:
        kept = pg.graph_rag(Q).session_id
        gone = pg.document_rag(Q).session_id
        assert pg.delete_trace(gone) > 0
        with pytest.raises(NotFound, match=f"no trace '{gone}' in collection default/corpus"):
            pg.trace(gone)
        with pytest.raises(NotFound):
            pg.delete_trace(gone)
        assert pg.trace(kept).question.session_id == kept
        assert pg.delete_traces_before(datetime(2000, 1, 1, tzinfo=timezone.utc)) == []
    with api.http("default") as owner:
        r = owner.delete("/collections/corpus/traces", params={"before": "not a date"})
        assert r.status_code == 422 and r.json()["error"]["type"] == "InputError"


def test_check_and_repair_over_http_say_what_the_cli_says(api: Api) -> None:
    orphan = "urn:test:orphan-chunk"
    chunk = f"<{orphan}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{TG.Chunk.value}> <urn:graph:source> .\n"
    with api.http("bob") as bob:
        assert bob.post("/collections/checked/import", content=chunk.encode()).status_code == 200
        found = bob.get("/collections/checked/check")
        assert found.status_code == 200, found.text
        problem = {"kind": "orphan-node", "subject": orphan, "detail": "a page, section or chunk without its document",
                   "repairable": True}
        assert found.json() == {"collection": "bob/checked", "consistent": False, "documents": 0, "quads": 1,
                                "problems": [problem], "repaired": [], "remaining": [problem]}
        cli = run("--url", api.server.url, "--token", api.tokens["bob"], "check", "-C", "checked", "--format", "json")
        assert (cli.code, json.loads(cli.out)) == (1, found.json())
        with Client(api.server.url, api.tokens["bob"], collection="checked") as pg:
            assert pg.check() == found.json()
        fixed = bob.post("/collections/checked/repair")
        assert fixed.status_code == 200, fixed.text
        assert fixed.json() == {"collection": "bob/checked", "consistent": True, "documents": 0, "quads": 0,
                                "problems": [problem], "remaining": [],
                                "repaired": ["removed 0 orphan subgraph(s) and 1 orphan node(s) (1 quads)"]}
        again = bob.get("/collections/checked/check").json()
        assert (again["consistent"], again["problems"]) == (True, [])
        ask = bob.post("/collections/checked/sparql", json={"query": f"ASK {{ GRAPH ?g {{ <{orphan}> ?p ?o }} }}"})
        assert ask.json()["boolean"] is False  # the repair's removal is what the shared store now answers


def test_restore_refuses_what_is_not_a_backup(api: Api) -> None:
    with api.http("bob") as bob:
        for body, message in ((b"not a tar", "the uploaded archive: not a provgraph backup"),
                              (b"", "empty body: send the archive `provgraph backup` wrote as the body")):
            r = bob.post("/collections/junk/restore", content=body)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["message"].startswith(message)
        assert "junk" not in [c["collection"] for c in bob.get("/collections").json()]


def test_the_clients_have_provgraphs_methods_with_the_same_result_types() -> None:
    def public(cls: type) -> dict[str, Any]:
        return {n: get_type_hints(getattr(cls, n)).get("return") for n in dir(cls)
                if not n.startswith("_") and callable(getattr(cls, n))}

    local, sync, aio = public(Provgraph), public(Client), public(AsyncClient)
    for name, returns in local.items():
        if name == "close":
            assert sync["close"] is type(None) and aio["aclose"] is type(None)
        elif get_origin(returns) is AsyncIterator:
            assert aio[name] == returns and sync[name] == Iterator[get_args(returns)[0]], name
        else:
            assert sync[name] == returns and aio[name] == returns, name
            assert inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
    assert local["trace"] == Trace and local["load"] == list[LoadResult]
    assert set(aio) - {"aclose"} == set(sync) - {"close"}


def test_websocket_multiplexes_requests_by_id(api: Api) -> None:
    from websockets.sync.client import connect

    url = api.server.url.replace("http", "ws") + "/api/v1/socket?token=" + api.tokens["default"]
    with connect(url) as ws:
        ws.send(json.dumps({"id": "a", "service": "graph-rag", "request": {"collection": "corpus", "question": Q}}))
        ws.send(json.dumps({"id": "b", "service": "document-rag", "request": {"collection": "corpus", "question": Q}}))
        ws.send(json.dumps({"id": "c", "service": "nope", "request": {}}))
        ws.send(json.dumps({"id": "d", "service": "check", "request": {"collection": "corpus"}}))
        got: dict[str, list[dict[str, Any]]] = {}
        while sum(1 for msgs in got.values() if msgs[-1]["complete"]) < 4:
            message = json.loads(ws.recv(timeout=60))
            got.setdefault(message["id"], []).append(message)
    for rid in ("a", "b"):
        assert [m["complete"] for m in got[rid]] == [False] * (len(got[rid]) - 1) + [True]
        assert got[rid][-1]["response"]["message_type"] == "final"
    assert got["c"][0]["response"]["error"]["type"] == "InputError"
    assert [(m["complete"], m["response"]["consistent"], m["response"]["documents"]) for m in got["d"]] == [
        (True, True, 5)]


def test_limits_give_clear_4xx(api: Api) -> None:
    with api.http("bob") as bob:
        r = bob.post("/collections/big/import", content=b"x" * (3 * 2**20))  # over the module server's 2 MB
        assert r.status_code == 413
        assert r.json()["error"]["type"] == "PayloadTooLarge"
        r = bob.post("/graph-rag", json={"collection": "c", "question": ""})
        assert r.status_code == 422 and r.json()["error"]["type"] == "InputError"
    port = int(api.server.url.rsplit(":", 1)[1])
    stalled = []
    for _ in range(3):  # three requests whose bodies never finish: the token's whole allowance
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /api/v1/collections/x/import HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                  b"Authorization: Bearer " + api.tokens["bob"].encode() + b"\r\n\r\nabc")
        stalled.append(s)
    try:
        with api.http("bob") as bob:
            for _ in range(50):
                r = bob.get("/whoami")
                if r.status_code == 429:
                    break
            assert r.status_code == 429
            assert r.json()["error"]["type"] == "TooManyRequests"
        with api.http("default") as owner:  # another token is not held back
            assert owner.get("/whoami").status_code == 200
    finally:
        for s in stalled:
            s.close()


def test_sparql_is_read_only(api: Api) -> None:
    with api.http("default") as owner:
        ask = owner.post("/collections/corpus/sparql", json={"query": "ASK { ?s ?p ?o }"})
        update = owner.post("/collections/corpus/sparql", json={"query": "DELETE WHERE { ?s ?p ?o }"})
        construct = owner.post("/collections/corpus/sparql",
                               json={"query": "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 1"})
        still = owner.post("/collections/corpus/sparql", json={"query": "ASK { ?s ?p ?o }"})
    assert ask.json() == {"head": {}, "boolean": True}
    assert update.status_code == 400 and update.json()["error"]["type"] == "QueryError"
    assert construct.headers["content-type"].startswith("application/n-triples")
    assert construct.text.count(" .\n") == 1
    assert still.json()["boolean"] is True


def test_export_import_round_trip(api: Api) -> None:
    count = {"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"}
    with api.http("default") as owner:
        data = owner.get("/collections/corpus/export?format=trig").content
        source = owner.post("/collections/corpus/sparql", json=count).json()
    with api.http("bob") as bob:
        bad = bob.post("/collections/copy/import?format=trig", content=b"<a> <b> .")
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "QueryError"
        r = bob.post("/collections/copy/import?format=trig", content=data)
        assert r.status_code == 200 and r.json()["collection"] == "bob/copy"
        copied = bob.post("/collections/copy/sparql", json=count).json()
    assert copied == source
    assert int(source["results"]["bindings"][0]["n"]["value"]) > 1000


def test_serving_off_loopback_needs_tokens(tmp_path: Path) -> None:
    env = {"PROVGRAPH_HOME": str(tmp_path / "h"), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-c", "from provgraph.cli.app import main; main()", "serve", "--host",
                        "0.0.0.0", "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip() == ("error: refusing to serve on 0.0.0.0 without tokens: create one with provgraph "
                                "tokens create -U USER (or bind to 127.0.0.1)")


def test_graceful_shutdown_leaves_the_collection_consistent(tmp_path: Path, _corpus_home: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(_corpus_home, home)
    with live_server(home) as server:
        with Client(server.url, collection="fresh") as pg:
            pg.load([CORPUS / "becquerel_rays.txt"])
            answer = pg.graph_rag("What are Becquerel rays?")
        code = server.stop()
    assert code in (0, -15)  # uvicorn re-raises SIGTERM once it has shut down
    assert "provgraph stopped: 1 collection(s) flushed and closed" in server.log()
    with Runtime(load_settings(home=str(home), collection="fresh", llm="none"), create=False) as rt:
        assert [r.id for r in rt.librarian.list(kind="document")] == ["urn:doc:becquerel_rays.txt"]
        assert rt.chunk_index.count() > 0
        assert answer.session_id in [t.session_id for t in list_traces(rt.store)]


def test_remote_commands_touch_only_the_files_the_client_sent(api: Api) -> None:
    with api.http("bob") as bob:
        for argv, name in ((["load", "/etc/hostname", "-C", "evil"], "/etc/hostname"),
                           (["export", "-C", "mine", "-o", "/tmp/provgraph-escape.nq"], "/tmp/provgraph-escape.nq")):
            lines = [json.loads(line) for line in bob.post("/cli", json={"argv": argv}).text.splitlines()]
            assert lines == [{"stderr": f"error: {name}: a server reads and writes only the files the client sends\n"},
                             {"exit": 2}]
        assert "evil" not in [c["collection"] for c in bob.get("/collections").json()]
        for argv in (["tokens", "create", "-U", "root"], ["--home", "/tmp", "tokens", "create", "-U", "root"],
                     ["config", "show"]):
            lines = [json.loads(line) for line in bob.post("/cli", json={"argv": argv}).text.splitlines()]
            assert lines[-1] == {"exit": 2} and lines[0]["stderr"].startswith("error: "), lines
    assert {t.user for t in TokenStore(api.server.home).list()} <= {"default", "bob", "carol"}
    assert not Path("/tmp/provgraph-escape.nq").exists()
