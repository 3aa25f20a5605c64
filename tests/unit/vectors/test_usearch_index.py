"""The on-disk vector index: exact and HNSW paths, filters, deletes, persistence, guards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from provgraph.errors import IndexError_, InputError
from provgraph.layout import CollectionRef
from provgraph.vectors import CHUNKS, ENTITIES, Hit, VectorIndex, matches, open_index, usearch_index
from provgraph.vectors.usearch_index import UsearchIndex

DIM = 256
MODEL = "model2vec:minilm-l6-v2-m2v"


def embedding_like(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    """Random vectors with the low intrinsic dimension real embeddings have."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 16)) @ rng.standard_normal((16, dim))
    return (latent + 0.5 * rng.standard_normal((n, dim))).astype(np.float32)


def unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def exact_top(data: np.ndarray, query: np.ndarray, k: int, rows: list[int] | None = None) -> list[int]:
    candidates = np.arange(len(data)) if rows is None else np.asarray(rows)
    scores = unit(data[candidates]) @ (query / np.linalg.norm(query))
    return [int(candidates[i]) for i in np.argsort(-scores)[:k]]


def payload(i: int) -> dict[str, Any]:
    return {"entity": f"urn:e:{i}", "doc": f"d{i % 10}", "chunks": [f"c{i % 7}", f"c{(i + 1) % 7}"]}


@pytest.fixture
def index(tmp_path: Path) -> Any:
    idx = open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM)
    yield idx
    idx.close()


def test_exact_search_is_cosine_best_first(index: UsearchIndex) -> None:
    data = embedding_like(300)
    index.upsert([f"e{i}" for i in range(300)], data, [payload(i) for i in range(300)])
    assert isinstance(index, VectorIndex) and index.count() == 300
    hits = index.search(data[42] * 3.0, 5)
    assert [h.id for h in hits] == [f"e{i}" for i in exact_top(data, data[42], 5)]
    assert hits[0] == Hit("e42", pytest.approx(1.0, abs=1e-5), payload(42))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    second = int(hits[1].id[1:])
    expected = float(unit(data[[42]])[0] @ unit(data[[second]])[0])
    assert hits[1].score == pytest.approx(expected, abs=1e-5)
    assert len(index.search(data[0], 1000)) == 300
    assert index.search(data[0], 0) == []


def test_ann_path_matches_exact_search(tmp_path: Path) -> None:
    data = embedding_like(5000, seed=1)
    queries = embedding_like(100, seed=2)
    idx = open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM, exact_threshold=1000)
    idx.upsert([f"e{i}" for i in range(5000)], data, [payload(i) for i in range(5000)])
    found = 0
    for query in queries:
        hits = idx.search(query, 10)
        assert len(hits) == 10 and all(a.score >= b.score - 1e-6 for a, b in zip(hits, hits[1:]))
        found += len({h.id for h in hits} & {f"e{i}" for i in exact_top(data, query, 10)})
    idx.close()
    assert found / (10 * len(queries)) >= 0.98
    assert (tmp_path / ENTITIES / "ann.usearch").is_file()


def test_filters_exact_match_and_list_contains(index: UsearchIndex) -> None:
    data = embedding_like(200, seed=3)
    index.upsert([f"e{i}" for i in range(200)], data, [payload(i) for i in range(200)])
    rows = [i for i in range(200) if i % 10 == 3 and i % 7 in (2, 1)]
    hits = index.search(data[0], 50, where={"doc": "d3", "chunks": "c2"})
    assert [h.id for h in hits] == [f"e{i}" for i in exact_top(data, data[0], 50, rows)]
    both = index.search(data[0], 50, where={"chunks": ["c2", "c3"]})
    assert {h.id for h in both} == {f"e{i}" for i in range(200) if i % 7 == 2}
    assert index.search(data[0], 5, where={"missing": "x"}) == []
    assert index.search(data[0], 5, where={"doc": "nowhere"}) == []


