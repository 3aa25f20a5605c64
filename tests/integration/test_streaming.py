"""Streamed as it happens, end to end through the real OpenAI provider and the loopback fake server.

Order, never time: the fake endpoint notes what the client had already received when each request
arrived (and, for the command line, waits until the test has read the step from the process's stderr).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from provgraph import Provgraph
from provgraph.config import Settings, load_settings
from provgraph.events import Explain
from provgraph.retrieval.edge_select import edge_id
from provgraph.runtime import Runtime
from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply, by_kind, request_kind
from tests.unit.retrieval.graph_world import populate

Q = "Who discovered polonium?"
SELECT = json.dumps({"id": edge_id("Marie Curie", "discovered", "polonium"), "reasoning": "names the discoverer"})
ANSWER = "Marie Curie discovered polonium [1]."
GUARD = 60.0  # seconds a request may wait for the test to catch up; only reached when streaming is broken


@pytest.fixture
def world_home(clean_environ: Path, tmp_path: Path) -> Path:
    with Runtime(load_settings(collection="w", llm="none")) as rt:
        populate(rt.store, rt.librarian, rt.entity_index, tmp_path)
    return clean_environ


class OrderWitness:
    """A server script that records, per request kind, the steps the client had received when it arrived."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.received: list[str] = []
        self.seen: dict[str, list[str]] = {}
        self._answer = by_kind(answers)

    def __call__(self, recorded: Recorded) -> Reply | None:
        if recorded.path.endswith("/chat/completions"):
            self.seen.setdefault(request_kind(recorded), list(self.received))  # the first of each kind
        return self._answer(recorded)


def stream_steps(events: object, witness: OrderWitness) -> None:
    async def consume() -> None:
        async for ev in events:  # type: ignore[attr-defined]
            if isinstance(ev, Explain):
                witness.received.append(ev.step)

    asyncio.run(consume())


def test_python_api_graph_rag_streams_before_the_model_answers(world_home: Path) -> None:
    witness = OrderWitness({"complete": SELECT, "stream": ANSWER})
    with FakeOpenAIServer(script=witness) as server, Provgraph(
        "w", llm_base_url=server.base_url, llm_model="fake", llm_max_retries=0
    ) as pg:
        stream_steps(pg.stream_graph_rag(Q), witness)
    assert witness.seen == {"complete": ["question", "ranking", "exploration"],
                            "stream": ["question", "ranking", "exploration", "focus"]}
    assert witness.received == ["question", "ranking", "exploration", "focus", "synthesis"]


def test_python_api_document_rag_streams_before_the_model_answers(corpus_settings: Settings) -> None:
    witness = OrderWitness({"stream": "Polonium was discovered in 1898 [1]."})
    with FakeOpenAIServer(script=witness) as server, Provgraph(
        "corpus", llm_base_url=server.base_url, llm_model="fake", llm_max_retries=0
    ) as pg:
        stream_steps(pg.stream_document_rag(Q), witness)
        answer = pg.document_rag(Q)
    assert witness.seen == {"stream": ["question", "exploration"]}
    assert answer.text == "Polonium was discovered in 1898 [1]." and answer.sources[0].marker == "[1]"


def test_cli_prints_each_step_before_the_model_answers(world_home: Path) -> None:
    """A real ``provgraph graph-rag -x`` process: edge selection is held until the test has READ the
    exploration step from the process's stderr; a CLI that held its output back never gets there."""
    printed = threading.Event()
    answer = by_kind({"complete": SELECT, "stream": ANSWER})
    waited: dict[str, bool] = {}

    def script(recorded: Recorded) -> Reply | None:
        if recorded.path.endswith("/chat/completions") and request_kind(recorded) == "complete":
            waited["exploration read first"] = printed.wait(GUARD)
        return answer(recorded)

    with FakeOpenAIServer(script=script) as server:
        env = {**os.environ, "PROVGRAPH_LLM_BASE_URL": server.base_url, "PROVGRAPH_LLM_MODEL": "fake",
               "PROVGRAPH_LLM_MAX_RETRIES": "0", "PYTHONUNBUFFERED": "1"}
        code = "from provgraph.cli.app import main; main()"
        proc = subprocess.Popen([sys.executable, "-c", code, "graph-rag", "-q", Q, "-C", "w", "-x"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("  [exploration] "):
                printed.set()
        out = proc.stdout.read() if proc.stdout else ""
        assert proc.wait(GUARD) == 0, "".join(lines)
    assert waited == {"exploration read first": True}
    assert out.startswith(ANSWER + "\n\n[1] ")
    assert [line.split()[0] for line in lines if line.startswith("  [")] == [
        "[question]", "[ranking]", "[exploration]", "[focus]", "[synthesis]"]
