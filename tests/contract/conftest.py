"""Every backend under one contract: each test runs on the embedded store and on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph.store.base import QuadStore
from provgraph.store.oxigraph import OxigraphStore
from tests.contract.data import NQUADS

BACKENDS = ["embedded", "postgres"]


def open_backend(backend: str, folder: Path, request: pytest.FixtureRequest) -> tuple[QuadStore, object]:
    """A fresh, empty store of ``backend`` and what drops it afterwards."""
    if backend == "embedded":
        return OxigraphStore(folder / "store", name="contract"), None
    from provgraph.store.postgres import PostgresStore, drop_pg_collection

    url = request.getfixturevalue("pg_url")
    name = f"contract-{uuid.uuid4().hex[:12]}"
    return PostgresStore(url, "tests", name), lambda: drop_pg_collection(url, "tests", name)


@pytest.fixture(params=BACKENDS)
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[QuadStore]:
    """An empty store of each backend."""
    store, drop = open_backend(request.param, tmp_path, request)
    yield store
    store.close()
    if callable(drop):
        drop()


@pytest.fixture(scope="module", params=BACKENDS)
def loaded_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuadStore]:
    """The hand-made collection of tests/contract/data.py, on each backend (read-only: shared by a module)."""
    store, drop = open_backend(request.param, tmp_path_factory.mktemp("contract"), request)
    store.import_data(NQUADS)
    yield store
    store.close()
    if callable(drop):
        drop()
