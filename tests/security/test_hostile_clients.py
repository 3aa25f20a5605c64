"""Critical 2, High 4 and 5, and the server's Medium and Low items: a real ``provgraph serve`` under hostile
clients: other sites' pages, forged hosts, ``/cli`` escapes, a server that must not fail open, and the small
holes (redirects, names, bodies, dates, a CDN).

Every scenario of issue 28's server half that needs no resource pressure; the resource ones
(slowloris, connection and descriptor caps, open collections, the home lock) are in
test_server_resources.py. Tests that use tokens run once with the owner's and once with another
user's token.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from provgraph.api.tokens import TOKENS_FILE, TokenStore
from tests.corpus_fixture import corpus_module_env
from tests.cli_runner import run
from tests.security.conftest import QUAD, cli, count, serving
from tests.security.conftest import http as _http  # the local name: tests name their own clients http
from tests.server.live import LiveServer, live_server

pytestmark = pytest.mark.server

OTHER = b"<urn:x> <urn:y> <urn:z> <urn:g> .\n"
REFUSED_FILE = ": a server reads and writes only the files the client sends\n"

def _lines(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines()]


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server without tokens (open: loopback only) over a fresh home with one quad in collection ``c``."""
    with serving(tmp_path_factory, QUAD, "--max-body-mb", "1") as server:
        yield server


@pytest.fixture(scope="module")
def tokened(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    """A server with tokens for ``default`` (who owns the corpus) and ``bob``, two requests in flight per token."""
    home = tmp_path_factory.mktemp("tokened") / "home"
    shutil.copytree(_corpus_home, home)
    store = TokenStore(home)
    tokens = {user: store.create(user)[1] for user in ("default", "bob")}
    with live_server(home, "--concurrency", "2", env=corpus_module_env("hostile_clients")) as server:
        yield server, tokens


# Item 4: an open server is neither readable nor writable by another site's page, nor reachable by DNS rebinding.

def test_another_sites_page_cannot_read_over_the_websocket(open_server: LiveServer) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect
    from websockets.typing import Origin

    url = open_server.url.replace("http", "ws") + "/api/v1/socket"
    for origin in ("http://evil.example", "null", open_server.url.rsplit(":", 1)[0] + ":1"):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=Origin(origin), open_timeout=30)
        assert refused.value.response.status_code == 403, origin
    with connect(url, origin=Origin(open_server.url), open_timeout=30) as ws:  # the server's own page
        ws.send(json.dumps({"id": "1", "service": "collections", "request": {}}))
        assert json.loads(ws.recv(timeout=30))["response"] == [{"user": "default", "collection": "c"}]


def test_another_sites_page_cannot_send_simple_requests(open_server: LiveServer) -> None:
    api = open_server.url + "/api/v1"
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example", open_server.url + "0"):
        headers = {"Origin": origin}
        text = _http.post(f"{api}/collections/c/import", content=OTHER,
                          headers={**headers, "Content-Type": "text/plain"})
        upload = _http.post(f"{api}/collections/c/documents", headers=headers,
                            files={"files": ("note.txt", b"Alice met Bob in Paris.", "text/plain")})
        form = _http.post(f"{api}/collections/c/sparql", headers=headers, data={"query": "ASK {}"})
        for response in (text, upload, form):
            assert response.status_code == 403, (origin, response.text)
            assert response.json()["error"]["type"] == "ForbiddenOrigin"
    assert count(api, "c") == 1  # nothing was written
    assert _http.get(f"{api}/collections/c/documents").json() == []
    same = _http.post(f"{api}/collections/c/import", content=OTHER,
                      headers={"Origin": open_server.url, "Content-Type": "text/plain"})
    assert same.status_code == 200 and count(api, "c") == 2


def test_only_the_servers_own_names_are_served(open_server: LiveServer) -> None:
    port = open_server.url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.nip.io:{port}", f"10.0.0.1:{port}"):
        for path in ("/api/v1/collections", "/api/v1/health", "/traces"):
            r = _http.get(open_server.url + path, headers={"Host": host})
            assert (r.status_code, r.json()["error"]["type"]) == (400, "InvalidHost"), (host, path)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST.:{port}", f"[::1]:{port}", "viewer.localhost"):
        assert _http.get(open_server.url + "/api/v1/collections", headers={"Host": host}).status_code == 200, host


