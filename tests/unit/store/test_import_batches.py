"""An import writes in bounded batches (issue 28, Low: it held 14x its input in one transaction), after a
check of the whole text: bad input past the first batch still imports nothing, and a disk that fails
between batches says how far it got, and importing again adds the rest."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from provgraph.errors import QueryError, StoreError
from provgraph.store.oxigraph import IMPORT_BATCH, OxigraphStore

N = 2 * IMPORT_BATCH + 500
TEXT = "".join(f'<urn:s{i}> <urn:p> "{i}" <urn:g> .\n' for i in range(N)).encode()


class _FullAfter:
    """The store's pyoxigraph Store, whose disk fills after ``writes`` transactions."""

    def __init__(self, store: Any, writes: int) -> None:
        self._store, self.writes, self.sizes = store, writes, []  # type: list[int]

    def extend(self, quads: list[Any]) -> None:
        if len(self.sizes) == self.writes:
            raise OSError(errno.ENOSPC, "IO error: No space left on device: While appending to file: 000012.log")
        self.sizes.append(len(quads))
        self._store.extend(quads)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_an_import_writes_in_batches_and_a_full_disk_says_how_far_it_got(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "store", name="u/c")
    real = store._store
    store._store = _FullAfter(real, writes=1)  # type: ignore[assignment]
    with pytest.raises(StoreError) as caught:
        store.import_data(TEXT)
    assert str(caught.value).startswith(f"collection u/c: import failed after {IMPORT_BATCH} of {N} quads "
                                        "(importing it again adds the rest): "), caught.value
    store._store = _FullAfter(real, writes=10)  # type: ignore[assignment]
    assert store.import_data(TEXT) == N and store.count() == N
    assert store._store.sizes == [IMPORT_BATCH, IMPORT_BATCH, 500]  # type: ignore[attr-defined]
    store._store = real
    store.close()


def test_bad_input_past_the_first_batch_imports_nothing(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "store", name="u/c")
    with pytest.raises(QueryError, match=rf"line {N + 1}.*nothing was imported"):
        store.import_data(TEXT + b"<urn:a> <urn:b> .\n")
    assert store.count() == 0
    store.close()
