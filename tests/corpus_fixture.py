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
_CORPUS_TEMPLATE: str | None = None  # in a suite-on-PostgreSQL run: the database the corpus was built into


def corpus_files() -> list[Path]:
    """The sample documents (README excluded)."""
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".txt", ".md", ".html", ".pdf") and p.name != "README.md")


def build_corpus(home: Path, *, collection: str = COLLECTION, store_url: str | None = None) -> Settings:
    """Load and extract the corpus into ``home`` (its quads into ``store_url`` if given); returns settings pointing at it."""
    extra = {"store_url": store_url} if store_url else {}
    settings = load_settings(home=str(home), collection=collection, llm="none", **extra)
    with Runtime(settings) as rt:
        loader = rt.loader()
        chunks = [c for path in corpus_files() for c in loader.load_file(path).chunks]
        outcomes = asyncio.run(rt.extraction().run(chunks, on_commit=rt.commit_documents))
        assert not [o for o in outcomes if o.failed]
    return settings


@pytest.fixture(scope="session")
def _corpus_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("corpus-home")
    from tests.services import suite_on_postgres, suite_template  # a plugin: imported by pytest first

    if suite_on_postgres():  # into a template database, copied for each test
        global _CORPUS_TEMPLATE
        _CORPUS_TEMPLATE = suite_template("corpus")
        build_corpus(home, store_url=_CORPUS_TEMPLATE)
    else:
        build_corpus(home)
    return home


@pytest.fixture
def corpus_settings(_corpus_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings for a private copy of the loaded corpus collection; PROVGRAPH_HOME points at it."""
    home = tmp_path / "corpus-copy"
    shutil.copytree(_corpus_home, home)
    monkeypatch.setenv("PROVGRAPH_HOME", str(home))
    if _CORPUS_TEMPLATE is not None:
        from tests.services import suite_store_url

        url = suite_store_url(_CORPUS_TEMPLATE)
        monkeypatch.setenv("PROVGRAPH_STORE_URL", url)
        return load_settings(home=str(home), collection=COLLECTION, llm="none", store_url=url)
    return load_settings(home=str(home), collection=COLLECTION, llm="none")


def corpus_module_env(name: str) -> dict[str, str]:
    """Settings for a module's server over a copy of the corpus home: in a suite-on-PostgreSQL run, a database of
    the module's own copied from the corpus's (``suite_mod_<name>``); else none (the home holds the corpus)."""
    if _CORPUS_TEMPLATE is None:
        return {}
    from tests.services import suite_module_database

    return {"PROVGRAPH_STORE_URL": suite_module_database(name, _CORPUS_TEMPLATE)}
