"""``provgraph graph-rag`` end to end: the answer on stdout, -x steps on stderr, exit codes."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.retrieval.edge_select import edge_id
from provgraph.runtime import Runtime
from tests.citations import citations_per_sentence
from tests.cli_runner import run
from tests.fakes.openai_server import FakeOpenAIServer, by_kind
from tests.unit.retrieval.graph_world import populate

Q = "Who discovered polonium?"
SELECT = json.dumps({"id": edge_id("Marie Curie", "discovered", "polonium"), "reasoning": "names the discoverer"})
ANSWER = "Marie Curie discovered polonium [1][2]."


@pytest.fixture
def collection(clean_environ: Path, tmp_path: Path) -> str:
    """The two-document world in collection ``w`` of the test's PROVGRAPH_HOME."""
    with Runtime(load_settings(collection="w", llm="none")) as rt:
        populate(rt.store, rt.librarian, rt.entity_index, tmp_path)
    return "w"


def use_llm(server: FakeOpenAIServer, answers: dict[str, str]) -> None:
    """The real OpenAI provider answers through the loopback server (see the llm_server fixture)."""
    server.script = by_kind(answers)


def sid_of(text: str) -> str:
    found = re.search(r"urn:trustgraph:question:([0-9a-f-]+)", text)
    assert found, text
    return found.group(1)


def test_explainable_prints_each_step_in_the_spec_format(collection: str, llm_server: FakeOpenAIServer) -> None:
    use_llm(llm_server, {"complete": SELECT, "stream": ANSWER})
    result = run("graph-rag", "-q", Q, "-C", collection, "-x")
    assert result.code == 0, result.err
    sid = sid_of(result.err)
    ranked, seeds, bridged = map(int, re.search(  # type: ignore[union-attr]
        r"Ranked (\d+) passage\(s\) from (\d+) seed\(s\), (\d+) over", result.err).groups())
    assert ranked >= 1 and seeds >= 1
    assert result.err == (
        f"  [question] urn:trustgraph:question:{sid}\n"
        f"    Query: {Q}\n"
        f"  [ranking] urn:trustgraph:prov:ranking:{sid}\n"
        f"    Ranked {ranked} passage(s) from {seeds} seed(s), {bridged} over a bridge entity\n"
        f"  [exploration] urn:trustgraph:prov:exploration:{sid}\n"
        "    Edges explored: 7\n"
        f"  [focus] urn:trustgraph:prov:focus:{sid}\n"
        "    Focused on 1 edge(s)\n"
        "      Edge: (Marie Curie, discovered, polonium)\n"
        "        Reason: names the discoverer\n"
        "        Source: Chunk 1 → Curie notes\n"
        "        Source: Chunk 1 → Radium notes\n"
        f"  [synthesis] urn:trustgraph:prov:synthesis:{sid}\n"
    )
    assert result.out == (
        f"{ANSWER}\n\n"
        "[1] Curie notes, chars 0–139\n"
        "[2] Radium notes, chars 0–109\n"
    )


def test_without_x_only_the_answer_and_no_streaming_prints_it_once(
    collection: str, llm_server: FakeOpenAIServer
) -> None:
    use_llm(llm_server, {"complete": SELECT, "stream": ANSWER})
    quiet = run("graph-rag", "-q", Q, "-C", collection)
    assert (quiet.code, quiet.err) == (0, "")
    assert quiet.out.startswith(ANSWER + "\n\n[1] ")
    whole = run("graph-rag", "-q", Q, "-C", collection, "--no-streaming")
    assert whole.out == quiet.out


