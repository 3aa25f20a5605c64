"""kill -9 of a real `provgraph load` at seeded moments across all its phases, then recovery.

After each crash, loading again must give the same graph as a clean load (timestamps aside),
the same Document RAG picks, and a collection `check` finds consistent.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.corpus_fixture import CORPUS
from tests.fault.killer import make_parts_large

pytestmark = [pytest.mark.fault, pytest.mark.embedded_only]  # kill -9 around the embedded store's own file writes

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ["Who founded the Radium Institute?", "What did Becquerel discover about uranium?"]
SEED = 1107
_TIME = re.compile(r'"[^"]*"\^\^<http://www\.w3\.org/2001/XMLSchema#dateTime>')


def _killer(home: Path, kill_at: int, *args: str, large: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PROVGRAPH_HOME": str(home), "KILLER_LARGE_PARTS": "1" if large else "0"}
    return subprocess.Popen([sys.executable, "-m", "tests.fault.killer", str(kill_at), *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _graph(collection: str) -> list[str]:
    """The export with timestamps blanked, sorted (a crash and a redo change only when things ran)."""
    r = run("export", "-C", collection)
    assert r.code == 0, r.err
    return sorted(_TIME.sub('"T"', line) for line in r.out.splitlines())


def _picks(collection: str) -> list[tuple[list[str], str]]:
    out = []
    for q in QUESTIONS:
        r = run("document-rag", "-q", q, "-C", collection, "--format", "json", "--llm", "none")
        assert r.code == 0, r.err
        final = json.loads(r.out.strip().splitlines()[-1])
        out.append(([s["chunk"] for s in final["sources"]], final["answer"]))
    return out


def _consistent(collection: str) -> bool:
    r = run("check", "-C", collection)
    return r.code == 0 and r.out.rstrip().endswith("consistent")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fault-corpus")
    for name in ("becquerel_rays.txt", "radium_institute.txt", "nobel_prizes.html"):
        shutil.copy(CORPUS / name, folder / name)
    return folder


PHASES = {"SqliteLibrarian.add", "OxigraphStore.apply", "RecordTable.upsert", "OxigraphStore.flush",
          "SqliteLibrarian.mark_complete"}
"""Librarian records, quads (source and extraction subgraphs), vectors, the flush, the completion record."""


def _moments(named: list[str], rng: random.Random) -> list[int]:
    """Seeded kill moments (1-based): one just before and one just after each kind of write, then more at random."""
    by_kind: dict[str, list[int]] = {}
    for n, moment in enumerate(named, start=1):
        by_kind.setdefault(moment, []).append(n)
    assert {m.split(":", 1)[1] for m in by_kind} >= PHASES, sorted(by_kind)
    chosen = {rng.choice(positions) for _, positions in sorted(by_kind.items())}
    while len(chosen) < 10:
        chosen.add(rng.randint(1, len(named)))
    return sorted(chosen)


def test_kill_9_at_seeded_moments_then_reload_recovers(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["PROVGRAPH_HOME"])
    load = ["load", str(corpus), "--chunk-size", "600", "--chunk-overlap", "50", "--llm", "none"]
    clean = _killer(home, 0, *load, "-C", "clean")
    _, err = clean.communicate(timeout=300)
    assert clean.returncode == 0, err
    events = int(re.findall(r"EVENTS (\d+)", err)[-1])
    assert events > 30  # librarian, store, vectors and completion writes of three documents
    graph, picks = _graph("clean"), _picks("clean")
    assert _consistent("clean")
    rng = random.Random(SEED)
    moments = _moments(re.findall(r"MOMENTS (\S+)", err)[-1].split(","), rng)
    for n, kill_at in enumerate(moments):
        name = f"crash{n}"
        proc = _killer(home, kill_at, *load, "-C", name)
        proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, f"write {kill_at} of {events}"
        r = run(*load, "-C", name)
        assert r.code == 0, (kill_at, r.err)
        assert _graph(name) == graph, f"graph differs after a kill at write {kill_at} of {events}"
        assert _consistent(name), (kill_at, run("check", "-C", name).out)
        assert _picks(name) == picks, f"Document RAG differs after a kill at write {kill_at} of {events}"
    for n in range(1):  # and from outside, at a seeded time, as a user would
        name = f"timed{n}"
        proc = _killer(home, 0, *load, "-C", name)
        time.sleep(rng.uniform(0.5, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=300)
        r = run(*load, "-C", name)
        assert r.code == 0, r.err
        assert _graph(name) == graph and _consistent(name) and _picks(name) == picks


def test_kill_9_around_blob_files_and_hnsw_graph_saves_then_reload_recovers(corpus: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """As at scale: documents' bytes in blob files, every index with an HNSW graph saved on each commit."""
    make_parts_large(monkeypatch.setattr)  # for the reloads, checks and questions run here
    home = Path(os.environ["PROVGRAPH_HOME"])
    load = ["load", str(corpus), "--chunk-size", "600", "--chunk-overlap", "50", "--llm", "none"]
    clean = _killer(home, 0, *load, "-C", "clean", large=True)
    _, err = clean.communicate(timeout=300)
    assert clean.returncode == 0, err
    named = re.findall(r"MOMENTS (\S+)", err)[-1].split(",")
    graph, picks = _graph("clean"), _picks("clean")
    assert _consistent("clean")
    rng = random.Random(SEED + 1)
    moments = sorted({rng.choice([n for n, m in enumerate(named, 1) if m == kind])
                      for kind in ("before:BlobStore.put", "after:BlobStore.put", "before:UsearchIndex.flush",
                                   "after:UsearchIndex.flush")})
    for n, kill_at in enumerate(moments):
        name = f"large{n}"
        proc = _killer(home, kill_at, *load, "-C", name, large=True)
        proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, f"write {kill_at}: {named[kill_at - 1]}"
        r = run(*load, "-C", name)
        assert r.code == 0, (named[kill_at - 1], r.err)
        assert _graph(name) == graph, f"graph differs after a kill at {named[kill_at - 1]}"
        assert _consistent(name), (named[kill_at - 1], run("check", "-C", name).out)
        assert _picks(name) == picks, f"Document RAG differs after a kill at {named[kill_at - 1]}"

