from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.store.oxigraph import OxigraphStore
from tests.unit.explain.scenario import Scenario, write_scenario


class CountingStore(OxigraphStore):
    """An in-memory store that counts SELECT queries (to check lookups are batched)."""

    def __init__(self) -> None:
        super().__init__(name="test/traces")
        self.selects = 0

    def select(self, sparql, *, bind=None):  # type: ignore[no-untyped-def]
        self.selects += 1
        return super().select(sparql, bind=bind)


@pytest.fixture
def store() -> CountingStore:
    return CountingStore()


@pytest.fixture
def librarian(tmp_path: Path) -> Iterator[SqliteLibrarian]:
    lib = SqliteLibrarian(tmp_path / "librarian")
    yield lib
    lib.close()


@pytest.fixture
def scenario(store: CountingStore, librarian: SqliteLibrarian) -> Scenario:
    made = write_scenario(store, librarian)
    store.selects = 0
    return made