def test_allowed_hosts_and_a_wildcard_bind_widen_the_names() -> None:
    from provgraph.api.origin import HostPolicy

    named = HostPolicy(bound="192.0.2.7", allowed=("provgraph.test",))
    assert [named.host_ok(h) for h in ("provgraph.test", "Provgraph.Test.:8400", "192.0.2.7:8400", "[::1]:80",
                                       "198.51.100.1", "other.test")] == [True, True, True, True, False, False]
    anywhere = HostPolicy(bound="0.0.0.0")
    assert [anywhere.host_ok(h) for h in ("198.51.100.1:8400", "[2001:db8::1]:8400", "rebound.example")] == [
        True, True, False]
    assert named.origin_ok("https://provgraph.test", "127.0.0.1:8400")  # its own page behind a proxy
    assert not named.origin_ok("https://provgraph.test.evil.example", "127.0.0.1:8400")


# Item 5: the auth mode is fixed when the server starts, and can only close.

def test_a_tokened_server_never_becomes_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = TokenStore(home)
    info, text = store.create("alice")
    with live_server(home) as server, httpx.Client(base_url=server.url + "/api/v1", timeout=60) as http:
        assert http.get("/whoami", headers={"Authorization": f"Bearer {text}"}).json() == {"user": "alice"}
        store.revoke(info.id)  # the last token
        for headers in ({}, {"Authorization": f"Bearer {text}"}):
            assert http.get("/collections", headers=headers).status_code == 401
            assert http.post("/collections/c/import", content=QUAD, headers=headers).status_code == 401
        (home / TOKENS_FILE).unlink()
        assert http.get("/whoami").status_code == 401
        assert http.post("/collections/c/import", content=QUAD).status_code == 401
        (home / TOKENS_FILE).write_text("not json", encoding="utf-8")
        broken = http.get("/whoami", headers={"Authorization": f"Bearer {text}"})
        assert broken.status_code == 503 and broken.json()["error"]["type"] == "ConfigError"
        (home / TOKENS_FILE).unlink()
        _, again = store.create("alice")
        assert http.get("/whoami", headers={"Authorization": f"Bearer {again}"}).json() == {"user": "alice"}
    assert not (home / "users" / "default").exists()  # no request ever acted as the open-mode user


def test_an_open_server_closes_with_its_first_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with live_server(home) as server, httpx.Client(base_url=server.url + "/api/v1", timeout=60) as http:
        assert http.get("/whoami").json() == {"user": "default"}
        store = TokenStore(home)
        info, text = store.create("alice")
        assert http.get("/whoami").status_code == 401
        assert http.get("/whoami", headers={"Authorization": f"Bearer {text}"}).json() == {"user": "alice"}
        store.revoke(info.id)
        assert http.get("/whoami").status_code == 401  # closed for good


