"""Fixtures for tests against real servers on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph.models.structured import forget
from tests.corpus_fixture import corpus_module_env
from tests.fakes.openai_server import FakeOpenAIServer
from tests.server.live import LiveServer, corpus_copy, live_server, user_tokens


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server: talks to a real server process or thread on 127.0.0.1")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """A scripted OpenAI-compatible server on a free loopback port."""
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _fresh_negotiation() -> Iterator[None]:
    """Each test starts with no endpoint's structured-output support remembered."""
    forget()
    yield
    forget()


@pytest.fixture(scope="module")
def corpus_served(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path,
                  request: pytest.FixtureRequest) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    """``provgraph serve`` over a copy of the sample corpus (one per test module), with tokens for ``default``
    (who owns ``corpus``) and ``bob`` (who has no collection)."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    home = corpus_copy(tmp_path_factory, _corpus_home, name)
    tokens = user_tokens(home, "default", "bob")
    with live_server(home, env=corpus_module_env(name.removeprefix("test_"))) as server:
        yield server, tokens
