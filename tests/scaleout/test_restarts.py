"""A load rides out a PostgreSQL or NATS restart: the service is crashed by its pid in the middle of the
extraction (PostgreSQL's immediate shutdown, NATS killed -9), started again on its port, and ``load`` still
exits 0 with every job done, ``check`` consistent and the embedded load's quads and counts exactly: no fact or
vector lost or doubled.

The services here are this module's own (scripts/services.py in a scratch folder), so restarting them does not
touch the run's shared ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph.store.pg_jobs import DONE, JobTable
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS
from tests.fakes.openai_server import FakeOpenAIServer, chat
from tests.scaleout.test_cli_postgres import _timeless
from tests.scaleout.test_worker import RELS, WORKER
from tests.services import SCRIPT, _unavailable, service_state

LOAD = [sys.executable, "-c", "from provgraph.cli.app import main; main()", "load"]
DOCS = [str(CORPUS / name) for name in ("becquerel_rays.txt", "radium_institute.txt", "polonium_and_radium.md",
                                        "nobel_prizes.html")]


def _services(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--dir", str(folder)], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def own_services() -> Iterator[Path]:
    """PostgreSQL and NATS of this module's, to restart (skipped where the shared ones are not running either)."""
    if not service_state():
        _unavailable("PostgreSQL")
    folder = Path(tempfile.mkdtemp(prefix="provgraph-restart-"))
    folder.chmod(0o755)  # PostgreSQL runs as an unprivileged account when we are root (pytest's folders are 0700)
    try:
        started = _services(folder, "start", "--only", "postgres,nats")
        assert started.returncode == 0, started.stderr
        yield folder
    finally:
        _services(folder, "stop")
        shutil.rmtree(folder, ignore_errors=True)


def _urls(folder: Path) -> dict[str, str]:
    state = json.loads((folder / "services.json").read_text())
    return {name: str(info["url"]) for name, info in state.items()}


def _states(url: str, collection: str) -> list[tuple[str, str, str | None, int]]:
    """(id, state, error, attempts) of the collection's jobs."""
    table = JobTable(url)
    try:
        return list(table._link.conn.execute("SELECT id, state, error, attempts FROM provgraph_jobs WHERE collection = "
                                             "%s ORDER BY id", (collection,)).fetchall())
    finally:
        table.close()


def _done(url: str, collection: str) -> tuple[int, int]:
    """(jobs done, jobs) of the collection."""
    rows = _states(url, collection)
    return sum(1 for row in rows if row[1] == DONE), len(rows)


@pytest.mark.fault
@pytest.mark.parametrize("service", ["postgres", "nats"])
def test_a_load_rides_out_a_restart(service: str, own_services: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_QUEUE_ACK_WAIT", "4")  # a job whose ack was lost comes back soon
    with FakeOpenAIServer(default=chat(RELS, delay=0.4)) as llm:
        monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "fake-model")
        monkeypatch.setenv("PROVGRAPH_LLM_MAX_RETRIES", "0")
        assert run("load", *DOCS, "-C", "embedded", "--extractors", "relationships").code == 0  # the reference
        reference = run("export", "-C", "embedded").out.encode()
        counts = json.loads(run("check", "-C", "embedded", "--format", "json").out)

        urls = _urls(own_services)
        monkeypatch.setenv("PROVGRAPH_STORE_URL", urls["postgres"])
        monkeypatch.setenv("PROVGRAPH_QUEUE_URL", urls["nats"])
        name = f"restart-{service}-{uuid.uuid4().hex[:6]}"
        env = dict(os.environ)
        workers = [subprocess.Popen(WORKER, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                   for _ in range(2)]
        loading = subprocess.Popen([*LOAD, *DOCS, "-C", name, "--extractors", "relationships", "--format", "json"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while True:  # some jobs done, some not: the restart falls in the middle of the extraction
            done, jobs = _done(urls["postgres"], name)
            if jobs == len(DOCS) and 0 < done < jobs:
                break
            assert done < len(DOCS) or jobs < len(DOCS), "every job finished before the restart"
            if loading.poll() is not None or time.monotonic() > deadline:
                loading.kill()
                pytest.fail(f"no restart point: jobs {done}/{jobs} done; load: {loading.communicate()}")
            time.sleep(0.05)
        restarted = _services(own_services, "restart", "--only", service)
        assert restarted.returncode == 0, restarted.stderr
        try:
            try:
                out, err = loading.communicate(timeout=120)  # ~10 s here (jobs of 0.4 s LLM calls, a restart)
            except subprocess.TimeoutExpired:
                loading.kill()
                for w in workers:
                    w.terminate()
                pytest.fail(f"load still waiting after 120 s: jobs {_states(urls['postgres'], name)}; workers: "
                            f"{[w.communicate(timeout=60)[1][-3000:] for w in workers]}")
        finally:
            loading.kill()
            for w in workers:
                w.terminate()  # they run until stopped
            worker_errs = [w.communicate(timeout=60)[1] for w in workers]
    assert loading.returncode == 0, (err, worker_errs)
    assert {row["state"] for row in json.loads(out)["documents"]} == {"done"}
    if service == "postgres":  # the workers waited for the database within their deliveries
        assert [row[3] for row in _states(urls["postgres"], name)] == [1] * len(DOCS)
    checked = run("check", "-C", name, "--format", "json")
    assert checked.code == 0, checked.out
    mine = json.loads(checked.out)
    assert {**mine, "collection": None} == {**counts, "collection": None}  # the same quads, records and vectors
    assert _timeless(run("export", "-C", name).out.encode()) == _timeless(reference)
