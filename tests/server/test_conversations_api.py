"""Conversations over a real ``provgraph serve``: ``conversation`` in HTTP and WebSocket requests, the routes,
the Python client, another user's token, and the one-line errors with their status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from provgraph import Client
from provgraph.errors import NotFound
from tests.fakes.openai_server import FakeOpenAIServer
from tests.server.live import LiveServer, corpus_copy, live_server, user_tokens

pytestmark = pytest.mark.server


def _http(corpus_served: tuple[LiveServer, dict[str, str]], user: str = "default") -> httpx.Client:
    server, tokens = corpus_served
    return httpx.Client(base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {tokens[user]}"},
                        timeout=120)


def test_http_and_websocket_turns_of_one_conversation(corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    from websockets.sync.client import connect

    with _http(corpus_served) as http:
        first = http.post("/graph-rag", json={"collection": "corpus", "question": "Who discovered polonium?",
                                              "conversation": "web-1"})
        assert first.status_code == 200, first.text
        assert first.json()["final"]["conversation"] == {"id": "web-1", "turn": 1}
    server, tokens = corpus_served
    url = server.url.replace("http", "ws") + "/api/v1/socket?token=" + tokens["default"]
    with connect(url) as ws:
        ws.send(json.dumps({"id": "a", "service": "document-rag", "request": {
            "collection": "corpus", "question": "Where was she born?", "conversation": "web-1"}}))
        messages: list[dict[str, Any]] = []
        while not (messages and messages[-1]["complete"]):
            messages.append(json.loads(ws.recv(timeout=120)))
    final = messages[-1]["response"]
    assert final["message_type"] == "final" and final["conversation"] == {"id": "web-1", "turn": 2}
    question = messages[0]["response"]
    assert {"s": f"<{question['explain_id']}>", "p": "<https://trustgraph.ai/ns/originalQuery>",
            "o": '"Where was she born?"'} in [{k: t[k] for k in "spo"} for t in question["explain_triples"]]
    with _http(corpus_served) as http:
        thread = http.get("/collections/corpus/conversations/web-1").json()
        listed = http.get("/collections/corpus/conversations").json()
    assert [(t["turn"], t["type"], t["asked"], t["query"]) for t in thread["turns"]] == [
        (1, "graph-rag", "Who discovered polonium?", "Who discovered polonium?"),
        (2, "document-rag", "Where was she born?", "Where was Marie Curie born?")]
    assert thread["turns"][1]["rewrite"]["previous_turn"] == thread["turns"][0]["question_iri"]
    assert thread["turns"][1]["citations"][0]["source"]["section_title"] == "Marie Curie and Pierre Curie"
    assert [(c["conversation"], c["turns"]) for c in listed] == [("web-1", 2)]


def test_the_client_and_another_user(corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    server, tokens = corpus_served
    with Client(server.url, tokens["default"], collection="corpus") as client:
        answer = client.document_rag("Who discovered polonium?", conversation="cl")
        assert (answer.conversation, answer.turn) == ("cl", 1)
        assert client.conversation("cl")["turns"][0]["session_id"] == answer.session_id
        assert any(c["conversation"] == "cl" for c in client.conversations())
    with Client(server.url, tokens["bob"], collection="corpus") as bob:
        with pytest.raises(NotFound):
            bob.conversation("cl")
    with Client(server.url, tokens["default"], collection="corpus") as client:
        assert client.delete_conversation("cl") == 1
        with pytest.raises(NotFound, match="no conversation 'cl'"):
            client.conversation("cl")


def test_errors_are_one_line_with_their_status(corpus_served: tuple[LiveServer, dict[str, str]]) -> None:
    with _http(corpus_served) as http:
        missing = http.get("/collections/corpus/conversations/none-such")
        bad = http.post("/graph-rag", json={"collection": "corpus", "question": "q", "conversation": "bad id"})
        gone = http.delete("/collections/corpus/conversations/none-such")
    assert missing.status_code == 404 and gone.status_code == 404
    assert missing.json()["error"] == {
        "type": "NotFound",
        "message": "no conversation 'none-such' in collection default/corpus (list them with: provgraph conversations list)"}
    assert bad.status_code == 422



def test_an_unknown_tool_group_is_a_400(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path,
                                        server: FakeOpenAIServer) -> None:
    home = corpus_copy(tmp_path_factory, _corpus_home, "groups")
    token = user_tokens(home, "default")["default"]
    env = {"PROVGRAPH_LLM_BASE_URL": server.base_url, "PROVGRAPH_LLM_MODEL": "fake-model"}
    with live_server(home, env=env) as served, httpx.Client(
            base_url=served.url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        r = http.post("/agent", json={"collection": "corpus", "question": "q", "group": ["nope"]})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "InputError"
    assert r.json()["error"]["message"].startswith("unknown tool group 'nope': the groups are ")
    assert server.chat_requests() == []  # refused before any LLM call