def test_filters_follow_a_replaced_payload_list(index: UsearchIndex) -> None:
    data = embedding_like(3, seed=5)
    index.upsert(["a", "b", "c"], data, [{"chunks": ["c1", "c2"]}, {"chunks": ["c2"]}, {"chunks": ["c3"]}])
    index.upsert(["a"], data[:1], [{"chunks": ["c2", "c3", "c4"]}])  # c1 dropped, c3 and c4 added
    assert [h.id for h in index.search(data[0], 5, where={"chunks": "c1"})] == []
    assert {h.id for h in index.search(data[0], 5, where={"chunks": "c2"})} == {"a", "b"}
    assert {h.id for h in index.search(data[0], 5, where={"chunks": "c3"})} == {"a", "c"}
    assert [h.id for h in index.search(data[0], 5, where={"chunks": "c4"})] == ["a"]


def test_filters_follow_a_payload_list_that_grows_and_fields_that_come_and_go(index: UsearchIndex) -> None:
    data = embedding_like(2, seed=7)
    index.upsert(["a", "b"], data, [{"chunks": ["c1"], "doc": "d1"}, {"chunks": ["c1"]}])
    index.upsert(["a"], data[:1], [{"chunks": ["c1", "c2", "c1"], "tag": "t"}])  # grew at its end; doc gone
    index.upsert(["b"], data[1:], [{"chunks": ["c1", "c3"]}])
    assert {h.id for h in index.search(data[0], 5, where={"chunks": "c1"})} == {"a", "b"}
    assert [h.id for h in index.search(data[0], 5, where={"chunks": "c2"})] == ["a"]
    assert [h.id for h in index.search(data[0], 5, where={"chunks": "c3"})] == ["b"]
    assert index.search(data[0], 5, where={"doc": "d1"}) == []
    assert [h.id for h in index.search(data[0], 5, where={"tag": "t"})] == ["a"]
    index.upsert(["a"], data[:1], [{"chunks": ["c2"]}])  # shrank: c1 is no longer a's
    assert [h.id for h in index.search(data[0], 5, where={"chunks": "c1"})] == ["b"]


@pytest.mark.parametrize("wanted", ["d3", "rare"], ids=["broad-filter", "selective-filter"])
def test_filters_on_the_ann_path(tmp_path: Path, wanted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usearch_index, "SELECTIVE", 100)  # "d3" (300 records) goes through the graph
    data = embedding_like(3000, seed=4)
    payloads = [{"doc": f"d{i % 10}" if i % 100 else "rare"} for i in range(3000)]
    idx = open_index(tmp_path, CHUNKS, model=MODEL, dimension=DIM, exact_threshold=500)
    idx.upsert([f"c{i}" for i in range(3000)], data, payloads)
    rows = [i for i, p in enumerate(payloads) if p["doc"] == wanted]
    hits = idx.search(data[5], 10, where={"doc": wanted})
    idx.close()
    assert len(hits) == 10 and all(h.payload["doc"] == wanted for h in hits)
    expected = {f"c{i}" for i in exact_top(data, data[5], 10, rows)}
    assert len({h.id for h in hits} & expected) >= 9


def test_filter_far_from_the_query_falls_back_to_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usearch_index, "SELECTIVE", 10)
    data = embedding_like(3000, seed=12)
    far = set(exact_top(data, -data[0], 300))  # the records least like the query
    payloads = [{"side": "far" if i in far else "near"} for i in range(3000)]
    idx = open_index(tmp_path, CHUNKS, model=MODEL, dimension=DIM, exact_threshold=500)
    idx.upsert([f"c{i}" for i in range(3000)], data, payloads)
    hits = idx.search(data[0], 10, where={"side": "far"})
    idx.close()
    assert [h.id for h in hits] == [f"c{i}" for i in exact_top(data, data[0], 10, sorted(far))]


