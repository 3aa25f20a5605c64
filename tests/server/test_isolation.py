"""Per-user isolation on EVERY route of the app's own route table and every WebSocket service, on a real
server process: another user's token, with the owner's real object ids (documents, chunks, traces,
jobs, entities, an archive), gets nothing of the owner's and changes nothing of it.

The routes are read from ``create_app``'s route table, not listed by hand: a route this table does not
say how to ask (``ASK``) fails the test until it does, so a new route cannot go unchecked. The owner
is the server's own user (``default``), so a route that opens the server's settings instead of the
caller's is caught; mallory owns an empty collection of the same name, so a route that ignores the
user answers with the owner's data instead of "not found".
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from provgraph.api.app import create_app
from provgraph.api.routes_rag import RAG_SERVICES
from provgraph.api.socket import READ_SERVICES
from provgraph.api.tokens import TokenStore
from provgraph.config import load_settings
from tests.corpus_fixture import COLLECTION, corpus_files
from tests.server.live import LiveServer, live_server

pytestmark = pytest.mark.server
OWNER, OTHER = "default", "mallory"
Q = "Who discovered polonium?"
ENTITY = "urn:provgraph:entity:marie%20curie"
NOTE = "Irène Joliot-Curie won the Nobel Prize in Chemistry in 1935.\n"
TALK = "owners-talk"  # the owner's conversation


def seg(text: str) -> str:
    return quote(text, safe="")


def route_table() -> set[tuple[str, str]]:
    """(METHOD, path) of every route and WebSocket route of the app, as ``create_app`` builds it."""
    app = create_app(load_settings(home="/nonexistent-provgraph-home"))
    found: set[tuple[str, str]] = set()

    def walk(routes: list[Any], prefix: str) -> None:
        for r in routes:
            if hasattr(r, "original_router"):  # FastAPI's included routers keep their own routes
                walk(r.original_router.routes, prefix + r.include_context.prefix)
            elif type(r).__name__ in ("APIWebSocketRoute", "WebSocketRoute"):
                found.add(("WS", prefix + r.path))
            elif type(r).__name__ == "Mount":
                found.add(("MOUNT", prefix + r.path))
            else:
                found.update((m, prefix + r.path) for m in r.methods - {"HEAD"})

    walk(app.routes, "")
    return found


@dataclass
class Owner:
    """The owner's real objects, and what must never reach another user."""

    document: str
    chunk: str
    trace: str
    job: str
    archive: bytes
    quads: int
    documents: list[str] = field(default_factory=list)

    def markers(self) -> list[str]:
        return [self.chunk, self.trace, self.job, TALK, *self.documents]


@dataclass
class Users:
    server: LiveServer
    owner: httpx.Client
    other: httpx.Client
    tokens: dict[str, str]
    data: Owner


def wait_job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    for _ in range(600):
        job: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not end")


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[Users]:
    home = tmp_path_factory.mktemp("isolation") / "home"
    shutil.copytree(_corpus_home, home)
    store = TokenStore(home)
    tokens = {OWNER: store.create(OWNER)[1], OTHER: store.create(OTHER)[1]}
    with live_server(home) as server:
        base = server.url + "/api/v1"
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {tokens[OWNER]}"}, timeout=120) as a, \
                httpx.Client(base_url=base, headers={"Authorization": f"Bearer {tokens[OTHER]}"}, timeout=120) as b:
            job = a.post(f"/collections/{COLLECTION}/documents", files=[("files", ("note.txt", NOTE.encode()))],
                         data={"extractors": "cooccurrence"}).json()
            assert wait_job(a, job["id"])["status"] == "done"
            asked = a.post("/graph-rag", json={"collection": COLLECTION, "question": Q, "conversation": TALK}).json()
            doc = corpus_files()[0].name
            tree = a.get(f"/collections/{COLLECTION}/provenance/{doc}").json()
            chunks = [c for part in tree.get("parts", []) for c in part["chunks"]] + tree.get("chunks", [])
            archive = a.get(f"/collections/{COLLECTION}/backup")
            assert archive.status_code == 200
            owned = Owner(document=doc, chunk=chunks[0]["chunk"], trace=asked["final"]["session_id"], job=job["id"],
                          archive=archive.content, quads=json.loads(archive.headers["X-Provgraph-Counts"])["quads"],
                          documents=[d["id"] for d in a.get(f"/collections/{COLLECTION}/documents").json()])
            assert b.post("/collections", json={"name": COLLECTION}).status_code == 201  # mallory's own, empty
            yield Users(server, a, b, tokens, owned)


# How another user asks each route: (method, path template) -> a request maker and what must come back.
# "missing": 404 NotFound (the owner's object does not exist for her). A function: checks an answer about
# her own data. "open": no user's data at all (liveness, the API description, the viewer's static pages).


