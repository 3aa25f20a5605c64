"""Fixtures of the security suite: real servers and CLI processes, bounded in time (issue 28)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.server.live import LiveServer, live_server

CLI = "from provgraph.cli.app import main; main()"
QUAD = b"<urn:a> <urn:b> <urn:c> <urn:g> .\n"
http = httpx.Client(timeout=60)  # a loaded machine answers slowly; every request waits as a user would


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server: talks to a real server process or thread on 127.0.0.1")


def cli(home: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``provgraph ARGS`` in its own process (a crash must not take the test run with it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
    env["PROVGRAPH_HOME"] = str(home)
    return subprocess.run([sys.executable, "-c", CLI, *args], env=env, capture_output=True, timeout=120,
                          input=stdin.decode() if stdin is not None else None, text=True)


@contextmanager
def serving(factory: pytest.TempPathFactory, quads: bytes, *args: str) -> Iterator[LiveServer]:
    """An open loopback server (``serve ARGS``) over a fresh home whose collection ``c`` holds ``quads``."""
    with live_server(factory.mktemp("security") / "home", *args) as live:
        assert http.post(live.url + "/api/v1/collections/c/import", content=quads).status_code == 200
        yield live


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """An open loopback server whose collection ``c`` holds one quad, shared by the suite's modules (a start
    is most of a test's time): tests on it use collections of their own, and never stop it."""
    with serving(tmp_path_factory, QUAD) as live:
        yield live


def count(api: str, collection: str) -> int:
    """How many quads ``collection`` holds, by SPARQL."""
    query = {"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"}
    found = http.post(f"{api}/collections/{collection}/sparql", json=query).json()
    return int(found["results"]["bindings"][0]["n"]["value"])
