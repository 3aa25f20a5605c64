"""Streaming over HTTP without a browser, on a real server process: the SSE ``data:`` lines of a query and
of a load job are read as they arrive while the fake LLM is held, so a server that buffers (or sends a
job's final state only) fails here, whether or not Chromium is installed.

Order, never time: the fake LLM's handler waits until the reading thread has seen what must already
have been sent (at most ``GUARD`` seconds, reached only when streaming is broken) and records whether it had.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from provgraph.api.tokens import TokenStore
from tests.corpus_fixture import COLLECTION
from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply, chat, chat_stream, request_kind
from tests.server.live import LiveServer, live_server

pytestmark = pytest.mark.server
GUARD = 60.0
PIECES = ["Marie Curie ", "discovered ", "polonium ", "[1]."]


@dataclass
class Reader:
    """Reads one SSE response's ``data:`` messages in a thread, as they arrive."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)

    def run(self, client: httpx.Client, method: str, path: str, **kw: Any) -> threading.Thread:
        def read() -> None:
            try:
                with client.stream(method, path, headers={"Accept": "text/event-stream"}, **kw) as r:
                    for line in r.iter_lines():
                        if line.startswith("data: "):
                            with self.cond:
                                self.messages.append(json.loads(line[6:]))
                                self.cond.notify_all()
            finally:
                with self.cond:
                    self.done = True
                    self.cond.notify_all()

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        return thread

    def wait(self, seen: Callable[[list[dict[str, Any]]], bool], guard: float = GUARD) -> bool:
        """Whether the client has received what ``seen`` looks for (waiting up to ``guard`` seconds)."""
        with self.cond:
            return self.cond.wait_for(lambda: seen(self.messages), timeout=guard)


@dataclass
class Llm:
    """The fake LLM's script: each request may first wait on what the client must have received."""

    before: Callable[[Recorded], Reply | None] = lambda r: None

    def __call__(self, recorded: Recorded) -> Reply | None:
        if not recorded.path.endswith("/chat/completions"):
            return None
        return self.before(recorded)


@dataclass
class World:
    server: LiveServer
    client: httpx.Client
    llm: Llm


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[World]:
    home = tmp_path_factory.mktemp("streams") / "home"
    shutil.copytree(_corpus_home, home)
    _, token = TokenStore(home).create("default")
    llm = Llm()
    with FakeOpenAIServer() as fake:
        fake.script = llm
        env = {"PROVGRAPH_LLM_BASE_URL": fake.base_url, "PROVGRAPH_LLM_MODEL": "fake-model",
               "PROVGRAPH_LLM_MAX_RETRIES": "0"}
        with live_server(home, env=env) as server, httpx.Client(
                base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
            yield World(server, client, llm)


def answer_pieces(messages: list[dict[str, Any]]) -> list[str]:
    return [m["response"] for m in messages if m["message_type"] == "chunk" and m["response"]]


def test_a_querys_steps_and_answer_pieces_arrive_while_the_llm_is_held(world: World) -> None:
    reader = Reader()
    had_steps: list[list[str]] = []
    had_pieces: list[bool] = []

    def script(recorded: Recorded) -> Reply:
        if request_kind(recorded) != "stream":
            return chat(json.dumps({"concepts": ["Marie Curie", "polonium"]}))
        reader.wait(lambda ms: any(m["message_type"] == "explain" for m in ms))  # the synthesis waits for them
        with reader.cond:
            had_steps.append([m["step"] for m in reader.messages if m["message_type"] == "explain"])
        reply = chat_stream(PIECES)

        def after(i: int) -> None:  # event 0 is the role; 1..n the pieces: each must reach the client first
            if 1 <= i <= len(PIECES):
                had_pieces.append(reader.wait(lambda ms: len(answer_pieces(ms)) >= i, GUARD if all(had_pieces) else 1))

        reply.after_event = after
        return reply

    world.llm.before = script
    thread = reader.run(world.client, "POST", "/document-rag",
                        json={"collection": COLLECTION, "question": "Who discovered polonium?"})
    thread.join(timeout=4 * GUARD)
    assert reader.done
    steps = [m["step"] for m in reader.messages if m["message_type"] == "explain"]
    assert len(had_steps) == 1 and had_steps[0] and had_steps[0] == steps[:len(had_steps[0])], (had_steps, steps)
    assert "synthesis" not in had_steps[0]  # what happened before the model was asked, sent before it answered
    assert had_pieces == [True] * len(PIECES), "an answer piece was held back until the next one came"
    assert "".join(answer_pieces(reader.messages)).startswith("Marie Curie discovered polonium")
    assert reader.messages[-1]["message_type"] == "final"


def test_a_load_jobs_stream_sends_each_state_as_it_happens(world: World) -> None:
    files = [(f"note{i}.txt", f"Person{i} Smith met Person{i} Jones in Paris in 19{10 + i}.\n".encode()) for i in range(3)]
    reader = Reader()
    arrived = [0]
    lock = threading.Lock()
    seen_before: list[bool] = []

    def script(recorded: Recorded) -> Reply:
        with lock:
            arrived[0] += 1
            n = arrived[0]
        # extraction request n waits until the client has been sent the state with n - 1 chunks done
        guard = GUARD if all(seen_before) else 1
        seen_before.append(reader.wait(lambda ms: any(m.get("chunks_done", -1) >= n - 1 and m["status"] == "running"
                                                      for m in ms), guard))
        return chat(json.dumps({"relationships": []}))

    world.llm.before = script
    job = world.client.post(f"/collections/{COLLECTION}/documents", files=[("files", f) for f in files],
                            data={"extractors": "relationships"})
    assert job.status_code == 202, job.text
    thread = reader.run(world.client, "GET", f"/jobs/{job.json()['id']}")
    thread.join(timeout=4 * GUARD)
    assert reader.done
    states = [(m["status"], m["files_done"], m["chunks_done"]) for m in reader.messages]
    assert seen_before == [True, True, True], states
    assert states[-1] == ("done", 3, 3) and len(states) >= 4, states
    assert [s for s in states if s[0] == "running" and s[1] == 3] != []  # loaded, extraction under way
    done = [c for _, _, c in states]
    assert done == sorted(done) and {0, 1, 2, 3} <= set(done), states  # each outcome sent, in order
    assert [m for m in reader.messages if m["status"] == "done"] == reader.messages[-1:]