def test_matches_semantics() -> None:
    record = {"doc": "d1", "chunks": ["a", "b"], "n": 3}
    assert matches(record, None) and matches(record, {})
    assert matches(record, {"doc": "d1", "chunks": "a", "n": 3})
    assert matches(record, {"chunks": ["b", "a"]})
    assert not matches(record, {"chunks": ["a", "z"]})
    assert not matches(record, {"doc": ["d1"]})
    assert not matches(record, {"other": None})


def test_get_returns_payload_copies_of_present_ids(index: UsearchIndex) -> None:
    index.upsert(["a", "b"], embedding_like(2, seed=14), [{"chunks": ["c1"]}, {"chunks": []}])
    found = index.get(["b", "missing", "a"])
    assert found == {"a": {"chunks": ["c1"]}, "b": {"chunks": []}}
    found["a"]["chunks"].append("mutated")
    assert index.get(["a"]) == {"a": {"chunks": ["c1"]}}


def test_hit_payloads_are_copies_whatever_shape_the_record_takes_on(index: UsearchIndex) -> None:
    data = embedding_like(2, seed=15)
    index.upsert(["a", "b"], data, [{"chunks": ["c1"], "n": 1}, {"nested": [{"k": ["x"]}]}])
    for _ in range(2):  # the second read goes by what the first learnt of each record's shape
        hits = {h.id: h.payload for h in index.search(data[0], 2)}
        assert hits == {"a": {"chunks": ["c1"], "n": 1}, "b": {"nested": [{"k": ["x"]}]}}
        hits["a"]["chunks"].append("mutated")
        hits["b"]["nested"][0]["k"].append("mutated")
    index.upsert(["a"], data[[0]], [{"chunks": ["c1", {"deep": ["y"]}], "n": 1}])  # an append makes it nested
    hit = next(h for h in index.search(data[0], 2) if h.id == "a")
    assert hit.payload == {"chunks": ["c1", {"deep": ["y"]}], "n": 1}
    hit.payload["chunks"][1]["deep"].append("mutated")
    assert index.get(["a", "b"]) == {"a": {"chunks": ["c1", {"deep": ["y"]}], "n": 1}, "b": {"nested": [{"k": ["x"]}]}}


def test_upsert_replaces_same_id(index: UsearchIndex) -> None:
    data = embedding_like(20, seed=5)
    index.upsert([f"e{i}" for i in range(10)], data[:10], [payload(i) for i in range(10)])
    index.upsert(["e3", "e3", "new"], data[[15, 16, 17]], [{"v": 1}, {"v": 2}, {"v": 3}])
    assert index.count() == 11
    top = index.search(data[16], 1)[0]
    assert (top.id, top.payload) == ("e3", {"v": 2})
    assert all(h.id != "e3" for h in index.search(data[3], 11) if h.score > 0.999)


def test_filters_follow_replaced_and_deleted_payloads(index: UsearchIndex) -> None:
    data = embedding_like(6, seed=13)
    index.upsert([f"e{i}" for i in range(6)], data, [{"doc": "a", "chunks": ["x"]}] * 6)
    index.upsert(["e0"], data[[0]], [{"doc": "b", "chunks": ["y", "z"]}])
    index.delete(["e5"])
    assert {h.id for h in index.search(data[0], 10, where={"doc": "a"})} == {"e1", "e2", "e3", "e4"}
    assert [h.id for h in index.search(data[1], 10, where={"doc": "b", "chunks": ["z", "y"]})] == ["e0"]
    assert index.search(data[0], 10, where={"chunks": "x", "doc": "b"}) == []
    assert [h.id for h in index.search(data[0], 10, where={"doc": "b", "chunks": []})] == ["e0"]
    assert index.delete_where({"chunks": "x"}) == 4 and index.count() == 1


