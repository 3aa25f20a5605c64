"""``provgraph agent``: the no-LLM message, a scripted run with -v/-x, JSON events, MCP servers from settings."""

from __future__ import annotations

import json
import re
import sys

import pytest

from provgraph.config import Settings
from tests.cli_runner import run
from tests.fakes.mcp_server import FACTS
from tests.fakes.openai_server import FakeOpenAIServer, by_kind
from tests.unit.agent.conftest import REPO, step

Q = "Who discovered polonium?"


def use_steps(server: FakeOpenAIServer, *steps: str, stream: str = "The Curies [1].") -> None:
    """The real OpenAI provider, answered by the loopback server: agent steps in order, then ``stream``."""
    server.script = by_kind({"agent_step": list(steps), "stream": stream, "complete": stream})


def test_without_an_llm_exits_2_with_one_line(corpus_settings: Settings) -> None:
    r = run("agent", "-q", Q, "-C", "corpus")
    assert r.code == 2 and r.out == ""
    assert r.err == ("error: the agent needs an LLM: set PROVGRAPH_LLM_BASE_URL and PROVGRAPH_LLM_MODEL "
                     "(an OpenAI-compatible endpoint), or PROVGRAPH_LLM_GGUF_PATH (a GGUF file run in-process, "
                     "pip install 'provgraph[local]'), or the same keys in provgraph.toml\n")


