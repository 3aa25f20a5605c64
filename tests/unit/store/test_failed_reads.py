"""A read that fails part-way leaves no reference to the store's iterator in its error (it would hold the store open)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provgraph.errors import QueryError, StoreError
from provgraph.store.oxigraph import OxigraphStore


class _Failing:
    """A pyoxigraph-like iterator that fails on its first row, as a damaged table does."""

    def __iter__(self) -> _Failing:
        return self

    def __next__(self) -> Any:
        raise OSError("Corruption: block checksum mismatch in 000123.sst")


class _Store:
    def __init__(self) -> None:
        self.made: list[weakref.ref[_Failing]] = []

    def quads_for_pattern(self, *_: Any) -> _Failing:
        it = _Failing()
        self.made.append(weakref.ref(it))
        return it


@pytest.fixture
def no_collections() -> Iterator[None]:
    gc.disable()  # what is freed must be freed by reference counts alone, as on any path the collector misses
    yield
    gc.enable()


@pytest.mark.parametrize("read", ["match", "count"])
def test_the_error_of_a_failed_read_does_not_hold_its_iterator(read: str, no_collections: None) -> None:
    store = OxigraphStore()
    fake = _Store()
    store._store = fake  # type: ignore[assignment]
    with pytest.raises(StoreError, match="read failed: Corruption: block checksum mismatch") as failed:
        list(store.match()) if read == "match" else store.count()
    assert failed.value.__cause__ is not None  # the cause is kept (without its frames)
    assert [ref() for ref in fake.made] == [None]


@pytest.mark.parametrize("query", ["INSERT DATA { <urn:a> <urn:b> <urn:c> }", "SELECT * WHERE { ?s"])
@pytest.mark.parametrize("how", ["raw_query", "select"])
def test_a_refused_query_kept_by_its_caller_does_not_hold_the_store(tmp_path: Path, query: str, how: str,
                                                                    no_collections: None) -> None:
    """The CLI keeps the error of a refused update in its exit's context: the next command must open the store."""
    store = OxigraphStore(tmp_path / "store", name="u/c")
    with pytest.raises(QueryError) as refused:
        getattr(store, how)(query)
    store.close()
    assert refused.value.__cause__ is not None  # kept, with its frames
    with OxigraphStore(tmp_path / "store", name="u/c") as again:  # RocksDB's lock: "open in another process"
        assert again.count() == 0