def test_delete_and_delete_where(index: UsearchIndex) -> None:
    data = embedding_like(50, seed=6)
    index.upsert([f"e{i}" for i in range(50)], data, [payload(i) for i in range(50)])
    assert index.delete(["e1", "e2", "e2", "unknown"]) == 2
    assert index.count() == 48
    assert {h.id for h in index.search(data[1], 48)}.isdisjoint({"e1", "e2"})
    assert index.delete_where({"doc": "d5"}) == 5
    assert index.delete_where({}) == 0
    assert index.count() == 43
    remaining = {h.id for h in index.search(data[0], 100)}
    assert remaining == {f"e{i}" for i in range(50) if i not in (1, 2) and i % 10 != 5}
    assert index.search(data[49], 1)[0].id == "e49"


def test_persistence_across_reopen_on_both_paths(tmp_path: Path) -> None:
    data = embedding_like(1500, seed=7)
    query = embedding_like(1, seed=8)[0]
    for threshold in (100_000, 1000):
        folder = tmp_path / str(threshold)
        with open_index(folder, ENTITIES, model=MODEL, dimension=DIM, exact_threshold=threshold) as idx:
            idx.upsert([f"e{i}" for i in range(1500)], data, [payload(i) for i in range(1500)])
            idx.delete(["e0"])
            before = idx.search(query, 10, where={"doc": "d4"})
        with open_index(folder, ENTITIES, model=MODEL, dimension=DIM, exact_threshold=threshold) as idx:
            assert idx.count() == 1499
            assert idx.search(query, 10, where={"doc": "d4"}) == before
            idx.upsert(["late"], query[None, :], [{"doc": "d4"}])
        with open_index(folder, ENTITIES, model=MODEL, dimension=DIM, exact_threshold=threshold) as idx:
            assert idx.search(query, 1)[0].id == "late"


def test_a_stale_graph_is_not_trusted(tmp_path: Path) -> None:
    data = embedding_like(1200, seed=9)
    first = open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM, exact_threshold=1000)
    first.upsert([f"e{i}" for i in range(1100)], data[:1100], [{}] * 1100)
    first.flush()
    first.upsert([f"e{i}" for i in range(1100, 1200)], data[1100:], [{}] * 100)  # written, graph not saved
    second = open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM, exact_threshold=1000)
    try:
        assert second.count() == 1200
        assert second.search(data[1150], 1)[0].id == "e1150"
    finally:
        second.close()
        first.close()


def test_collections_are_isolated(tmp_path: Path) -> None:
    one = CollectionRef(tmp_path, "alice", "one").vectors_dir
    two = CollectionRef(tmp_path, "alice", "two").vectors_dir
    data = embedding_like(5, seed=10)
    with (
        open_index(one, ENTITIES, model=MODEL, dimension=DIM) as a,
        open_index(two, ENTITIES, model=MODEL, dimension=DIM) as b,
    ):
        a.upsert([f"e{i}" for i in range(5)], data, [{}] * 5)
        assert (a.count(), b.count()) == (5, 0)
        assert b.search(data[0], 3) == []
        with open_index(one, CHUNKS, model=MODEL, dimension=DIM) as chunks:
            assert chunks.count() == 0


def test_model_and_dimension_are_fixed_at_creation(tmp_path: Path) -> None:
    open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM).close()
    with pytest.raises(
        IndexError_, match=f"built with embedding model {MODEL} \\(256 dims\\), not openai:nomic \\(256"
    ):
        open_index(tmp_path, ENTITIES, model="openai:nomic", dimension=DIM)
    with pytest.raises(IndexError_, match=r"\(256 dims\), not model2vec:minilm-l6-v2-m2v \(384 dims\)"):
        open_index(tmp_path, ENTITIES, model=MODEL, dimension=384)
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        with pytest.raises(IndexError_, match="256-dim vectors of model2vec:minilm-l6-v2-m2v; got shape \\(2, 384\\)"):
            idx.upsert(["a", "b"], np.ones((2, 384), dtype=np.float32), [{}, {}])
        with pytest.raises(IndexError_, match="got shape"):
            idx.search(np.ones(3), 1)
        assert idx.count() == 0


