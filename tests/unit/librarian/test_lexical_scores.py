"""The lexical index's search (each phrase scored once, kept) = FTS5's own ``ORDER BY bm25 LIMIT k`` of the OR query.

A chunk search adds the exact-form table's share to the stemmed table's (tests/unit/librarian/test_lexical_exact.py);
here the stemmed share, :func:`searched`, is checked against FTS5."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from provgraph.librarian.lexical import EXACT, LEXICAL_DB, Fts5Index, _match_term, query_terms

WORDS = "discovered discovery discovers polonium radium uranium studied studies lens prism orbit comet".split()


def fts5_top(index: Fts5Index, kind: str, query: str, k: int) -> list[tuple[str, float]]:
    """What the OR query gives in one FTS5 statement."""
    match = " OR ".join(_match_term(t, prefix=kind == "chunk") for t in query_terms(query))
    table = f"lexical_{kind}"
    rows = index._db.execute(f"SELECT id, bm25({table}) AS s FROM {table} WHERE {table} MATCH ? ORDER BY s LIMIT ?",
                             (f"body : ({match})", k)).fetchall()
    return [(i, -s) for i, s in rows]


def searched(index: Fts5Index, kind: str, query: str, k: int) -> list[tuple[str, float]]:
    """The search's own table's share: the search itself for entities, the stemmed table's kept scores for chunks."""
    if kind != "chunk":
        return [(h.id, h.score) for h in index.search(kind, query, k)]
    phrases = [_match_term(t, prefix=True) for t in query_terms(query)]
    best = index._scores.top("lexical_chunk", "body", phrases, k)
    ids = dict(index._db.execute("SELECT rowid, id FROM lexical_chunk").fetchall())
    return [(ids[r], -s) for r, s in best]


def corpus(rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    rows = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.choice((3, 5, 5, 8))))  # many equal scores
        rows.append((f"c{i}", f"h{i}", text))
    return rows


def test_search_is_fts5s_or_query_with_its_ties(tmp_path: Path) -> None:
    rng = random.Random(5)
    index = Fts5Index(tmp_path)
    index.put("chunk", corpus(rng, 300))
    index.put("entity", [(f"e{i}", w, w) for i, w in enumerate(WORDS)])
    for _ in range(60):
        query = " ".join(rng.sample(WORDS, rng.choice((1, 2, 3, 4))))
        for kind in ("chunk", "entity"):
            for k in (1, 5, 30):
                got = searched(index, kind, query, k)
                assert got == fts5_top(index, kind, query, k), (kind, query, k)
                assert [h.rank for h in index.search(kind, query, k)] == list(range(1, len(got) + 1))
    index.close()


def test_kept_scores_follow_writes_of_this_and_other_connections(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    index.put("chunk", [("a", "1", "polonium discovered"), ("b", "1", "radium")])
    assert {h.id for h in index.search("chunk", "polonium radium", 5)} == {"a", "b"}
    index.put("chunk", [("c", "1", "polonium polonium")])
    assert [h.id for h in index.search("chunk", "polonium", 5)] == ["c", "a"]
    index.remove("chunk", ["c"])
    assert [h.id for h in index.search("chunk", "polonium", 5)] == ["a"]
    other = sqlite3.connect(tmp_path / LEXICAL_DB, isolation_level=None)  # another process's connection
    other.execute("INSERT INTO lexical_chunk (id, stamp, body) VALUES ('d', '1', 'polonium polonium polonium')")
    other.execute(f"INSERT INTO {EXACT} (rowid, body) VALUES (last_insert_rowid(), 'polonium polonium polonium')")
    other.close()
    assert [h.id for h in index.search("chunk", "polonium", 5)] == ["d", "a"]
    assert searched(index, "chunk", "polonium radium", 5) == fts5_top(index, "chunk", "polonium radium", 5)
    assert index.search("chunk", "nothing matches", 5) == []
    index.close()


def test_sparse_rowids_sum_the_same(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    index.put("chunk", [("a", "1", "polonium radium"), ("b", "1", "radium lens")])
    for i in range(1500):  # each rewrite takes a new rowid: 'c' ends far beyond the others
        index.put("chunk", [("c", str(i), "polonium polonium lens")])
    for query in ("polonium radium lens", "lens", "radium polonium"):
        assert searched(index, "chunk", query, 5) == fts5_top(index, "chunk", query, 5)
    index.close()
