"""A collection with the sample corpus loaded and extracted (no-LLM mode), built once per session.

Tests get their own copy of the data directory, so they may write traces freely.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from provgraph.config import Settings, load_settings
from provgraph.runtime import Runtime

CORPUS = Path(__file__).resolve().parent.parent / "examples" / "corpus"
COLLECTION = "corpus"


def corpus_files() -> list[Path]:
    """The sample documents (README excluded)."""
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".txt", ".md", ".html", ".pdf") and p.name != "README.md")


def build_corpus(home: Path, *, collection: str = COLLECTION) -> Settings:
    """Load and extract the corpus into ``home``; returns settings pointing at it."""
    settings = load_settings(home=str(home), collection=collection, llm="none")
    with Runtime(settings) as rt:
        loader = rt.loader()
        chunks = [c for path in corpus_files() for c in loader.load_file(path).chunks]
        outcomes = asyncio.run(rt.extraction().run(chunks, on_commit=rt.commit_documents))
        assert not [o for o in outcomes if o.failed]
    return settings


@pytest.fixture(scope="session")
def _corpus_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("corpus-home")
    build_corpus(home)
    return home


@pytest.fixture
def corpus_settings(_corpus_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings for a private copy of the loaded corpus collection; PROVGRAPH_HOME points at it."""
    home = tmp_path / "corpus-copy"
    shutil.copytree(_corpus_home, home)
    monkeypatch.setenv("PROVGRAPH_HOME", str(home))
    return load_settings(home=str(home), collection=COLLECTION, llm="none")