def test_bad_input_writes_nothing(index: UsearchIndex, tmp_path: Path) -> None:
    vectors = embedding_like(2, seed=11)
    with pytest.raises(InputError, match="as many ids, vectors and payloads"):
        index.upsert(["a"], vectors, [{}, {}])
    with pytest.raises(InputError, match="payload of 'b' is not JSON"):
        index.upsert(["a", "b"], vectors, [{}, {"when": object()}])
    index.upsert([], np.zeros((0, DIM), dtype=np.float32), [])
    assert index.count() == 0
    with pytest.raises(InputError, match="invalid vector index name"):
        open_index(tmp_path, "../escape", model=MODEL, dimension=DIM)


def test_closed_index_refuses_writes(tmp_path: Path) -> None:
    idx = open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM)
    idx.close()
    idx.close()
    with pytest.raises(IndexError_, match="is closed"):
        idx.upsert(["a"], embedding_like(1), [{}])


def test_a_payload_list_that_grows_is_stored_by_its_new_items_and_reopens_whole(tmp_path: Path) -> None:
    import sqlite3

    data = embedding_like(2, seed=3)
    growth = [[f"c{j}" for j in range(n)] for n in (1, 40, 90, 100, 300)]
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        for chunks in growth:
            idx.upsert(["a", "b"], data, [{"label": "A", "chunks": chunks}, {"label": "B", "chunks": ["c0"]}])
    db = sqlite3.connect(tmp_path / ENTITIES / "records.sqlite")
    stored = db.execute("SELECT payload FROM records ORDER BY key").fetchall()
    appended = db.execute("SELECT field, items FROM appends ORDER BY rowid").fetchall()
    db.close()
    # 40: appended; 90: 89 appended items > 64 and > the row's 1, folded; 100: appended; 300: folded
    assert stored == [('{"label":"A","chunks":[' + ",".join(f'"c{j}"' for j in range(300)) + "]}",),
                      ('{"label":"B","chunks":["c0"]}',)]
    assert appended == []
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        idx.upsert(["a"], data[:1], [{"label": "A", "chunks": growth[-1] + ["x", "y"]}])
        assert idx.get(["a"])["a"]["chunks"][-3:] == ["c299", "x", "y"]
    db = sqlite3.connect(tmp_path / ENTITIES / "records.sqlite")
    assert db.execute("SELECT field, items FROM appends").fetchall() == [("chunks", '["x","y"]')]
    db.close()
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        assert idx.get(["a", "b"]) == {"a": {"label": "A", "chunks": growth[-1] + ["x", "y"]},
                                       "b": {"label": "B", "chunks": ["c0"]}}
        assert [h.id for h in idx.search(data[0], 5, where={"chunks": "y"})] == ["a"]
        idx.upsert(["a"], data[:1], [{"label": "A2", "chunks": ["z"]}])  # not an append: the row is rewritten
        idx.delete(["b"])
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        assert idx.get(["a", "b"]) == {"a": {"label": "A2", "chunks": ["z"]}}
        assert idx.search(data[0], 5, where={"chunks": "y"}) == []


