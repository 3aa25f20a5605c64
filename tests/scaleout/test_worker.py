"""`load` with PROVGRAPH_QUEUE_URL enqueues one job per document; `provgraph worker` processes extract them.

At least once, and nothing doubled: a worker killed -9 in the middle of a job leaves it unacked, it is
delivered again after ack_wait, and the collection ends consistent with every job done.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

import pytest

from provgraph.store.pg_jobs import JobTable
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS
from tests.fakes.openai_server import FakeOpenAIServer, chat, error

WORKER = [sys.executable, "-c", "from provgraph.cli.app import main; main()", "worker"]
RELS = json.dumps({"relationships": [{"subject": "Marie Curie", "predicate": "founded", "object": "Radium Institute",
                                      "object_is_literal": False}]})


@pytest.fixture
def queued(pg_url: str, nats_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh collection name, with the store and the queue configured."""
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    monkeypatch.setenv("PROVGRAPH_QUEUE_URL", nats_url)
    return f"q-{uuid.uuid4().hex[:8]}"


def _jobs(out: str) -> list[str]:
    return [row["job"] for row in json.loads(out)["documents"]]


def _states(pg_url: str, jobs: list[str]) -> dict[str, tuple[str, str | None, int]]:
    table = JobTable(pg_url)
    try:
        return table.states(jobs)
    finally:
        table.close()


def test_workers_extract_what_load_enqueued(queued: str, pg_url: str) -> None:
    docs = [str(CORPUS / name) for name in ("becquerel_rays.txt", "radium_institute.txt", "polonium_and_radium.md")]
    enqueued = run("load", *docs, "-C", queued, "--no-wait", "--format", "json")
    assert enqueued.code == 0, enqueued.err
    jobs = _jobs(enqueued.out)
    assert len(jobs) == 3 and {s for s, _, _ in _states(pg_url, jobs).values()} <= {"queued", "running", "done"}
    workers = [subprocess.Popen([*WORKER, "--idle-exit", "1.5"], env=dict(os.environ), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outs
    assert sum(int(re.search(r"worker: (\d+) job", err).group(1)) for _, err in outs) == 3  # type: ignore[union-attr]
    assert {s for s, _, _ in _states(pg_url, jobs).values()} == {"done"}
    assert re.search(r"3 document\(s\), \d+ quads: consistent", run("check", "-C", queued).out)
    again = run("load", *docs, "-C", queued, "--format", "json")  # the same load: the same jobs, done
    assert again.code == 0 and _jobs(again.out) in ([], jobs) and "queued" not in again.out


@pytest.mark.fault
def test_a_worker_killed_mid_job_loses_nothing(queued: str, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_QUEUE_ACK_WAIT", "1.5")  # a dead worker's job comes back soon
    with FakeOpenAIServer(default=chat(RELS, delay=1.0)) as llm:
        monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "fake-model")
        monkeypatch.setenv("PROVGRAPH_LLM_MAX_RETRIES", "0")
        doc = str(CORPUS / "polonium_and_radium.md")
        enqueued = run("load", doc, "-C", queued, "--extractors", "relationships", "--no-wait", "--format", "json")
        assert enqueued.code == 0, enqueued.err
        [job] = _jobs(enqueued.out)
        first = subprocess.Popen([*WORKER], env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while _states(pg_url, [job])[job][0] != "running":
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)  # inside its LLM calls: nothing of the job is committed yet
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        assert _states(pg_url, [job])[job][0] == "running"
        second = subprocess.run([*WORKER, "--max-jobs", "1"], env=dict(os.environ), capture_output=True, text=True,
                                timeout=120)  # the job again, once its ack_wait has passed
        assert second.returncode == 0, second.stderr
    state, error, attempts = _states(pg_url, [job])[job]
    assert (state, error) == ("done", None) and attempts >= 2  # delivered again after ack_wait, then done
    assert re.search(r"1 document\(s\), \d+ quads: consistent", run("check", "-C", queued).out)


def test_a_job_that_keeps_failing_is_dead_lettered_and_load_says_so(queued: str, pg_url: str, nats_url: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_QUEUE_MAX_DELIVER", "2")
    with FakeOpenAIServer(default=error(500, "the model is down")) as llm:
        monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "fake-model")
        monkeypatch.setenv("PROVGRAPH_LLM_MAX_RETRIES", "0")
        worker = subprocess.Popen([*WORKER, "--max-jobs", "2"], env=dict(os.environ), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        loaded = run("load", str(CORPUS / "radium_institute.txt"), "-C", queued, "--extractors", "relationships")
        _, err = worker.communicate(timeout=120)
    assert loaded.code == 1
    assert re.search(r"error: urn:doc:radium_institute.txt \(job [0-9a-f]{32}\): 2 chunk extraction\(s\) failed", loaded.err)
    assert "attempt 1" in err and "attempt 2" in err
    dead = asyncio.run(_dead_letters(nats_url))
    assert any(json.loads(m)["collection"] == queued for m in dead)


async def _dead_letters(url: str) -> list[str]:
    import nats

    nc = await nats.connect(url)
    try:
        sub = await nc.jetstream().subscribe("provgraph.dead.*", ordered_consumer=True)
        out = []
        while True:
            try:
                msg = await sub.next_msg(timeout=1)
            except Exception:  # noqa: BLE001 - no more messages
                return out
            out.append(msg.data.decode())
    finally:
        await nc.close()


def test_the_api_load_route_enqueues_for_the_workers(queued: str, pg_url: str, nats_url: str, tmp_path: Path) -> None:
    """POST /collections/{c}/documents answers at once with its job; the documents' extraction goes to the queue
    (no worker yet: the job waits), and a worker started later does it; the job ends done with its documents."""
    from tests.server.live import live_server

    env = {"PROVGRAPH_STORE_URL": pg_url, "PROVGRAPH_QUEUE_URL": nats_url, "PROVGRAPH_LLM": "none"}
    (tmp_path / "srv").mkdir()
    names = ("becquerel_rays.txt", "radium_institute.txt")
    with live_server(tmp_path / "srv" / "home", env=env) as server, \
            httpx.Client(base_url=server.url + "/api/v1", timeout=60) as http:
        job = http.post(f"/collections/{queued}/documents",
                        files=[("files", (n, (CORPUS / n).read_bytes())) for n in names]).json()
        deadline = time.monotonic() + 60
        while True:  # both stored and waiting for a worker
            view = http.get(f"/jobs/{job['id']}").json()
            if [d["status"] for d in view["documents"]] == ["extracting", "extracting"]:
                break
            assert time.monotonic() < deadline and view["status"] != "failed", view
            time.sleep(0.1)
        worker = subprocess.run([*WORKER, "--idle-exit", "2"], env={**os.environ, "PROVGRAPH_HOME": str(tmp_path / "w")},
                                capture_output=True, text=True, timeout=120)
        assert worker.returncode == 0 and "worker: 2 job(s) handled" in worker.stderr, worker.stderr
        deadline = time.monotonic() + 60
        while (view := http.get(f"/jobs/{job['id']}").json())["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline, view
            time.sleep(0.1)
    assert view["status"] == "done" and view["errors"] == [], view
    assert [d["status"] for d in view["documents"]] == ["loaded", "loaded"]
    assert view["chunks_done"] == view["chunks"] > 0
    assert re.search(r"2 document\(s\), \d+ quads: consistent", run("check", "-C", queued).out)
