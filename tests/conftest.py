"""Shared fixtures: a clean environment and a private data directory for every test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph import runtime
from provgraph.config import Settings
from provgraph.models.base import Embedder
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.corpus_fixture", "tests.services"]


@pytest.fixture(autouse=True, scope="session")
def _one_model2vec_load_per_model() -> Iterator[None]:
    """Runtimes in this process share each loaded model2vec model (the real one, read-only once loaded)
    instead of reading it from disk again for every in-process command; other embedders, and models that
    fail to load, are built each time as before."""
    build = runtime.build_embedder
    loaded: dict[tuple[str | None, int], Embedder] = {}

    def shared(settings: Settings) -> Embedder:
        if settings.embedder.strip().lower() != "model2vec":
            return build(settings)
        key = (settings.embedder_model, settings.embedder_batch_size)
        if key not in loaded:
            loaded[key] = build(settings)
        return loaded[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runtime, "build_embedder", shared)
        yield


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """No PROVGRAPH_* setting leaks in from the machine; PROVGRAPH_HOME is a fresh folder (and, in a
    suite-on-PostgreSQL run, PROVGRAPH_STORE_URL an emptied database and PROVGRAPH_REPLICA_URL a SPARQL replica:
    tests/services.py)."""
    for key in list(os.environ):
        if key.startswith("PROVGRAPH_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("PROVGRAPH_HOME", str(home))
    from tests.services import suite_on_postgres, suite_replica_url, suite_store_url  # a plugin: imported first

    if suite_on_postgres():
        if request.node.get_closest_marker("embedded_only"):
            pytest.skip("embedded-only (docs/scale-out.md): the suite runs on PostgreSQL")
        monkeypatch.setenv("PROVGRAPH_STORE_URL", suite_store_url())
        monkeypatch.setenv("PROVGRAPH_REPLICA_URL", suite_replica_url())
    return home


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The loopback OpenAI-compatible server, with PROVGRAPH_LLM_* pointing the REAL provider at it.

    Script it per test: ``llm_server.script = by_kind({"complete": …, "stream": …, "<schema>": …})``.
    """
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "fake-model")
        monkeypatch.setenv("PROVGRAPH_LLM_MAX_RETRIES", "0")
        yield server


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say it when the browser suite did not run (no Chromium): a skip line alone is easy to miss in make test."""
    for report in terminalreporter.stats.get("skipped", []):
        if "chromium is not installed" in str(getattr(report, "longrepr", "")):
            terminalreporter.write_line("the browser tests (tests/browser) did not run: Debian's chromium is not "
                                        "installed (apt-get install chromium)", yellow=True, bold=True)
            return
