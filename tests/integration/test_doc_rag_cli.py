"""``provgraph document-rag`` on the sample corpus: answer, citations, ``-x`` steps, JSON events."""

from __future__ import annotations

import json
import re

from provgraph.config import Settings
from tests.cli_runner import run
from tests.fakes.openai_server import FakeOpenAIServer, by_kind, error

Q = "Who discovered polonium?"


def use_llm(server: FakeOpenAIServer, answer: str) -> None:
    """The real OpenAI provider answers ``answer`` through the loopback server, streamed or not."""
    server.script = by_kind({"stream": answer, "complete": answer})


def test_extractive_answer_with_citations(corpus_settings: Settings) -> None:
    r = run("document-rag", "-q", Q, "-C", "corpus")
    assert r.code == 0 and r.err == ""
    answer, blank, *citations = r.out.rstrip("\n").split("\n")
    assert blank == "" and citations
    markers = re.findall(r"\[\d\]", answer)
    assert markers and {c.split(" ")[0] for c in citations} == set(markers)
    for line in citations:
        assert re.fullmatch(r"\[\d\] .+, chars \d+–\d+", line), line


def test_explain_steps_on_stderr(corpus_settings: Settings) -> None:
    r = run("document-rag", "-q", Q, "-C", "corpus", "-x", "--doc-limit", "2")
    assert r.code == 0
    lines = r.err.splitlines()
    assert re.fullmatch(r"  \[question\] urn:trustgraph:docrag:[0-9a-f-]{36}", lines[0])
    assert lines[1] == f"    Query: {Q}"
    assert re.fullmatch(r"  \[exploration\] urn:trustgraph:docrag:[0-9a-f-]{36}/exploration", lines[2])
    assert lines[3] == "    Chunks retrieved: 2"
    assert all(re.fullmatch(r"      Source: Chunk \d+( → Page \d+)? → .+", line) for line in lines[4:6])
    assert re.fullmatch(r"  \[synthesis\] urn:trustgraph:docrag:[0-9a-f-]{36}/synthesis", lines[6])
    assert re.fullmatch(r"    Cited \d chunk\(s\)", lines[7])


def test_json_events(corpus_settings: Settings) -> None:
    r = run("document-rag", "-q", Q, "-C", "corpus", "--format", "json")
    assert r.code == 0
    events = [json.loads(line) for line in r.out.splitlines()]
    assert [e["message_type"] for e in events] == ["explain", "explain", "chunk", "explain", "final"]
    assert [e.get("step") for e in events[:2]] == ["question", "exploration"]
    final = events[-1]
    assert final["end_of_session"] and final["sources"] and all(s["marker"] for s in final["sources"])


def test_with_an_llm_the_answer_streams_and_cites(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    use_llm(llm_server, "The Curies found it in 1898 [1].")
    r = run("document-rag", "-q", Q, "-C", "corpus")
    assert r.code == 0
    answer, blank, citation = r.out.rstrip("\n").split("\n")
    assert answer == "The Curies found it in 1898 [1]." and blank == "" and citation.startswith("[1] ")
    assert [c.body["stream"] for c in llm_server.chat_requests()] == [True]
    use_llm(llm_server, "No ids here.")
    r = run("document-rag", "-q", Q, "-C", "corpus", "--no-streaming")
    assert r.code == 0 and r.out.startswith("No ids here.\n")
    assert r.err == "warning: the answer cites no passage\n"


def test_missing_collection_and_llm_failure(corpus_settings: Settings, llm_server: FakeOpenAIServer) -> None:
    r = run("document-rag", "-q", Q, "-C", "nope")
    assert r.code == 3 and r.err.startswith("error: ")
    llm_server.script = lambda recorded: error(503, "overloaded")
    r = run("document-rag", "-q", Q, "-C", "corpus")  # the extractive answer, and why
    assert r.code == 0 and re.search(r"\[\d\]", r.out)
    assert r.err.startswith("warning: synthesis fell back to an extractive answer: the LLM's answer failed: ")
    assert "overloaded" in r.err and r.err.count("\n") == 1
