"""The CLI's scenarios run locally and against a real ``provgraph serve``: identical output and exit codes.

Two copies of the loaded corpus: one used in-process, one owned by the server; each scenario runs
on both and the outputs must be equal (session IDs and times, random per run, normalised).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_runner import Result, run
from tests.corpus_fixture import CORPUS
from tests.server.live import LiveServer, live_server

pytestmark = pytest.mark.server

Q = "Who discovered polonium?"
ONE_DOC = str(CORPUS / "becquerel_rays.txt")

SCENARIOS: list[tuple[str, ...]] = [
    ("collections", "list"),
    ("collections", "list", "--format", "json"),
    ("documents", "list", "-C", "corpus"),
    ("documents", "list", "-C", "corpus", "--format", "json"),
    ("documents", "show", "becquerel_rays.txt", "-C", "corpus"),
    ("documents", "show", "nope.txt", "-C", "corpus"),
    ("provenance", "becquerel_rays.txt", "-C", "corpus"),
    ("provenance", "becquerel_rays.txt", "-C", "corpus", "--format", "json"),
    ("graph-rag", "-q", Q, "-C", "corpus", "-x"),
    ("graph-rag", "-q", Q, "-C", "corpus", "--format", "json"),
    ("graph-rag", "-q", Q, "-C", "missing"),
    ("document-rag", "-q", Q, "-C", "corpus", "-x"),
    ("agent", "-q", Q, "-C", "corpus"),
    ("traces", "list", "-C", "corpus"),
    ("traces", "list", "-C", "corpus", "--format", "json"),
    ("sparql", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:graph:source> { ?s ?p ?o } }", "-C", "corpus"),
    ("sparql", "ASK { ?s ?p ?o }", "-C", "corpus"),
    ("sparql", "SELECT WHERE {", "-C", "corpus"),
    ("sparql", "INSERT DATA { <urn:a> <urn:b> <urn:c> }", "-C", "corpus"),
    ("load", ONE_DOC, "-C", "fresh"),
    ("load", ONE_DOC, "-C", "fresh", "--format", "json"),
    ("load", "no/such/file.txt", "-C", "fresh"),
    ("documents", "list", "-C", "fresh"),
    ("documents", "remove", "becquerel_rays.txt", "-C", "fresh"),
    ("documents", "list", "-C", "fresh", "--format", "json"),
    ("collections", "create", "made"),
    ("collections", "drop", "made", "--yes"),
    ("collections", "drop", "made", "--yes"),
    ("documents", "list", "-C", "corpus", "-U", "someone-else"),
    ("graph-rag", "-q", Q, "-C", "corpus", "--edge-limit", "0"),
    ("traces", "show", "no-such-trace", "-C", "corpus"),
    ("traces", "delete", "--before", "2000-01-01", "-C", "corpus"),
    ("traces", "delete", "no-such-trace", "-C", "corpus"),
    ("traces", "delete", "-C", "corpus"),
    ("export", "-C", "corpus", "-o", "{tmp}/corpus.nq"),
    ("import", "{tmp}/corpus.nq", "-C", "imported"),
    ("sparql", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }", "-C", "imported"),
    ("extract", "becquerel_rays.txt", "-C", "corpus"),
    ("backup", "-C", "corpus", "{tmp}/corpus.tar"),
    ("backup", "-C", "missing", "{tmp}/missing.tar"),
    ("restore", "{tmp}/corpus.tar", "-C", "restored"),
    ("restore", "{tmp}/corpus.tar", "-C", "restored"),
    ("restore", "{tmp}/no-such.tar", "-C", "other"),
    ("documents", "list", "-C", "restored"),
    ("graph-rag", "-q", Q, "-C", "restored", "--format", "json"),
    ("traces", "delete", "--before", "2999-01-01", "-C", "restored"),
    ("traces", "list", "-C", "restored"),
    ("check", "-C", "restored"),
]

_RANDOM = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "SID"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "TIME"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?"), "TIME"),
]


def normalised(text: str) -> str:
    for pattern, stand_in in _RANDOM:
        text = pattern.sub(stand_in, text)
    return text


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[tuple[Path, LiveServer]]:
    local = tmp_path_factory.mktemp("local") / "home"
    remote = tmp_path_factory.mktemp("remote") / "home"
    shutil.copytree(_corpus_home, local)
    shutil.copytree(_corpus_home, remote)
    with live_server(remote) as server:
        yield local, server


@pytest.fixture(scope="module")
def outputs(homes: tuple[Path, LiveServer], tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Result, Result]]:
    """Every scenario, in order, run locally and remotely (the scenarios build on each other).

    ``{tmp}`` is one client folder for both runs (so printed paths agree): the remote run of an
    ``export``/``backup`` rewrites the file the local run wrote.
    """
    local, server = homes
    files = tmp_path_factory.mktemp("files")
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in __import__("os").environ if k.startswith("PROVGRAPH_")]:
            mp.delenv(key)
        mp.setenv("PROVGRAPH_LLM", "none")
        pairs = []
        for scenario in SCENARIOS:
            argv = [a.replace("{tmp}", str(files)) for a in scenario]
            here = run("--home", str(local), *argv)
            there = run("--url", server.url, *argv)
            pairs.append((here, there))
    return pairs


@pytest.mark.parametrize("index", range(len(SCENARIOS)), ids=[" ".join(s)[:60] for s in SCENARIOS])
def test_same_output_locally_and_remotely(outputs: list[tuple[Result, Result]], index: int) -> None:
    here, there = outputs[index]
    assert there.code == here.code, (here, there)
    assert normalised(there.out) == normalised(here.out)
    assert normalised(there.err) == normalised(here.err)


def test_scenarios_cover_success_and_failure(outputs: list[tuple[Result, Result]]) -> None:
    codes = {here.code for here, _ in outputs}
    assert {0, 2, 3} <= codes  # the comparison above covers errors as well as answers
