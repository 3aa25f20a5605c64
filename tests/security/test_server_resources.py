"""The Medium items of issue 28: a real ``provgraph serve`` under resource pressure: slow and idle connections, too many of them, too few
file descriptors, many collections, a second server or a local command on its data directory, and
a query through ``/cli`` past the server's time limit.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.cli_runner import run
from tests.server.live import SERVE, LiveServer, free_port, live_server

pytestmark = pytest.mark.server

QUAD = b"<urn:a> <urn:b> <urn:c> <urn:g> .\n"


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[LiveServer]:
    """An open server over the corpus with small limits: queries 1 ms, headers 1 s, 6 connections, 2 collections a user."""
    home = tmp_path_factory.mktemp("tight") / "home"
    shutil.copytree(_corpus_home, home)
    with live_server(home, "--timeout", "0.001", "--header-timeout", "1", "--max-connections", "6",
                     "--collections-per-user", "2") as server:
        yield server


def _read_all(s: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (waits at most 30 s for each piece)."""
    s.settimeout(30)
    data = b""
    while True:
        piece = s.recv(65536)
        if not piece:
            return data
        data += piece


def test_headers_that_never_finish_are_cut_off(tight: LiveServer) -> None:
    port = int(tight.url.rsplit(":", 1)[1])
    silent = socket.create_connection(("127.0.0.1", port))
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /api/v1/collections HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and never the rest
    for s in (silent, slow):
        with s:
            answer = _read_all(s)
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["type"] == "Timeout"
    assert httpx.get(tight.url + "/api/v1/health", timeout=60).status_code == 200


def test_connections_past_the_cap_are_refused_at_once(tight: LiveServer) -> None:
    from websockets.sync.client import connect

    port = int(tight.url.rsplit(":", 1)[1])
    with ExitStack() as sockets:
        for _ in range(6):  # idle, kept open
            sockets.enter_context(connect(tight.url.replace("http", "ws") + "/api/v1/socket"))
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = _read_all(s)
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"] == {
            "type": "TooManyConnections", "message": "the server has 6 connections open, its limit: try again later"}
    for _ in range(100):  # the server sees the sockets go
        if httpx.get(tight.url + "/api/v1/health", timeout=60).status_code == 200:
            break
    assert httpx.get(tight.url + "/api/v1/health", timeout=60).status_code == 200
    assert "Traceback" not in tight.log()


def test_a_user_keeps_only_a_few_collections_open(tight: LiveServer) -> None:
    api = tight.url + "/api/v1"
    pid = tight.process.pid

    def fds() -> int:
        return len(os.listdir(f"/proc/{pid}/fd"))

    for name in ("one", "two", "three"):
        assert httpx.post(f"{api}/collections/{name}/import", content=QUAD, timeout=60).status_code == 200
    two_open = fds()
    for name in ("one", "two", "corpus", "three"):  # each opened again, an older one closed
        assert httpx.get(f"{api}/collections/{name}/documents", timeout=60).status_code == 200
        assert fds() <= two_open + 3  # a collection holds about 30 descriptors
    for name in ("one", "three"):
        assert httpx.get(f"{api}/collections/{name}/export", timeout=60).content == QUAD


def test_a_query_past_the_timeout_is_a_408_or_an_error_message(tight: LiveServer) -> None:
    q = "Who discovered polonium?"
    with httpx.Client(base_url=tight.url + "/api/v1", timeout=60) as http:
        r = http.post("/graph-rag", json={"collection": "corpus", "question": q})
        with http.stream("POST", "/graph-rag", json={"collection": "corpus", "question": q},
                         headers={"Accept": "text/event-stream"}) as s:
            last = json.loads([line for line in s.iter_lines() if line][-1][6:])
        assert http.get("/collections/corpus/documents").status_code == 200  # the server is fine
    limit = "the query took longer than the server's limit of 0.001 s"
    assert r.status_code == 408
    assert r.json()["error"] == {"type": "Timeout", "message": limit}
    assert last["error"] == {"type": "Timeout", "message": limit} and last["end_of_session"] is True


