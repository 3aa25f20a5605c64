"""Shared fixtures: a clean environment and a private data directory for every test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.corpus_fixture"]


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No PROVGRAPH_* setting leaks in from the machine; PROVGRAPH_HOME is a fresh folder."""
    for key in list(os.environ):
        if key.startswith("PROVGRAPH_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("PROVGRAPH_HOME", str(home))
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
