"""Backups of a collection another thread or process is writing.

A process that has the collection open (a server, a long load) backs it up itself, through
``Runtime.backup``: every archive taken while its load runs restores to a collection whose complete
documents are whole, and a `load` again completes it to what a clean load gives. Another process
cannot read a store that one is writing consistently, so `provgraph backup` refuses in one line,
or with ``--wait`` waits until that process lets go of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.fault.test_crash import ROOT, _consistent, _graph, _picks, corpus  # noqa: F401 - corpus: the fixture

pytestmark = [pytest.mark.fault, pytest.mark.embedded_only]  # backup archives the embedded store (PostgreSQL: export)

LOAD = ["--chunk-size", "600", "--chunk-overlap", "50", "--llm", "none"]
WHOLE = {"document-missing-from-store", "document-missing-from-librarian", "chunks-differ", "chunk-vector-missing",
         "chunk-vector-wrong", "bytes-lost", "orphan-node"}
"""Problems that would mean a document complete in the archive is not whole in it."""


def _harness(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _problems(collection: str) -> set[str]:
    r = run("check", "-C", collection, "--format", "json")
    return {p["kind"] for p in json.loads(r.out)["problems"]}


def test_backups_taken_by_the_writing_process_during_its_load_restore_whole(corpus: Path, tmp_path: Path) -> None:
    assert run("load", str(corpus), *LOAD, "-C", "clean").code == 0
    graph, picks = _graph("clean"), _picks("clean")
    writer = _harness("tests.fault.live_writer", "backups", str(corpus), str(tmp_path))
    out, err = writer.communicate(timeout=600)
    assert writer.returncode == 0, err
    taken = int(out.split("BACKUPS ")[-1])
    assert taken >= 2, out  # at least two taken while the load was writing
    complete_counts = []
    for n in range(taken):
        archive = tmp_path / f"backup-{n}.tar"
        with tarfile.open(archive) as tar:
            manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
        complete_counts.append(manifest["counts"]["complete_documents"])
        name = f"copy{n}"
        r = run("restore", str(archive), "-C", name)
        assert r.code == 0, r.err  # the quad count of the copied store matches the manifest's
        assert not _problems(name) & WHOLE, (n, run("check", "-C", name).out)
        assert run("load", str(corpus), *LOAD, "-C", name).code == 0  # documents in flight are redone
        assert _graph(name) == graph, f"backup {n} of {taken}"
        assert _consistent(name) and _picks(name) == picks
    assert complete_counts == sorted(complete_counts) and complete_counts[0] < 3  # taken as the load went on


def test_backup_from_another_process_refuses_or_waits_while_a_process_holds_the_collection(
        corpus: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    holder = _harness("tests.fault.live_writer", "hold", str(corpus), str(go))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "READY"
        archive = tmp_path / "live.tar"
        r = run("backup", "-C", "live", str(archive))
        assert r.code == 4 and "Traceback" not in r.err and not archive.exists()
        assert r.err.splitlines() == [
            "error: collection default/live is open in another provgraph process (a `load`, or `provgraph serve`), "
            "and a backup needs a consistent copy of its store: run it again when that process has finished, pass "
            "--wait SECONDS to wait for it, or take it through the server that has the collection open"]
        waiting = _harness("tests.fault.killer", "0", "backup", "-C", "live", str(archive), "--wait", "300")
        time.sleep(1.0)
        assert waiting.poll() is None and not archive.exists()  # still waiting for the holder
        go.touch()
        _, err = waiting.communicate(timeout=300)
        assert waiting.returncode == 0, err
    finally:
        go.touch()
        holder.communicate(timeout=300)
    assert holder.returncode == 0
    assert run("restore", str(archive), "-C", "copy").code == 0
    assert _consistent("copy") and _graph("copy") == _graph("live") and _picks("copy") == _picks("live")