@dataclass(frozen=True)
class Ask:
    expect: str | Callable[[httpx.Response, Users], None]
    params: Callable[[Owner], dict[str, Any]] = lambda o: {}
    json: Callable[[Owner], Any] | None = None
    content: Callable[[Owner], bytes] | None = None
    files: Callable[[Owner], Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def own_collection(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 200, r.text
    assert r.json()["collection"] == f"{OTHER}/{COLLECTION}", r.text


def empty_list(r: httpx.Response, u: Users) -> None:
    assert (r.status_code, r.json()) == (200, []), r.text


def answered_without_the_owners_data(r: httpx.Response, u: Users) -> None:
    assert r.status_code < 500, r.text  # an answer (from her empty collection) or a refusal; no marker, below


def no_passages(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 404 or (r.status_code == 200 and r.json()["passages"] == []), r.text


def refused_or_own(r: httpx.Response, u: Users) -> None:
    assert r.status_code < 500, r.text


def own_backup(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 200 and json.loads(r.headers["X-Provgraph-Counts"])["documents"] == 0


def restored_as_hers(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 201, r.text
    assert r.json()["collection"] == f"{OTHER}/restored"
    assert "restored" not in [c["collection"] for c in u.owner.get("/collections").json()]


def her_collections(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 200 and r.json() and {c["user"] for c in r.json()} == {OTHER}, r.text


def dropped_hers(r: httpx.Response, u: Users) -> None:
    assert (r.status_code, r.json()) == (200, {"user": OTHER, "collection": COLLECTION}), r.text
    assert len(u.owner.get(f"/collections/{COLLECTION}/documents").json()) == len(u.data.documents)
    assert u.other.post("/collections", json={"name": COLLECTION}).status_code == 201  # hers again, empty


def her_upload(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 202, r.text
    job = wait_job(u.other, r.json()["id"])
    assert job["status"] == "done" and [d["document"] for d in job["documents"]] == ["urn:doc:mallory.txt"]
    assert r.json()["id"] not in [j["id"] for j in u.owner.get("/jobs").json()]
    assert "urn:doc:mallory.txt" not in [d["id"] for d in u.owner.get(f"/collections/{COLLECTION}/documents").json()]


def whoami(r: httpx.Response, u: Users) -> None:
    assert r.json() == {"user": OTHER}


def no_deletion(r: httpx.Response, u: Users) -> None:
    assert r.status_code in (200, 404), r.text
    if r.status_code == 200:
        assert r.json() == {"deleted": [], "quads": 0, "collection": f"{OTHER}/{COLLECTION}"}, r.text


def her_cli(r: httpx.Response, u: Users) -> None:
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert lines == [{"stderr": f"error: collection {OWNER}/{COLLECTION} does not exist (create it with: provgraph "
                                "collections create)\n"}, {"exit": 3}], r.text  # -U names no one else's data


def imported_into_hers(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 200 and r.json()["collection"] == f"{OTHER}/{COLLECTION}", r.text


def her_models(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 200, r.text
    assert {m["id"].split(":")[1] for m in r.json()["data"]} == {COLLECTION}, r.text  # her own collection's


def sparql_sees_nothing(r: httpx.Response, u: Users) -> None:
    assert r.status_code == 200 and r.json()["results"]["bindings"] == [], r.text


C = "/api/v1/collections/{collection}"
ASK: dict[tuple[str, str], Ask] = {
    ("GET", "/api/v1/openapi.json"): Ask("open"),
    ("GET", "/api/v1/health"): Ask("open"),
    ("GET", "/api/v1/docs"): Ask("open"),
    ("GET", "/api/v1/whoami"): Ask(whoami),
    ("GET", "/api/v1/collections"): Ask(her_collections),
    ("POST", "/api/v1/collections"): Ask(refused_or_own, json=lambda o: {"name": COLLECTION}),
    ("GET", f"{C}/documents"): Ask(empty_list),
    ("GET", f"{C}/documents/{{document:path}}"): Ask("missing"),
    ("DELETE", f"{C}/documents/{{document:path}}"): Ask("missing"),
    ("GET", f"{C}/provenance/{{document:path}}"): Ask("missing"),
    ("GET", f"{C}/removal/{{document:path}}"): Ask("missing"),
    ("GET", f"{C}/records/{{record_id:path}}"): Ask("missing"),
    ("GET", f"{C}/facts"): Ask("missing", params=lambda o: {"chunk": o.chunk}),
    ("GET", f"{C}/entities"): Ask(empty_list, params=lambda o: {"q": "Marie Curie"}),
    ("GET", f"{C}/entities/{{entity:path}}"): Ask("missing"),
    ("GET", f"{C}/traces"): Ask(empty_list, params=lambda o: {"all": "true"}),
    ("GET", f"{C}/traces/{{trace_id:path}}"): Ask("missing"),
    ("DELETE", f"{C}/traces/{{trace_id:path}}"): Ask(no_deletion),
    ("DELETE", f"{C}/traces"): Ask(no_deletion, params=lambda o: {"before": "2999-01-01"}),
    ("POST", f"{C}/sparql"): Ask(sparql_sees_nothing, json=lambda o: {
        "query": "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 5"}),
    ("GET", f"{C}/export"): Ask(lambda r, u: (r.status_code, r.content) == (200, b"") or pytest.fail(r.text[:300])),
    ("GET", f"{C}/backup"): Ask(own_backup),
    ("GET", f"{C}/check"): Ask(own_collection),
    ("POST", f"{C}/repair"): Ask(own_collection),
    ("POST", f"{C}/extract"): Ask(empty_list, json=lambda o: {"chunks": []}),
    ("POST", "/api/v1/graph-rag"): Ask(answered_without_the_owners_data,
                                       json=lambda o: {"collection": COLLECTION, "question": Q}),
    ("POST", "/api/v1/document-rag"): Ask(answered_without_the_owners_data,
                                          json=lambda o: {"collection": COLLECTION, "question": Q}),
    ("POST", "/api/v1/global-rag"): Ask(answered_without_the_owners_data,
                                        json=lambda o: {"collection": COLLECTION, "question": Q}),
    ("POST", "/api/v1/retrieve"): Ask(no_passages, json=lambda o: {"collection": COLLECTION, "question": Q}),
    ("GET", f"{C}/communities"): Ask(empty_list),
    ("GET", f"{C}/communities/{{community:path}}"): Ask("missing"),
    ("POST", "/api/v1/agent"): Ask(answered_without_the_owners_data,
                                   json=lambda o: {"collection": COLLECTION, "question": Q}),
    ("POST", "/api/v1/cli"): Ask(her_cli, json=lambda o: {
        "argv": ["documents", "list", "-C", COLLECTION, "-U", OWNER, "--format", "json"]}),
    ("GET", f"{C}/conversations"): Ask(empty_list),
    ("GET", f"{C}/conversations/{{conversation}}"): Ask("missing"),
    ("DELETE", f"{C}/conversations/{{conversation}}"): Ask("missing"),
    ("GET", "/v1/models"): Ask(her_models),
    ("POST", "/v1/chat/completions"): Ask(answered_without_the_owners_data, json=lambda o: {
        "model": f"provgraph:{COLLECTION}:graph-rag", "messages": [{"role": "user", "content": Q}]}),
    ("GET", "/api/v1/jobs"): Ask(empty_list),
    ("GET", "/api/v1/jobs/{job_id}"): Ask("missing"),
    ("POST", "/api/v1/jobs/{job_id}/retry"): Ask("missing"),
    # these change her own data: asked last, in this order
    ("POST", f"{C}/import"): Ask(imported_into_hers, content=lambda o: b"<urn:x:s> <urn:x:p> <urn:x:o> <urn:x:g> .\n"),
    ("POST", "/api/v1/collections/{collection}/restore"): Ask(restored_as_hers, content=lambda o: o.archive),
    ("POST", f"{C}/documents"): Ask(her_upload, files=lambda o: [("files", ("mallory.txt", b"Mallory sells widgets.\n"))]),
    ("DELETE", f"{C}"): Ask(dropped_hers),
}
WS = ("WS", "/api/v1/socket")
VIEWER = {"/", "/login", "/ask", "/traces", "/traces/{sid:path}", "/conversations", "/conversations/{cid:path}", "/documents", "/documents/{doc:path}", "/explore",
          "/explore/{entity:path}", "/communities", "/communities/{community:path}"}


def fill(path: str, o: Owner, *, restore_into: str = "restored") -> str:
    values = {"collection": COLLECTION, "document": o.document, "record_id": seg(o.chunk), "entity": seg(ENTITY),
              "trace_id": o.trace, "job_id": o.job, "conversation": TALK, "community": seg("Community 0.1")}
    if path.endswith("/restore"):
        values["collection"] = restore_into
    for name, value in values.items():
        path = path.replace(f"{{{name}:path}}", value).replace(f"{{{name}}}", value)
    assert "{" not in path, path
    return path.removeprefix("/api/v1")


def test_every_route_is_in_the_isolation_table() -> None:
    routes = route_table()
    table = set(ASK) | {WS} | {("GET", p) for p in VIEWER} | {("MOUNT", "/static")}
    assert routes - table == set(), "routes the isolation test does not ask as another user: add them to ASK"
    assert table - routes == set(), "routes in ASK the app no longer has"


def test_another_users_token_gets_nothing_of_the_owners_on_every_route(users: Users) -> None:
    o = users.data
    for owner_only in (f"/collections/{COLLECTION}/records/{seg(o.chunk)}", f"/jobs/{o.job}",
                       f"/collections/{COLLECTION}/traces/{o.trace}", f"/collections/{COLLECTION}/entities/{seg(ENTITY)}"):
        assert users.owner.get(owner_only).status_code == 200, owner_only  # the ids are real
    for (method, template), ask in ASK.items():
        path = fill(template, o)
        url = users.server.url + path if path.startswith("/v1/") else path  # OpenAI's routes are beside /api/v1
        r = users.other.request(method, url, params=ask.params(o), headers=ask.headers,
                                json=ask.json(o) if ask.json else None,
                                content=ask.content(o) if ask.content else None,
                                files=ask.files(o) if ask.files else None)
        if ask.expect == "missing":
            assert r.status_code == 404 and r.json()["error"]["type"] == "NotFound", (method, path, r.text[:300])
            continue
        if ask.expect != "open":
            ask.expect(r, users)  # type: ignore[operator]
        asked = path + json.dumps(ask.params(o)) + json.dumps(ask.json(o) if ask.json else None)
        leaked = [m for m in o.markers() if m in r.text and m not in asked]  # an error may echo what was asked
        assert leaked == [], (method, path, leaked)
    # the owner's data is all there, unchanged
    assert [d["id"] for d in users.owner.get(f"/collections/{COLLECTION}/documents").json()] == o.documents
    assert users.owner.get(f"/collections/{COLLECTION}/traces/{o.trace}").status_code == 200
    assert users.owner.get(f"/collections/{COLLECTION}/conversations/{TALK}").json()["turns"][0]["session_id"] == o.trace
    assert users.owner.get(f"/jobs/{o.job}").json()["status"] == "done"
    counted = users.owner.get(f"/collections/{COLLECTION}/backup")
    assert json.loads(counted.headers["X-Provgraph-Counts"])["quads"] >= o.quads  # her import went to her own


def test_the_job_stream_of_another_users_job_does_not_exist(users: Users) -> None:
    r = users.other.get(f"/jobs/{users.data.job}", headers={"Accept": "text/event-stream"})
    assert r.status_code == 404 and r.json()["error"]["type"] == "NotFound"


def test_another_users_viewer_pages_hold_nothing_of_the_owners(users: Users) -> None:
    o = users.data
    for template in sorted(VIEWER):
        path = template.replace("{sid:path}", o.trace).replace("{doc:path}", o.document).replace(
            "{entity:path}", seg(ENTITY))
        r = httpx.get(users.server.url + path, headers={"Authorization": f"Bearer {users.tokens[OTHER]}"}, timeout=60)
        assert r.status_code < 500 and [m for m in o.markers() if m in r.text.replace(path, "")] == [], path


def socket_answers(users: Users, user: str, messages: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    from websockets.sync.client import connect

    url = users.server.url.replace("http", "ws") + "/api/v1/socket?token=" + users.tokens[user]
    got: dict[str, list[dict[str, Any]]] = {}
    with connect(url) as ws:
        for m in messages:
            ws.send(json.dumps(m))
        while sum(1 for msgs in got.values() if msgs[-1]["complete"]) < len(messages):
            message = json.loads(ws.recv(timeout=120))
            got.setdefault(message["id"], []).append(message)
    return got


def test_every_websocket_service_answers_another_user_from_her_own_data(users: Users) -> None:
    o = users.data
    services = [*RAG_SERVICES, "collections", *READ_SERVICES]
    # the owner's ids, and the owner's user named in the message and (where a request may carry more) in it
    asked = {"collection": COLLECTION, "question": Q}
    read = {"collection": COLLECTION, "document": o.document, "id": o.trace, "all": True}
    messages = [{"id": s, "service": s, "user": OWNER,
                 "request": asked if s in RAG_SERVICES else {**read, "user": OWNER}} for s in services]
    mine = socket_answers(users, OWNER, [{"id": s, "service": s, "request": read} for s in READ_SERVICES])
    assert mine["document"][-1]["response"]["id"] == f"urn:doc:{o.document}"  # real ids: the owner sees them
    assert mine["trace"][-1]["response"]["session_id"] == o.trace
    got = socket_answers(users, OTHER, messages)
    assert set(got) == set(services)
    for service in services:
        final = got[service][-1]["response"]
        if service in ("document", "trace"):
            assert final["message_type"] == "error" and final["error"]["type"] == "NotFound", (service, final)
            continue
        leaked = [m for m in o.markers() if m in json.dumps(got[service])]
        assert leaked == [], (service, leaked)
    assert got["documents"][-1]["response"] == []  # her traces are her own questions of this very batch
    assert got["check"][-1]["response"]["collection"] == f"{OTHER}/{COLLECTION}"
    assert {c["user"] for c in got["collections"][-1]["response"]} == {OTHER}
