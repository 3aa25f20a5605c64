"""Schemathesis over the served OpenAPI: generated requests never get a 5xx (bounded: few examples each)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from provgraph.api.tokens import TokenStore
from tests.corpus_fixture import corpus_module_env
from tests.server.live import LiveServer, live_server

pytestmark = pytest.mark.server

schemathesis.serializer.alias("application/x-tar", "application/octet-stream")  # restore's body: archive bytes


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[tuple[LiveServer, str]]:
    home = tmp_path_factory.mktemp("fuzz") / "home"
    shutil.copytree(_corpus_home, home)
    _, token = TokenStore(home).create("default")
    with live_server(home, env=corpus_module_env("schema_fuzz")) as server:
        yield server, token


def test_no_server_errors(fuzzed_server: tuple[LiveServer, str]) -> None:
    server, token = fuzzed_server
    schema = schemathesis.openapi.from_url(server.url + "/api/v1/openapi.json")
    failures: list[str] = []
    tried = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path == "/api/v1/cli":  # runs whole commands: covered by the scenario tests
            continue

        @given(case=operation.as_strategy())
        @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def call(case: Any) -> None:
            nonlocal tried
            tried += 1
            response = case.call(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:200]}")

        call()
    assert tried >= 40
    assert failures == []
