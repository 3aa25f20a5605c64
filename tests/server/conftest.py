"""Fixtures for tests against real servers on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from provgraph.models.structured import forget
from tests.fakes.openai_server import FakeOpenAIServer


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