def test_json_format_prints_one_event_per_line(collection: str, llm_server: FakeOpenAIServer) -> None:
    use_llm(llm_server, {"complete": SELECT, "stream": ANSWER})
    result = run("graph-rag", "-q", Q, "-C", collection, "--format", "json")
    assert result.code == 0
    events = [json.loads(line) for line in result.out.splitlines()]
    steps = [e.get("step", e["message_type"]) for e in events if e["message_type"] != "chunk"]
    assert steps == ["question", "ranking", "exploration", "focus", "synthesis", "final"]
    assert "".join(e["response"] for e in events if e["message_type"] == "chunk") == ANSWER
    last = events[-1]
    assert last["end_of_session"] is True and last["answer"] == ANSWER
    assert {s["marker"] for s in last["sources"]} == {"[1]", "[2]"}


def test_garbage_selection_falls_back_to_similarity_warns_and_exits_zero(
    collection: str, llm_server: FakeOpenAIServer
) -> None:
    use_llm(llm_server, {"complete": "no idea, sorry\n{broken", "stream": ANSWER})
    result = run("graph-rag", "-q", Q, "-C", collection, "-x")
    assert result.code == 0
    assert result.err.endswith("warning: 2 malformed selection line(s) dropped\n"
                               "warning: edge selection fell back to similarity: the LLM's edge selection was "
                               "unusable (2 malformed line(s), 0 unknown id(s))\n")
    assert "(fallback: the LLM's edge selection was unusable" in result.err
    assert "  [synthesis] urn:trustgraph:prov:synthesis:" in result.err
    assert result.out.startswith(ANSWER)


def test_an_unreachable_model_falls_back_to_the_no_llm_answer_and_says_so(
    collection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "fake-model")
    monkeypatch.setenv("PROVGRAPH_LLM_MAX_RETRIES", "0")
    result = run("graph-rag", "-q", Q, "-C", collection, "-x")
    assert result.code == 0
    selection, synthesis = result.err.splitlines()[-2:]
    assert selection.startswith("warning: edge selection fell back to similarity: the LLM's edge selection failed: ")
    assert synthesis.startswith("warning: synthesis fell back to an extractive answer: the LLM's answer failed: ")
    assert all(f"127.0.0.1:{port}" in line and "connection refused" in line for line in (selection, synthesis))
    assert "  [focus] " in result.err and "  [synthesis] " in result.err and "Traceback" not in result.err
    assert "[1]" in result.out


def test_limits_come_from_settings_and_flags_override_them(
    collection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVGRAPH_MAX_SUBGRAPH_SIZE", "3")
    result = run("graph-rag", "-q", Q, "-C", collection, "-x")
    assert "    Edges explored: 3\n" in result.err
    result = run("graph-rag", "-q", Q, "-C", collection, "-x", "--max-subgraph-size", "5", "--edge-limit", "1")
    assert "    Edges explored: 5\n" in result.err and "    Focused on 1 edge(s)\n" in result.err


def test_a_missing_collection_exits_3() -> None:
    result = run("graph-rag", "-q", Q, "-C", "nope")
    assert result.code == 3 and result.err.startswith("error: ")


def test_no_llm_mode_on_the_corpus_cites_every_sentence(corpus_settings: object) -> None:
    result = run("graph-rag", "-q", "Who discovered polonium?", "-C", "corpus", "--format", "json")
    assert result.code == 0, result.err
    events = [json.loads(line) for line in result.out.splitlines()]
    final = events[-1]
    focus = next(e for e in events if e.get("step") == "focus")
    selected = {t["o"] for t in focus["explain_triples"] if t["p"] == "<https://trustgraph.ai/ns/edge>"}
    assert selected, "no edge selected on the corpus"
    sourced = {f"<<( {s['edge']['s']} {s['edge']['p']} {s['edge']['o']} )>>" for s in final["sources"]}
    assert sourced and sourced <= selected  # listed: the sources the answer cites, each of a selected edge
    markers = {s["marker"] for s in final["sources"]}
    assert markers == set(re.findall(r"\[\d+\]", final["answer"]))  # listed sources = cited sources
    for cited in citations_per_sentence(final["answer"]):
        assert cited <= markers, (cited, markers)
