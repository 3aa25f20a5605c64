"""Low: jobs vanished on restart, and the server's job list grew without bound. A job outlives its
server: a finished one reads back as it was; one the server was killed in reads back failed, its
stored document ``interrupted``, and its retry completes that document."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply, chat
from tests.security.conftest import http
from tests.server.live import LiveServer, live_server


def _upload(server: LiveServer, name: str, text: bytes, extractors: str) -> str:
    job = http.post(f"{server.url}/api/v1/collections/c/documents", files=[("files", (name, text, "text/plain"))],
                    data={"extractors": extractors})
    assert job.status_code == 202, job.text
    return str(job.json()["id"])


def _ended(server: LiveServer, job_id: str) -> dict[str, Any]:
    with http.stream("GET", f"{server.url}/api/v1/jobs/{job_id}", headers={"Accept": "text/event-stream"}) as events:
        return [json.loads(line[6:]) for line in events.iter_lines() if line.startswith("data: ")][-1]  # type: ignore[no-any-return]


def test_jobs_outlive_their_server_and_an_interrupted_one_is_retried(tmp_path: Path) -> None:
    home = tmp_path / "home"
    asked, gate = threading.Event(), threading.Event()

    def script(recorded: Recorded) -> Reply | None:
        if not recorded.path.endswith("/chat/completions"):
            return None
        asked.set()
        reply = chat(json.dumps({"relationships": []}))
        reply.gate = gate  # held until the first server is gone
        return reply

    with FakeOpenAIServer(script=script) as fake:
        env = {"PROVGRAPH_LLM_BASE_URL": fake.base_url, "PROVGRAPH_LLM_MODEL": "fake-model",
               "PROVGRAPH_LLM_MAX_RETRIES": "0"}
        with live_server(home, env=env) as first:
            done = _ended(first, _upload(first, "curie.txt", b"Marie Curie discovered polonium.\n", "cooccurrence"))
            held = _upload(first, "joliot.txt", b"Irene Joliot-Curie won the Nobel Prize.\n", "relationships")
            assert asked.wait(60)  # its document is stored, its chunk's extraction waits on the LLM
            first.process.kill()
            first.process.wait()
        gate.set()
        with live_server(home, env=env) as second:
            api = second.url + "/api/v1"
            assert [j["id"] for j in http.get(f"{api}/jobs").json()] == [held, done["id"]]
            assert http.get(f"{api}/jobs/{done['id']}").json() == done
            interrupted = http.get(f"{api}/jobs/{held}").json()
            assert (interrupted["status"], interrupted["errors"]) == (
                "failed", ["interrupted: the server stopped before this job ended (1 of 1 file(s) loaded)"])
            [doc] = interrupted["documents"]
            assert (doc["document"], doc["status"], doc["error"]) == (
                "urn:doc:joliot.txt", "interrupted", "interrupted: the server stopped before this job ended")
            assert not (home / "uploads" / held).exists()
            retry = http.post(f"{api}/jobs/{held}/retry")
            assert retry.status_code == 202, retry.text
            again = _ended(second, retry.json()["id"])
            [doc] = again["documents"]
            assert (again["status"], again["retry_of"], doc["document"], doc["status"], doc["chunks_done"]) == (
                "done", held, "urn:doc:joliot.txt", "loaded", 1)
            found = http.get(f"{api}/collections/c/check").json()
            assert (found["consistent"], found["problems"], found["documents"]) == (True, [], 2), found
