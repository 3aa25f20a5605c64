"""Hostile or broken surroundings end in ONE line on stderr and a documented exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import Result, run
from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply

HTML = "<!DOCTYPE html><html><head><title>Sign in</title></head><body><form>…</form></body></html>"
NOT_API = "HTTP 200 but the reply is not an OpenAI-compatible API response (it begins '<!DOCTYPE html><html><head><title>Sign …')"


def html_page(recorded: Recorded) -> Reply:
    return Reply(body=HTML, content_type="text/html; charset=utf-8")


def one_line(r: Result) -> str:
    assert "Traceback" not in r.err and r.err.count("\n") == 1, r.err
    assert r.err.startswith("error: ")
    return r.err


def test_an_llm_answering_200_with_html_on_graph_rag(corpus_settings: object, llm_server: FakeOpenAIServer) -> None:
    llm_server.script = html_page
    r = run("graph-rag", "-q", "Who discovered polonium?", "-C", "corpus")
    assert r.code == 0 and "Traceback" not in r.err  # GraphRAG falls back to its no-LLM steps and says why
    warnings = [line for line in r.err.splitlines() if line.startswith("warning: ")]
    assert NOT_API in warnings[0] and "check the base URL (usually ending in /v1)" in warnings[0]


def test_an_llm_answering_200_with_html_on_load(tmp_path: Path, llm_server: FakeOpenAIServer) -> None:
    llm_server.script = html_page
    doc = tmp_path / "a.txt"
    doc.write_text("Marie Curie discovered polonium in 1898.", encoding="utf-8")
    r = run("load", str(doc), "--extractors", "relationships", "--format", "json")
    assert r.code == 1 and "Traceback" not in r.err
    [line] = [line for line in r.err.splitlines() if line.startswith("error: ")]
    assert NOT_API in line


def test_an_embedding_endpoint_answering_200_with_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer() as server:
        for _ in range(3):
            server.push(Reply(body=HTML, content_type="text/html"))
        monkeypatch.setenv("PROVGRAPH_EMBEDDER", "openai")
        monkeypatch.setenv("PROVGRAPH_EMBEDDER_MODEL", "e")
        monkeypatch.setenv("PROVGRAPH_EMBEDDER_BASE_URL", server.base_url)
        doc = tmp_path / "a.txt"
        doc.write_text("Marie Curie discovered polonium in 1898.", encoding="utf-8")
        r = run("load", str(doc))
    assert r.code == 5
    assert NOT_API in one_line(r)


def test_a_literal_over_16_mib_on_import_imports_nothing(tmp_path: Path) -> None:
    big = tmp_path / "big.nq"
    big.write_text('<urn:x:s> <urn:x:p> <urn:x:o> .\n<urn:x:a> <urn:x:p> "' + "a" * (17 << 20) + '" .\n',
                   encoding="utf-8")
    r = run("import", str(big), "-C", "c")
    assert r.code == 2
    assert one_line(r) == (f"error: {big}: collection default/c: cannot import nquads: a term is larger than the "
                           "parser's limit of 16 MiB (Reached the buffer maximal size of 16777216); nothing was imported\n")
    assert run("export", "-C", "c").out == ""


@pytest.mark.parametrize("value", ["not json", "{", '{"name": "x"}'])
def test_mcp_servers_that_are_not_a_json_list_exit_2(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("PROVGRAPH_MCP_SERVERS", value)
    r = run("agent", "-q", "q")
    assert r.code == 2
    assert one_line(r).startswith("error: invalid configuration: mcp_servers: ")
