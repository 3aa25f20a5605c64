"""The community routes and global search on a real server: the communities list and one community's report
with its sources, global-rag as JSON and as SSE, the Python clients' global_rag and trace, and another user's
token seeing none of it."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from provgraph.api.tokens import TokenStore
from provgraph.client import Client
from provgraph.communities.build import build
from provgraph.config import load_settings
from provgraph.explain.model import GlobalTrace
from provgraph.runtime import Runtime
from tests.corpus_fixture import COLLECTION
from tests.server.live import live_server

pytestmark = pytest.mark.server
THEMES = "What are the main themes?"


@dataclass
class Users:
    owner: httpx.Client
    other: httpx.Client
    url: str
    token: str


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[Users]:
    from tests import corpus_fixture
    from tests.services import suite_module_database

    home = tmp_path_factory.mktemp("communities") / "home"
    shutil.copytree(_corpus_home, home)
    env = {}  # in a suite-on-PostgreSQL run: the corpus copied into a database of this module's, served from there
    if corpus_fixture._CORPUS_TEMPLATE is not None:
        env["PROVGRAPH_STORE_URL"] = suite_module_database("communities_api", corpus_fixture._CORPUS_TEMPLATE)
    with Runtime(load_settings(home=str(home), collection=COLLECTION, llm="none",
                               store_url=env.get("PROVGRAPH_STORE_URL"))) as rt:
        asyncio.run(build(rt.store, rt.librarian))
    tokens = TokenStore(home)
    _, owner = tokens.create("default")
    _, other = tokens.create("mallory")
    with live_server(home, env=env) as server:
        base = server.url + "/api/v1"
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {owner}"}, timeout=120) as a, \
                httpx.Client(base_url=base, headers={"Authorization": f"Bearer {other}"}, timeout=120) as b:
            assert b.post("/collections", json={"name": COLLECTION}).status_code == 201
            yield Users(a, b, server.url, owner)


def test_the_communities_and_one_report_with_its_sources(users: Users) -> None:
    rows = users.owner.get(f"/collections/{COLLECTION}/communities").json()
    assert rows and rows[0]["level"] == 0 and all(r["title"] for r in rows)
    one = users.owner.get(f"/collections/{COLLECTION}/communities/{quote(rows[0]['id'], safe='')}").json()
    assert one["id"] == rows[0]["id"] and one["report"]["title"] == rows[0]["title"]
    sources = [s for f in one["report"]["findings"] for fact in f["facts"] for s in fact["sources"]]
    assert sources and all(s["evidence"]["text"] for s in sources if "evidence" in s)
    assert users.other.get(f"/collections/{COLLECTION}/communities").json() == []
    missing = users.other.get(f"/collections/{COLLECTION}/communities/{quote(rows[0]['id'], safe='')}")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"


def test_global_rag_as_json_and_as_a_stream(users: Users) -> None:
    body = {"collection": COLLECTION, "question": THEMES}
    answer = users.owner.post("/global-rag", json=body).json()
    assert [s["step"] for s in answer["steps"]] == ["question", "map", "synthesis"]
    assert "[1]" in answer["final"]["answer"] and answer["final"]["sources"]
    with users.owner.stream("POST", "/global-rag", json=body, headers={"Accept": "text/event-stream"}) as r:
        messages = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    assert [m["message_type"] for m in messages][0] == "explain" and messages[-1]["end_of_session"]
    theirs = users.other.post("/global-rag", json=body).json()
    assert theirs["final"]["answer"].startswith("No community reports are stored yet")


def test_the_python_client_answers_globally_and_reads_the_trace_back(users: Users) -> None:
    with Client(users.url, token=users.token, collection=COLLECTION) as client:
        answer = client.global_rag(THEMES)
        assert "[1]" in answer.text and answer.sources
        trace = client.trace(answer.session_id)
    assert isinstance(trace, GlobalTrace) and trace.answer == answer.text
    assert trace.citations and all(f.sources for c in trace.citations for f in c.facts)