def test_the_graph_is_kept_from_the_first_write_and_crossing_the_threshold_rebuilds_nothing(tmp_path: Path) -> None:
    from usearch.index import Index

    data = embedding_like(120, seed=5)
    ids = [f"c{i}" for i in range(120)]
    with open_index(tmp_path, CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        idx.upsert(ids[:60], data[:60], [{"n": i} for i in range(60)])
    graph_file = tmp_path / CHUNKS / "ann.usearch"
    assert len(Index.restore(str(graph_file))) == 60  # saved below the threshold too
    with open_index(tmp_path, CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        assert [h.id for h in idx.search(data[7], 3)] == [ids[i] for i in exact_top(data[:60], data[7], 3)]
        idx.upsert(ids[60:80], data[60:80], [{"n": i} for i in range(60, 80)])
        graph = idx._ann  # the saved graph, loaded and extended
        idx.upsert(ids[80:], data[80:], [{"n": i} for i in range(80, 120)])  # crosses the threshold
        assert idx._ann is graph and len(graph) == 120
        assert idx.search(data[100], 1)[0].id == "c100"
        idx.upsert(["c5"], data[6:7], [{"n": 5}])  # a new vector for a record replaces its node
        assert len(graph) == 120
    assert len(Index.restore(str(graph_file))) == 120


def test_an_index_from_before_appends_and_graphs_below_the_threshold_opens_and_grows(tmp_path: Path) -> None:
    import sqlite3

    data = embedding_like(30, seed=11)
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        idx.upsert([f"e{i}" for i in range(20)], data[:20], [{"chunks": [f"c{i}"]} for i in range(20)])
    folder = tmp_path / ENTITIES
    (folder / "ann.usearch").unlink()  # the earlier format: no graph below the threshold, no appends table
    db = sqlite3.connect(folder / "records.sqlite")
    db.executescript("DROP TABLE IF EXISTS appends; DELETE FROM meta WHERE key IN ('ann_generation', 'ann_digest');")
    db.close()
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        assert idx.graph_problem() is None
        idx.upsert(["e3", "e25"], np.stack([data[3], data[25]]), [{"chunks": ["c3", "c9"]}, {"chunks": ["c25"]}])
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        assert idx.count() == 21 and idx.get(["e3"]) == {"e3": {"chunks": ["c3", "c9"]}}
        assert [h.id for h in idx.search(data[25], 1)] == ["e25"]
        assert idx.graph_problem() is None and (folder / "ann.usearch").is_file()


def test_a_graph_saved_with_other_expansions_opens_and_is_searched_with_the_current_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = embedding_like(300, seed=11)
    ids = [f"c{i}" for i in range(300)]
    monkeypatch.setitem(usearch_index.HNSW_PARAMS, "expansion_add", 128)
    monkeypatch.setitem(usearch_index.HNSW_PARAMS, "expansion_search", 128)
    with open_index(tmp_path, CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        idx.upsert(ids, data, [{"n": i} for i in range(300)])
    monkeypatch.setitem(usearch_index.HNSW_PARAMS, "expansion_add", 96)
    monkeypatch.setitem(usearch_index.HNSW_PARAMS, "expansion_search", 144)
    with open_index(tmp_path, CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        assert idx.graph_problem() is None
        assert [h.id for h in idx.search(data[42], 1)] == ["c42"]
        idx._ensure_ann()
        assert (idx._ann.connectivity, idx._ann.expansion_add, idx._ann.expansion_search) == (16, 96, 144)
        idx.upsert(["late"], data[7:8] + 0.01, [{"n": -1}])
        assert idx.count() == 301


def test_a_new_graph_holds_f16_and_one_saved_as_f32_still_opens_and_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from usearch.index import Index

    data = embedding_like(300, seed=13)
    ids = [f"c{i}" for i in range(300)]
    with open_index(tmp_path / "new", CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        idx.upsert(ids, data, [{"n": i} for i in range(300)])
    assert str(Index.metadata(str(tmp_path / "new" / CHUNKS / "ann.usearch"))["kind_scalar"]) == "ScalarKind.F16"
    monkeypatch.setattr(usearch_index, "HNSW_DTYPE", "f32")  # a graph saved before the graph held f16
    with open_index(tmp_path / "old", CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        idx.upsert(ids[:250], data[:250], [{"n": i} for i in range(250)])
    monkeypatch.setattr(usearch_index, "HNSW_DTYPE", "f16")
    graph_file = tmp_path / "old" / CHUNKS / "ann.usearch"
    with open_index(tmp_path / "old", CHUNKS, model=MODEL, dimension=DIM, exact_threshold=100) as idx:
        assert idx.graph_problem() is None
        assert [h.id for h in idx.search(data[42], 3)] == [ids[i] for i in exact_top(data[:250], data[42], 3)]
        idx.upsert(ids[250:], data[250:], [{"n": i} for i in range(250, 300)])
        assert [h.id for h in idx.search(data[280], 1)] == ["c280"]
    meta = Index.metadata(str(graph_file))
    assert str(meta["kind_scalar"]) == "ScalarKind.F32" and meta["count_present"] == 300  # kept as saved


def test_an_extended_list_gains_only_the_items_it_does_not_hold_and_writes_just_those(tmp_path: Path) -> None:
    import sqlite3

    data = embedding_like(3, seed=17)
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        idx.upsert(["a", "b"], data[:2], [{"label": "A", "chunks": ["c1", "c2"]}, {"label": "B", "chunks": ["c9"]}],
                   extend=("chunks",))  # new records take the lists as given
        idx.upsert(["a", "b"], data[:2], [{"label": "A", "chunks": ["c2", "c3", "c3", "c1", "c4"]},
                                          {"label": "B", "chunks": ["c9"]}], extend=("chunks",))
        assert idx.get(["a", "b"]) == {"a": {"label": "A", "chunks": ["c1", "c2", "c3", "c4"]},
                                       "b": {"label": "B", "chunks": ["c9"]}}
        assert [h.id for h in idx.search(data[0], 5, where={"chunks": "c4"})] == ["a"]
    db = sqlite3.connect(tmp_path / ENTITIES / "records.sqlite")
    assert db.execute("SELECT field, items FROM appends").fetchall() == [("chunks", '["c3","c4"]')]
    db.close()
    with open_index(tmp_path, ENTITIES, model=MODEL, dimension=DIM) as idx:
        assert idx.get(["a"]) == {"a": {"label": "A", "chunks": ["c1", "c2", "c3", "c4"]}}
        # another field changes: the record is rewritten whole, its list still extended
        idx.upsert(["a"], data[:1], [{"label": "A2", "chunks": ["c5", "c1"]}], extend=("chunks",))
        assert idx.get(["a"]) == {"a": {"label": "A2", "chunks": ["c1", "c2", "c3", "c4", "c5"]}}
        # a new vector: the same, and the graph and exact search follow it
        idx.upsert(["a"], data[2:3], [{"label": "A2", "chunks": ["c6"]}], extend=("chunks",))
        assert idx.get(["a"])["a"]["chunks"] == ["c1", "c2", "c3", "c4", "c5", "c6"]
        assert idx.search(data[2], 1)[0].id == "a"
        assert idx.search(data[0], 5, where={"chunks": "c5"})[0].id == "a"
        # without extend a list is replaced, as before
        idx.upsert(["a"], data[2:3], [{"label": "A2", "chunks": ["c7"]}])
        assert idx.get(["a"]) == {"a": {"label": "A2", "chunks": ["c7"]}}
        assert idx.search(data[0], 5, where={"chunks": "c1"}) == []
        # a field named in extend but given as no list replaces the stored one
        idx.upsert(["a"], data[2:3], [{"label": "A2", "chunks": "none"}], extend=("chunks",))
        assert idx.get(["a"]) == {"a": {"label": "A2", "chunks": "none"}}


def test_get_can_copy_only_the_fields_asked_for(index: UsearchIndex) -> None:
    data = embedding_like(2, seed=19)
    index.upsert(["a", "b"], data, [{"label": "A", "definition": "first", "chunks": ["c1"]}, {"label": "B"}])
    got = index.get(["a", "b", "zz"], fields=("definition",))
    assert got == {"a": {"definition": "first"}, "b": {}}
    got["a"]["definition"] = "changed"
    assert index.get(["a"])["a"]["definition"] == "first"