def test_a_server_beyond_loopback_never_runs_open(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from provgraph.api.app import create_app
    from provgraph.api.origin import HostPolicy
    from provgraph.config import load_settings

    app = create_app(load_settings(home=str(tmp_path / "home")), require_tokens=True,
                     hosts=HostPolicy(bound="0.0.0.0"))
    with TestClient(app, base_url="http://192.0.2.7:8400") as client:  # no token was ever created
        for method, path in (("GET", "/api/v1/collections"), ("POST", "/api/v1/collections/c/import")):
            r = client.request(method, path, content=QUAD)
            assert (r.status_code, r.json()["error"]["type"]) == (401, "Unauthorized")


# Item 2: /cli reads and writes only what the client sent, whatever the spelling of the option.

@pytest.mark.parametrize(("user", "which"), [("bob", "librarian"), ("default", "librarian"), ("bob", "tokens")],
                         ids=["bob-on-defaults-librarian", "owner-on-own-librarian", "bob-on-tokens"])
@pytest.mark.parametrize("argv", [
    ["export", "-C", "corpus", "-o{target}"],
    ["export", "-o{target}", "-C", "corpus"],
    ["export", "-C", "corpus", "--output={target}"],
    ["export", "-C", "corpus", "--output", "{target}"],
    ["backup", "-C", "corpus", "{target}"],
    ["import", "-C", "mine", "{target}"],
    ["load", "-C", "mine", "--", "{target}"],
    ["load", "-C", "mine", "{target_dir}/*"],
], ids=lambda a: " ".join(a))
@pytest.mark.embedded_only  # the embedded store's lock keeps the CLI out; PostgreSQL has none
def test_cli_cannot_touch_a_server_file(tokened: tuple[LiveServer, dict[str, str]], user: str, argv: list[str],
                                        which: str) -> None:
    server, tokens = tokened
    targets = {"librarian": server.home / "users/default/collections/corpus/librarian/librarian.sqlite3",
               "tokens": server.home / TOKENS_FILE}
    target = targets[which]
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    sent = [a.replace("{target}", str(target)).replace("{target_dir}", str(target.parent)) for a in argv]
    r = _http.post(server.url + "/api/v1/cli", json={"argv": sent}, timeout=60,
                   headers={"Authorization": f"Bearer {tokens[user]}"})
    lines = _lines(r)
    assert lines[-1] == {"exit": 2}, lines
    assert lines[0]["stderr"].startswith("error: ") and lines[0]["stderr"].endswith(REFUSED_FILE), lines
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before
    assert _http.get(server.url + "/api/v1/whoami", headers={"Authorization": f"Bearer {tokens['default']}"}
                     ).status_code == 200


def test_cli_short_options_still_work_for_the_clients_own_files(tokened: tuple[LiveServer, dict[str, str]],
                                                                tmp_path: Path) -> None:
    server, tokens = tokened
    out = tmp_path / "corpus.nq"
    r = run("--url", server.url, "--token", tokens["default"], "export", "-C", "corpus", f"-o{out}")
    assert (r.code, r.err) == (0, f"wrote {out}\n")  # the client's path, as locally
    assert out.read_bytes().count(b"\n") > 1000


# The medium item: one budget per token, HTTP and WebSocket together.

@pytest.mark.parametrize("other", ["bob"])
def test_websocket_requests_share_the_tokens_budget(tokened: tuple[LiveServer, dict[str, str]], other: str) -> None:
    from websockets.sync.client import connect

    server, tokens = tokened
    port = int(server.url.rsplit(":", 1)[1])
    held = []
    for _ in range(2):  # two stalled uploads: the default token's whole allowance
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /api/v1/collections/x/import HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                  b"Authorization: Bearer " + tokens["default"].encode() + b"\r\n\r\nabc")
        held.append(s)
    socket_url = server.url.replace("http", "ws") + "/api/v1/socket?token="
    try:
        with httpx.Client(base_url=server.url + "/api/v1", timeout=60) as http:
            for _ in range(100):  # until the stalled requests have reached the guard
                if http.get("/whoami", headers={"Authorization": f"Bearer {tokens['default']}"}).status_code == 429:
                    break
            else:
                pytest.fail("the stalled requests never took the token's slots")
        with connect(socket_url + tokens["default"]) as ws:
            for i in range(20):
                ws.send(json.dumps({"id": str(i), "service": "documents", "request": {"collection": "corpus"}}))
            answers = [json.loads(ws.recv(timeout=60)) for _ in range(20)]
        assert {a["response"]["error"]["type"] for a in answers} == {"TooManyRequests"}
        assert all(a["complete"] for a in answers)
        with connect(socket_url + tokens[other]) as ws:  # another token is not held back
            ws.send(json.dumps({"id": "1", "service": "collections", "request": {}}))
            assert json.loads(ws.recv(timeout=60))["response"] == []
    finally:
        for s in held:
            s.close()
    with connect(socket_url + tokens["default"]) as ws:
        ws.send(json.dumps({"id": "1", "service": "documents", "request": {"collection": "corpus"}}))
        for _ in range(100):  # the stalled requests' slots come back once the server sees them gone
            answer = json.loads(ws.recv(timeout=60))["response"]
            if isinstance(answer, list):
                break
            ws.send(json.dumps({"id": "1", "service": "documents", "request": {"collection": "corpus"}}))
        assert len(answer) == 5


# Low items.

def test_the_data_home_is_its_owners_only(open_server: LiveServer) -> None:
    found = []
    for root, dirs, files in os.walk(open_server.home):
        for name in [*dirs, *files]:
            mode = os.stat(os.path.join(root, name)).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                found.append(f"{oct(mode & 0o777)} {os.path.relpath(os.path.join(root, name), open_server.home)}")
    assert oct(open_server.home.stat().st_mode & 0o777) == "0o700"
    assert found == []