def test_a_query_through_cli_obeys_the_servers_timeout(tight: LiveServer) -> None:
    for argv in (["graph-rag", "-q", "Who discovered polonium?", "-C", "corpus"],
                 ["document-rag", "-q", "Who discovered polonium?", "-C", "corpus", "-x"]):
        r = httpx.post(tight.url + "/api/v1/cli", json={"argv": argv}, timeout=60)
        lines = [json.loads(line) for line in r.text.splitlines()]
        assert lines[-2:] == [{"stderr": "error: the query took longer than the server's limit of 0.001 s\n"},
                              {"exit": 1}], lines
    r = run("--url", tight.url, "graph-rag", "-q", "Who discovered polonium?", "-C", "corpus")
    assert (r.code, r.err.splitlines()[-1]) == (1, "error: the query took longer than the server's limit of 0.001 s")


def test_the_servers_home_is_its_own(tight: LiveServer, tmp_path: Path) -> None:
    home = tight.home
    pid = tight.process.pid
    held = (f"error: collection default/corpus is held by the provgraph server at {tight.url} (pid {pid}): run "
            f"the command through it: PROVGRAPH_URL={tight.url} PROVGRAPH_TOKEN=TOKEN provgraph … (or --url/--token)\n")
    backup = tmp_path / "corpus.tar"
    (tmp_path / "none.txt").write_text("A file the server's lock keeps from being loaded.\n")
    assert run("--url", tight.url, "backup", "-C", "corpus", str(backup)).code == 0
    for argv in (["collections", "drop", "corpus", "--yes"], ["documents", "list", "-C", "corpus"],
                 ["sparql", "ASK { ?s ?p ?o }", "-C", "corpus"], ["restore", str(backup), "-C", "corpus", "--force"],
                 ["load", str(tmp_path / "none.txt"), "-C", "corpus"]):
        r = run("--home", str(home), *argv)
        assert (r.code, r.out, r.err) == (4, "", held), argv
    assert (home / "users/default/collections/corpus/store").is_dir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
    second = subprocess.run([sys.executable, "-c", SERVE, "--home", str(home), "serve", "--port", str(free_port())],
                            env=env, capture_output=True, text=True, timeout=60)
    assert (second.returncode, second.stderr) == (4, f"error: {home} is already served by the provgraph server at "
                                                     f"{tight.url} (pid {pid}): stop it first, or serve another --home\n")
    assert httpx.get(tight.url + "/api/v1/collections/corpus/documents", timeout=60).status_code == 200


def test_descriptors_never_run_out(tmp_path: Path) -> None:
    """With 256 descriptors, 300 connections that never send a request: the server stays up and quiet.
    (And once it has stopped, its home is free again.)"""
    home = tmp_path / "home"
    with live_server(home, "--header-timeout", "600", max_fds=256) as server:
        cap = int(re.search(r"at most (\d+) connections", server.log()).group(1))  # type: ignore[union-attr]
        assert 16 <= cap < 256 - 64
        port = int(server.url.rsplit(":", 1)[1])
        held = []
        try:
            for _ in range(300):  # connected, never a byte sent
                held.append(socket.create_connection(("127.0.0.1", port), timeout=30))
            with socket.create_connection(("127.0.0.1", port), timeout=30) as late:
                assert _read_all(late).startswith(b"HTTP/1.1 503 Service Unavailable\r\n")  # answered, not hung
            answered, _, _ = select.select(held, [], [], 0)  # the refused ones: answered and closed before `late`
            assert 300 - cap <= len(answered) <= 300 - cap + 2
            assert all(s.recv(64).startswith(b"HTTP/1.1 503") for s in answered)
        finally:
            for s in held:
                s.close()
        for _ in range(200):
            if httpx.get(server.url + "/api/v1/health", timeout=30).status_code == 200:
                break
        assert httpx.post(server.url + "/api/v1/collections/c/import", content=QUAD, timeout=60).status_code == 200
        assert run("--home", str(home), "collections", "drop", "c", "--yes").code == 4
        log = server.log()
    assert "Traceback" not in log and len(log) < 2000, log[-2000:]
    r = run("--home", str(home), "collections", "drop", "c", "--yes")
    assert (r.code, r.out) == (0, "dropped default/c\n")
