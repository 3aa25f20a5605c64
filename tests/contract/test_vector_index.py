"""The VectorIndex protocol alike on every backend: usearch (embedded) and pgvector (PostgreSQL)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from provgraph.errors import IndexError_, InputError
from provgraph.vectors.base import VectorIndex
from provgraph.vectors.usearch_index import open_index

DIM, MODEL = 32, "test-model"


def _open(backend: str, folder: Path, request: pytest.FixtureRequest, *, model: str = MODEL, dim: int = DIM,
          schema: list[str] | None = None) -> VectorIndex:
    if backend == "usearch":
        return open_index(folder, "entities", model=model, dimension=dim)
    from provgraph.store.postgres import pg_connect
    from provgraph.vectors.pgvector_index import PgVectorIndex

    url = request.getfixturevalue("pg_url")
    if schema is None:
        schema = [f"t_{uuid.uuid4().hex[:12]}"]
        conn = pg_connect(url, "tests")
        conn.execute(f"CREATE SCHEMA {schema[0]}")
        conn.close()
        request.addfinalizer(lambda: _drop(url, schema[0]))
    return PgVectorIndex(url, schema[0], "entities", model=model, dimension=dim)


def _drop(url: str, schema: str) -> None:
    from provgraph.store.postgres import pg_connect

    conn = pg_connect(url, "tests")
    conn.execute(f"DROP SCHEMA {schema} CASCADE")
    conn.close()


@pytest.fixture(params=["usearch", "pgvector"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorIndex]:
    opened = _open(request.param, tmp_path, request)
    yield opened
    opened.close()


def vectors(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 4)) @ rng.standard_normal((4, DIM)) + 0.3 * rng.standard_normal((n, DIM))).astype(np.float32)


def payload(i: int) -> dict[str, Any]:
    return {"entity": f"urn:e:{i}", "doc": f"d{i % 3}", "chunks": [f"c{i % 4}", f"c{(i + 1) % 4}"], "label": f"e\x00{i}"}


def _exact(data: np.ndarray, query: np.ndarray, rows: list[int]) -> list[str]:
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    scores = unit[rows] @ (query / np.linalg.norm(query))
    return [f"id{rows[i]}" for i in np.argsort(-scores)]


def test_search_is_cosine_best_first_and_filters_match_values_and_list_items(index: VectorIndex) -> None:
    data = vectors(60)
    index.upsert([f"id{i}" for i in range(60)], data, [payload(i) for i in range(60)])
    query = data[5] + 0.1
    hits = index.search(query, 5)
    assert [h.id for h in hits] == _exact(data, query, list(range(60)))[:5]
    assert hits[0].score == pytest.approx(float(data[5] @ query / np.linalg.norm(data[5]) / np.linalg.norm(query)), abs=1e-4)
    assert hits[0].payload == payload(5)
    in_doc = [i for i in range(60) if i % 3 == 1]
    assert [h.id for h in index.search(query, 4, where={"doc": "d1"})] == _exact(data, query, in_doc)[:4]
    holding = [i for i in range(60) if "c2" in payload(i)["chunks"]]
    assert [h.id for h in index.search(query, 50, where={"chunks": "c2"})] == _exact(data, query, holding)
    both = [i for i in range(60) if {"c2", "c3"} <= set(payload(i)["chunks"])]
    assert [h.id for h in index.search(query, 50, where={"chunks": ["c2", "c3"], "doc": "d2"})] == \
        _exact(data, query, [i for i in both if i % 3 == 2])
    assert index.search(query, 5, where={"doc": "nowhere"}) == [] and index.search(query, 0) == []


def test_upsert_replaces_extends_and_the_last_repeated_id_wins(index: VectorIndex) -> None:
    data = vectors(3)
    index.upsert(["a", "b", "a"], data, [{"chunks": ["x"]}, {"chunks": ["y"], "n": 1}, {"chunks": ["z"]}])
    assert index.get(["a", "b", "nope"]) == {"a": {"chunks": ["z"]}, "b": {"chunks": ["y"], "n": 1}}
    index.upsert(["b"], data[:1], [{"chunks": ["y", "w", "y"], "n": 2}], extend={"chunks"})
    assert index.get(["b"]) == {"b": {"chunks": ["y", "w"], "n": 2}}
    assert index.get(["b"], fields={"n"}) == {"b": {"n": 2}}
    index.upsert(["new"], data[:1], [{"chunks": ["q"]}], extend={"chunks"})
    assert index.get(["new"]) == {"new": {"chunks": ["q"]}}
    assert index.count() == 3 and sorted(index.ids()) == ["a", "b", "new"]


def test_deletes(index: VectorIndex) -> None:
    data = vectors(10)
    index.upsert([f"id{i}" for i in range(10)], data, [payload(i) for i in range(10)])
    assert index.delete(["id0", "id0", "nope"]) == 1
    assert index.delete_where({"doc": "d1"}) == 3
    assert index.delete_where({}) == 0
    assert index.delete_where({"chunks": "c0"}) == len([i for i in range(1, 10) if i % 3 != 1 and "c0" in payload(i)["chunks"]])
    assert "id0" not in index.ids() and index.search(data[0], 1)[0].id != "id0"


def test_bad_input_writes_nothing(index: VectorIndex) -> None:
    with pytest.raises(IndexError_, match=f"holds {DIM}-dim vectors"):
        index.upsert(["a"], np.ones((1, DIM + 1), dtype=np.float32), [{}])
    with pytest.raises(InputError, match="as many ids, vectors and payloads"):
        index.upsert(["a", "b"], vectors(1), [{}, {}])
    with pytest.raises(InputError, match="is not JSON"):
        index.upsert(["a", "b"], vectors(2), [{}, {"x": object()}])
    assert index.count() == 0


@pytest.mark.parametrize("backend", ["usearch", "pgvector"])
def test_model_and_dimension_are_fixed_at_creation(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    schema: list[str] | None = None
    first = _open(backend, tmp_path, request)
    if backend == "pgvector":
        schema = [first._table.split(".")[0]]  # type: ignore[attr-defined]
    first.upsert(["a"], vectors(1), [{}])
    first.close()
    with pytest.raises(IndexError_, match="other-model|holds 32-dim vectors of test-model"):
        _open(backend, tmp_path, request, model="other-model", schema=schema)
    again = _open(backend, tmp_path, request, schema=schema)
    assert again.count() == 1 and (again.model, again.dimension) == (MODEL, DIM)
    again.close()
