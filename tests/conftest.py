"""Shared fixtures: a clean environment and a private data directory for every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