def test_a_local_command_makes_a_missing_home_its_owners_only(tmp_path: Path) -> None:
    """Under the usual umask (0644 files) a local command's new home is 0700: what it holds is its owner's."""
    (tmp_path / "one.nq").write_bytes(QUAD)
    old = os.umask(0o022)
    try:
        r = cli(tmp_path / "home", "import", str(tmp_path / "one.nq"), "-C", "c")
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stderr
    assert oct((tmp_path / "home").stat().st_mode & 0o777) == "0o700"

def test_a_long_upload_name_is_refused_and_leaves_nothing(open_server: LiveServer) -> None:
    api = open_server.url + "/api/v1"
    name = "é" * 150 + ".txt"  # 300 characters, 304 bytes
    r = _http.post(f"{api}/collections/c/documents", files={"files": (name, b"Alice met Bob.", "text/plain")})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == {"type": "InputError", "message": f"uploaded file name {name[:40]!r}… is 304 bytes "
                                 "long: a file name has at most 255 bytes; rename the file"}
    remote = _http.post(f"{api}/cli", json={"argv": ["import", "-C", "c", name], "paths": [name],
                                            "files": [{"path": name, "data": "PHVybjphPg=="}]}, timeout=60)
    assert _lines(remote) == [{"stderr": f"error: {r.json()['error']['message']}\n"}, {"exit": 2}]
    assert list((open_server.home / "uploads").iterdir()) == []


def _chunks(size: int) -> Iterator[bytes]:
    for _ in range(size // 65536):
        yield b"x" * 65536


def test_chunked_bodies_over_the_limit_get_413(open_server: LiveServer) -> None:
    api = open_server.url + "/api/v1"
    boundary = "provgraphboundary"
    multipart = [f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.txt\"\r\n"
                 "Content-Type: text/plain\r\n\r\n".encode()]
    for path, content_type, head in (
            ("/collections/c/import", "text/plain", []),
            ("/collections/big/restore", "application/x-tar", []),
            ("/collections/c/documents", f"multipart/form-data; boundary={boundary}", multipart),
            ("/cli", "application/json", [b'{"argv": ["sparql", "']),
            ("/graph-rag", "application/json", [b'{"collection": "c", "question": "']),
    ):
        r = _http.post(api + path, content=iter([*head, *_chunks(2 * 2**20)]), timeout=60,
                       headers={"Content-Type": content_type})
        assert r.status_code == 413, (path, r.status_code, r.text)
        assert r.json()["error"]["type"] == "PayloadTooLarge"
    assert list((open_server.home / "uploads").iterdir()) == []
    assert _http.get(api + "/collections").status_code == 200


def test_deleting_traces_before_a_bare_number_is_refused(open_server: LiveServer) -> None:
    api = open_server.url + "/api/v1"
    for value in ("1700000000", "1700000000.5", "yesterday"):
        r = _http.delete(f"{api}/collections/c/traces", params={"before": value})
        assert r.status_code == 422, (value, r.text)
        assert r.json()["error"]["type"] == "InputError"
        assert "before needs an ISO date or time such as 2026-03-13 or 2026-03-13T10:00:00Z, got " \
               f"'{value}'" in r.json()["error"]["message"]
    for value in ("2000-01-01", "2000-01-01T10:00:00Z", "2000-01-01T10:00:00+02:00"):
        r = _http.delete(f"{api}/collections/c/traces", params={"before": value})
        assert (r.status_code, r.json()["deleted"]) == (200, []), value


def test_the_api_page_works_offline(open_server: LiveServer) -> None:
    page = _http.get(open_server.url + "/api/v1/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "'unsafe-inline'" not in page.headers["content-security-policy"]
    links = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text)
    assert links and all(link.startswith("/static/") for link in links), links
    for link in links:
        assert _http.get(open_server.url + link).status_code == 200, link
    assert not re.search(r"<script\b[^>]*>\s*[^<\s]", page.text)  # no inline script
    assert "SwaggerUIBundle" in _http.get(open_server.url + "/static/js/api-docs.js").text