def test_verbose_and_explain_output(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_steps(llm_server, step("Search the documents.", "document-query", {"question": Q}),
              step("Done.", final_answer="Marie and Pierre Curie."))
    r = run("agent", "-q", Q, "-C", "corpus", "-v", "-x")
    assert r.code == 0
    answer, blank, *sources = r.out.rstrip("\n").split("\n")
    assert answer == "Marie and Pierre Curie." and blank == ""
    assert sources and all(re.fullmatch(r"Chunk \d+( → Page \d+)? → .+, chars \d+–\d+", s) for s in sources)
    err = r.err.splitlines()
    assert err[0].startswith("  [question] urn:trustgraph:agent:") and err[1] == f"    Query: {Q}"
    assert err[2] == "[1] Thought: Search the documents."
    assert err[3] == f'[1] Action: document-query {{"question": "{Q}"}}'
    assert err[4].startswith("      [question] urn:trustgraph:docrag:")  # the sub-trace, one level deeper
    assert any(line.startswith("      [synthesis] urn:trustgraph:docrag:") for line in err)
    assert "[1] Observation: The Curies [1]." in err
    i = err.index("[1] Observation: The Curies [1].")
    assert err[i + 1].startswith("  [analysis] urn:trustgraph:agent:") and err[i + 1].endswith("/i1")
    assert "    Action: document-query" in err and "    Termination: final-answer" in err


def test_json_events_end_the_dialog(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_steps(llm_server, step("No tools needed.", final_answer="42"))
    r = run("agent", "-q", "q", "-C", "corpus", "--format", "json")
    assert r.code == 0
    events = [json.loads(line) for line in r.out.splitlines()]
    assert [e["message_type"] for e in events] == ["explain", "thought", "explain", "chunk", "explain", "final"]
    assert events[-1]["end_of_dialog"] is True and events[-1]["answer"] == "42"


def test_max_iterations_flag(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_steps(llm_server, *[step("again", "document-query", {"question": Q})] * 3)
    r = run("agent", "-q", Q, "-C", "corpus", "--max-iterations", "1")
    assert r.code == 0 and r.out.startswith("No final answer after 1 iteration(s).\n")
    assert "warning: stopped at the iteration limit (1) without a final answer" in r.err


def test_mcp_servers_from_settings(corpus_settings: Settings, monkeypatch: pytest.MonkeyPatch, llm_server: FakeOpenAIServer) -> None:
    server = {"name": "facts", "command": [sys.executable, "-m", "tests.fakes.mcp_server"], "cwd": str(REPO)}
    monkeypatch.setenv("PROVGRAPH_MCP_SERVERS", json.dumps([server]))
    use_steps(llm_server, step("Ask the tool.", "element-facts", {"element": "radium"}),
              step("Done.", final_answer="88"))
    r = run("agent", "-q", "Atomic number of radium?", "-C", "corpus", "-v")
    assert r.code == 0 and r.out == "88\n"
    assert f"[1] Observation: {FACTS['radium']}" in r.err.splitlines()

    monkeypatch.setenv("PROVGRAPH_MCP_SERVERS", json.dumps([{"name": "bad"}]))
    r = run("agent", "-q", "q", "-C", "corpus")
    assert r.code == 2 and r.err == 'error: MCP server \'bad\' needs exactly one of "command" (stdio) or "url" (HTTP)\n'


def test_agent_tools_lists_built_in_and_discovered_mcp_tools(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PROVGRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("PROVGRAPH_MCP_SERVERS", json.dumps(
        [{"name": "facts", "command": [sys.executable, "-m", "tests.fakes.mcp_server"], "cwd": str(REPO)}]))
    r = run("agent", "tools", "--format", "json")
    assert r.code == 0, r.err
    rows = [json.loads(line) for line in r.out.splitlines()]
    assert [(t["name"], t["source"]) for t in rows] == [
        ("knowledge-query", "built-in"), ("document-query", "built-in"), ("text-completion", "built-in"),
        ("element-facts", "mcp:facts")]
    assert rows[3]["description"] == "Short facts about a chemical element, by name."
    assert [t["groups"] for t in rows] == [["default", "knowledge"], ["default", "documents"], ["default", "text"],
                                           ["default", "mcp"]]


def test_agent_tools_needs_no_llm_and_no_collection(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PROVGRAPH_HOME", str(tmp_path))
    r = run("agent", "tools")
    assert r.code == 0 and "knowledge-query" in r.out and "text-completion" in r.out


@pytest.mark.parametrize("value", ['[{"name": ', "{not json}"])
def test_invalid_mcp_json_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path, value: str) -> None:
    monkeypatch.setenv("PROVGRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("PROVGRAPH_MCP_SERVERS", value)
    for args in (("agent", "tools"), ("agent", "-q", Q)):
        r = run(*args)
        assert r.code == 2 and r.out == ""
        assert r.err == ("error: invalid configuration: mcp_servers: not valid JSON "
                         "(PROVGRAPH_MCP_SERVERS must be a JSON list, e.g. '[]')\n")
        assert r.err.count("\n") == 1 and "Traceback" not in r.err


def test_agent_without_a_question_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PROVGRAPH_HOME", str(tmp_path))
    r = run("agent")
    assert r.code == 2 and "--question" in r.err


def test_a_tool_group_restricts_the_agent_and_traces_show_names_its_tools(
        corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_steps(llm_server, step("Search the documents.", "document-query", {"question": Q}),
              step("Done.", final_answer="Marie and Pierre Curie."))
    r = run("agent", "-q", Q, "-C", "corpus", "--group", "knowledge", "--format", "json")
    assert r.code == 0, r.err
    events = [json.loads(line) for line in r.out.splitlines()]
    refused = [e for e in events if e["message_type"] == "observation"]
    assert [(e["error"], e["response"]) for e in refused] == [
        (True, "InputError: unknown tool 'document-query'; the tools are: knowledge-query")]
    system = llm_server.chat_requests()[0].body["messages"][0]["content"]
    assert "knowledge-query" in system and "document-query" not in system  # never offered
    sid = events[-1]["session_id"]
    shown = run("traces", "show", sid, "-C", "corpus")
    assert "    Tools: knowledge-query (groups: knowledge)\n" in shown.out
    question = json.loads(run("traces", "show", sid, "-C", "corpus", "--format", "json").out)["question"]
    assert (question["tool_groups"], question["allowed_tools"]) == (["knowledge"], ["knowledge-query"])
    listed = json.loads(run("traces", "list", "-C", "corpus", "--all", "--format", "json").out)
    assert not [t for t in listed if t["type"] == "DocRAG" and t["informed_by"] == question["iri"]]  # never ran


def test_an_unknown_tool_group_is_one_line_exit_2(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    r = run("agent", "-q", Q, "-C", "corpus", "--group", "nope")
    assert (r.code, r.out) == (2, "")
    assert r.err.startswith("error: unknown tool group 'nope': the groups are ") and r.err.count("\n") == 1
    assert llm_server.chat_requests() == []  # refused before any LLM call
