"""TrustGraph wire mode replayed against TrustGraph's message schema and its client's reading rules.

The facts (TrustGraph's public schema and socket client, not its code): a RAG response has
``message_type`` ("chunk" or "explain"), ``response``, ``end_of_stream``, ``end_of_session``, the
explain fields and token counts; an agent response ``message_type`` ("thought", "action",
"observation", "answer"), ``content``, ``end_of_message``, ``end_of_dialog``. The client raises on
an envelope with ``error``, takes RAG text from ``response`` and agent text from ``content``, and
stops at the first message with ``end_of_session`` or ``end_of_dialog`` or an envelope ``complete``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from provgraph.config import Settings
from tests.corpus_fixture import corpus_module_env
from tests.cli_runner import run
from tests.fakes.openai_server import FakeOpenAIServer
from tests.integration.test_agent_cli import use_steps
from tests.server.live import LiveServer, corpus_copy, live_server, user_tokens
from tests.unit.agent.conftest import step

pytestmark = pytest.mark.server
Q = "Who discovered polonium?"
# TrustGraph's field names and types (GraphRagResponse / DocumentRagResponse, AgentResponse)
RAG_SCHEMA: dict[str, type | tuple[type, ...]] = {
    "response": str, "end_of_stream": bool, "end_of_session": bool, "message_type": str,
    "explain_id": (str, type(None)), "explain_graph": (str, type(None)), "explain_triples": list,
    "in_token": (int, type(None)), "out_token": (int, type(None)), "model": (str, type(None)),
}
AGENT_SCHEMA: dict[str, type | tuple[type, ...]] = {
    "message_type": str, "content": str, "end_of_message": bool, "end_of_dialog": bool,
}
RAG_KINDS, AGENT_KINDS = {"chunk", "explain"}, {"thought", "action", "observation", "answer"}


def replay(envelopes: Iterable[dict[str, Any]], *, agent: bool) -> tuple[str, int, list[dict[str, Any]]]:
    """Read as TrustGraph's client does: the text, how many envelopes it read before it stopped, the messages."""
    text, read, messages = "", 0, []
    for envelope in envelopes:
        read += 1
        if "error" in envelope:
            raise RuntimeError(envelope["error"])
        resp = envelope["response"]
        messages.append(resp)
        schema, kinds = (AGENT_SCHEMA, AGENT_KINDS) if agent else (RAG_SCHEMA, RAG_KINDS)
        assert resp["message_type"] in kinds, resp
        for name, kind in schema.items():
            if name in resp:
                assert isinstance(resp[name], kind), (name, resp)
        if agent and resp["message_type"] == "answer":
            text += resp["content"]
        elif not agent and resp["message_type"] == "chunk":
            text += resp["response"]
        if resp.get("end_of_session") or resp.get("end_of_dialog") or envelope.get("complete"):
            break
    return text, read, messages


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[tuple[LiveServer, str]]:
    home = corpus_copy(tmp_path_factory, _corpus_home, "tg-wire")
    token = user_tokens(home, "default")["default"]
    with live_server(home, env=corpus_module_env("trustgraph_wire")) as server:
        yield server, token


def test_a_trustgraph_client_reads_the_websocket_stream_unchanged(served: tuple[LiveServer, str]) -> None:
    from websockets.sync.client import connect

    server, token = served
    with httpx.Client(base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120) as h:
        plain = h.post("/graph-rag", json={"collection": "corpus", "question": Q}).json()["final"]["answer"]
    url = server.url.replace("http", "ws") + f"/api/v1/socket?wire=trustgraph&token={token}"
    with connect(url) as ws:  # TrustGraph's request: query, kebab-case limits, streaming, workspace and flow
        ws.send(json.dumps({"id": "r1", "workspace": "default", "flow": "default", "service": "graph-rag",
                            "request": {"query": Q, "collection": "corpus", "entity-limit": 50, "streaming": True}}))
        sent: list[dict[str, Any]] = []
        while not (sent and sent[-1]["complete"]):
            sent.append(json.loads(ws.recv(timeout=120)))
        ws.send(json.dumps({"id": "r2", "service": "graph-rag", "request": {"query": " ", "collection": "corpus"}}))
        failed = json.loads(ws.recv(timeout=120))
    text, read, messages = replay(sent, agent=False)
    assert read == len(sent)  # it stops at the last message, not before
    assert text == plain and "[1]" in text
    assert [m["message_type"] for m in messages][:1] == ["explain"] and messages[-1]["message_type"] == "chunk"
    last = messages[-1]
    assert (last["response"], last["end_of_stream"], last["end_of_session"]) == ("", True, True)
    assert last["answer"] == plain and last["sources"] and last["session_id"]
    assert sum(m["end_of_session"] for m in messages) == 1
    assert failed == {"id": "r2", "error": {"type": "InputError", "message": "the question is empty"}, "complete": True}
    with pytest.raises(RuntimeError):
        replay([failed], agent=False)


def test_sse_with_wire_trustgraph(served: tuple[LiveServer, str]) -> None:
    server, token = served
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    with httpx.Client(base_url=server.url + "/api/v1", headers=headers, timeout=120) as h:
        body = h.post("/document-rag?wire=trustgraph", json={"collection": "corpus", "question": Q}).text
        bad = h.post("/document-rag?wire=nope", json={"collection": "corpus", "question": Q})
    frames = [{"response": json.loads(line[6:])} for line in body.splitlines() if line.startswith("data: ")]
    text, read, messages = replay(frames, agent=False)
    assert read == len(frames) and text == messages[-1]["answer"] and "[1]" in text
    assert bad.status_code == 400 and bad.json()["error"]["message"] == "unknown wire 'nope': use provgraph or trustgraph"


def test_the_agent_in_trustgraph_shapes(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_steps(llm_server, step("Search the documents.", "document-query", {"question": Q}),
              step("Done.", final_answer="Marie and Pierre Curie."))
    r = run("agent", "-q", Q, "-C", "corpus", "--format", "trustgraph")
    assert r.code == 0, r.err
    lines = [{"response": json.loads(line)} for line in r.out.splitlines()]
    agent_lines = [m for m in lines if m["response"]["message_type"] != "explain"]
    text, read, messages = replay(agent_lines, agent=True)
    assert read == len(agent_lines) and text == "Marie and Pierre Curie."
    assert [m["message_type"] for m in messages][:3] == ["thought", "action", "observation"]
    assert messages[0]["content"] == "Search the documents."
    assert messages[-1]["end_of_dialog"] is True and messages[-1]["answer"] == "Marie and Pierre Curie."


def test_graph_rag_cli_trustgraph_lines(corpus_settings: Settings) -> None:
    r = run("graph-rag", "-q", Q, "-C", "corpus", "--format", "trustgraph")
    lines = [{"response": json.loads(line)} for line in r.out.splitlines()]
    text, read, messages = replay(lines, agent=False)
    assert r.code == 0 and read == len(lines) and text == messages[-1]["answer"]
