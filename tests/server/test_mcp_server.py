"""``provgraph mcp`` driven by the official MCP Python client against real processes: stdio and streamable HTTP,
the tools, answers whose citations resolve to section/page and offsets of stored text, traces by session ID,
and per-user tokens over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from provgraph.config import load_settings
from provgraph.runtime import Runtime
from tests.server.live import corpus_copy, free_port, user_tokens

pytestmark = pytest.mark.server
CLI = "from provgraph.cli.app import main; main()"
TOOLS = ["graph_rag", "document_rag", "retrieve", "traces_show", "documents_list"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Path:
    return corpus_copy(tmp_path_factory, _corpus_home, "mcp")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
    env["PROVGRAPH_HOME"] = str(home)
    return env


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data: dict[str, Any] = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def _cited_text(home: Path, source: dict[str, Any]) -> str:
    """The text a citation names: its chunk's evidence span, read from the librarian."""
    with Runtime(load_settings(home=str(home), collection="corpus", llm="none")) as rt:
        chunk = rt.librarian.texts([source["chunk"]])[source["chunk"]]
    ev = source["evidence"]
    return chunk[ev["offset"]:ev["offset"] + ev["length"]]


def _check_answer(home: Path, data: dict[str, Any]) -> None:
    assert "[1]" in data["answer"] and data["collection"] == "corpus"
    first = next(s for s in data["sources"] if s["marker"] == "[1]")
    cited = [(s["marker"], s["chunk"], s["evidence"]["offset"]) for s in data["sources"]]
    assert len(cited) == len(set(cited)) and "edge" not in first  # each cited sentence once; the edges are in the trace
    assert first["section_title"] == "The discovery of polonium" and first["length"] > 0
    assert "polonium" in _cited_text(home, first).lower()


def test_stdio_lists_the_tools_and_answers_with_citations_and_a_trace(home: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-c", CLI, "mcp", "-C", "corpus"], env=_env(home))

    async def session() -> tuple[list[str], dict[str, Any], dict[str, Any], dict[str, Any], Any, dict[str, Any]]:
        async with Client(stdio_client(params)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            answer = _data(await client.call_tool("graph_rag", {"question": "Who discovered polonium?"}))
            trace = _data(await client.call_tool("traces_show", {"trace_id": answer["session_id"]}))
            docs = _data(await client.call_tool("documents_list", {}))
            passages = _data(await client.call_tool("retrieve", {"question": "Who discovered polonium?", "k": 3}))
            missing = await client.call_tool("traces_show", {"trace_id": "no-such-trace"})
            return names, answer, trace, docs, missing, passages

    names, answer, trace, docs, missing, passages = asyncio.run(session())
    assert len(passages["passages"]) == 3 and passages["question"] == "Who discovered polonium?"
    top = passages["passages"][0]
    assert top["rank"] == 1 and top["offset"] is not None and top["length"] and "polonium" in top["text"].lower()
    assert names == TOOLS
    _check_answer(home, answer)
    assert trace["session_id"] == answer["session_id"] and trace["synthesis"]["content"] == answer["answer"]
    assert len(docs["documents"]) == 5
    assert missing.is_error and missing.content[0].text == (
        "Error executing tool traces_show: NotFound: no trace 'no-such-trace' in collection default/corpus "
        "(list them with: provgraph traces list)")


@pytest.fixture(scope="module")
def http_server(home: Path) -> Iterator[tuple[str, dict[str, str]]]:
    tokens = user_tokens(home, "default", "bob")
    port = free_port()
    log = home.parent / "mcp-http.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", CLI, "mcp", "--http", "--port", str(port), "-C", "corpus"],
                                env=_env(home), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError(log.read_text())
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                import time
                time.sleep(0.1)
        yield url, tokens
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _over_http(url: str, token: str | None, tool: str, arguments: dict[str, Any]) -> Any:
    async def call() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                if tool == "list":
                    return [t.name for t in (await client.list_tools()).tools]
                return await client.call_tool(tool, arguments)

    return asyncio.run(call())


def test_http_needs_a_token_and_acts_as_its_user(home: Path, http_server: tuple[str, dict[str, str]]) -> None:
    url, tokens = http_server
    assert _over_http(url, tokens["default"], "list", {}) == TOOLS
    _check_answer(home, _data(_over_http(url, tokens["default"], "graph_rag", {"question": "Who discovered polonium?"})))
    docs = _over_http(url, tokens["default"], "documents_list", {"collection": "corpus"})
    assert len(_data(docs)["documents"]) == 5
    theirs = _over_http(url, tokens["bob"], "document_rag", {"question": "Who discovered polonium?", "collection": "corpus"})
    assert theirs.is_error and theirs.content[0].text == (
        "Error executing tool document_rag: NotFound: collection bob/corpus does not exist")
    assert _over_http(url, tokens["bob"], "documents_list", {"collection": "corpus"}).is_error
    refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401 and refused.json()["error"]["type"] == "Unauthorized"
    wrong = httpx.post(url, json={}, headers={"Authorization": "Bearer pgt_wrong"})
    assert wrong.status_code == 401
