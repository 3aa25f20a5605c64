"""BM25 of an OR query as the sum of its phrases' scores, each phrase scored by FTS5 once and kept.

FTS5's ``bm25()`` of ``p1 OR p2 OR …`` is, for each matching row, the sum in query order of each
phrase's own term (its IDF times its saturated frequency in the row): a phrase's IDF depends only on
the phrase, never on the other phrases of the query. So scoring each phrase alone
(``SELECT rowid, bm25(t) … MATCH 'body : (p)'``) and adding the per-row figures in the query's
phrase order gives the same doubles, bit for bit, as the OR query — and ties ordered by rowid, as
FTS5 returns them. What this buys: a common word (a verb in most chunks) is scored over its rows
once, not again in every query that holds it (a question's bridge searches repeat the question's
words, and questions repeat words). The kept scores are dropped whenever the table changes (this
connection's writes, or another connection's commits: ``PRAGMA data_version``), and bounded in size.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

__all__ = ["PhraseScores", "MAX_KEPT_ROWS"]

MAX_KEPT_ROWS = 2_000_000
"""At most this many (rowid, score) pairs are kept over all phrases (16 bytes each: 32 MB)."""

_Scores = tuple[np.ndarray, np.ndarray]  # rowids (ascending), each row's BM25 term (positive: higher is better)


class PhraseScores:
    """Per-phrase BM25 rows of one connection's FTS5 tables, kept until a table changes. Not locked: the
    caller holds the connection's lock."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._kept: OrderedDict[tuple[str, str], _Scores] = OrderedDict()
        self._rows = 0
        self._version: int | None = None

    def forget(self) -> None:
        """Drop every kept score (the caller wrote a table)."""
        self._kept.clear()
        self._rows = 0

    def top(self, table: str, column: str, phrases: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(rowid, bm25)`` of ``phrase1 OR phrase2 …`` in ``column``, as FTS5's
        ``ORDER BY bm25(table) LIMIT k`` returns them (its sign: lower is better; ties by rowid)."""
        return self.top_of([(table, column, phrases, 1.0)], k)

    def top_of(self, groups: Sequence[tuple[str, str, Sequence[str], float]], k: int) -> list[tuple[int, float]]:
        """:meth:`top` of several tables sharing rowids: each ``(table, column, phrases, weight)`` group's BM25
        times its weight, added by rowid (a row found in one table only has that table's share)."""
        self._check_version()
        parts = [(rows, terms * weight if weight != 1.0 else terms)
                 for table, column, phrases, weight in groups for rows, terms in
                 (self._phrase(table, column, p) for p in phrases)]
        parts = [p for p in parts if len(p[0])]
        if not parts or k < 1:
            return []
        size = max(int(p[0][-1]) for p in parts) + 1  # rowids come ascending
        if size <= 4 * sum(len(p[0]) for p in parts) + 1024:  # rows by rowid: the phrases add in place
            score = np.zeros(size)
            matched = np.zeros(size, dtype=bool)
            for rows, terms in parts:  # in the query's phrase order, as FTS5 sums (a phrase holds a row once)
                score[rows] += terms
                matched[rows] = True
            unique = np.flatnonzero(matched)
            score = score[unique]
        else:  # sparse rowids (many rewrites): the same sums by row
            unique, where = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
            score = np.zeros(len(unique))
            np.add.at(score, where, np.concatenate([p[1] for p in parts]))  # one addition at a time, in order
        if len(unique) > k:  # only the best k (and every row tied with the last of them) need sorting
            least = np.partition(score, len(score) - k)[len(score) - k]
            keep = np.flatnonzero(score >= least)
            unique, score = unique[keep], score[keep]
        order = np.lexsort((unique, -score))[:k]
        return [(int(unique[i]), -float(score[i])) for i in order]

    def matches(self, table: str, column: str, phrase: str) -> int:
        """How many rows of ``table`` hold ``phrase`` in ``column``."""
        self._check_version()
        return len(self._phrase(table, column, phrase)[0])

    def _check_version(self) -> None:
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            self.forget()
            self._version = version

    def _phrase(self, table: str, column: str, phrase: str) -> _Scores:
        key = (table, phrase)
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return found
        got = self._db.execute(f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ?",
                               (f"{column} : ({phrase})",)).fetchall()
        rows = np.fromiter((r for r, _ in got), dtype=np.int64, count=len(got))
        terms = np.fromiter((-s for _, s in got), dtype=np.float64, count=len(got))
        if len(rows) <= MAX_KEPT_ROWS:
            self._kept[key] = (rows, terms)
            self._rows += len(rows)
            while self._rows > MAX_KEPT_ROWS:
                _, (gone, _) = self._kept.popitem(last=False)
                self._rows -= len(gone)
        return rows, terms
