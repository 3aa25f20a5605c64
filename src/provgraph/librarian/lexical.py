"""The lexical (BM25) index beside the librarian: chunk texts and entity labels, SQLite FTS5.

One file ``<librarian dir>/lexical.sqlite3`` holds one FTS5 table per kind (``chunk``, ``entity``,
so each has its own term statistics); each row is ``(id, stamp, text)`` and ``stamp`` tells whether the text
changed (a content hash, or the labels themselves). Chunk texts are stemmed (porter; a question's word matches
every word starting with its stem) and held a second time as written, under the same rowids
(``lexical_chunk_exact``), so a search adds the question's own word forms to their stems (:data:`EXACT_WEIGHT`).
The index is derived data: it can be
dropped and rebuilt from the librarian and the store at any time (see
:mod:`provgraph.retrieval.lexical_sync`). Scores are FTS5's BM25, sign flipped (higher is better).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from provgraph.errors import StoreError
from provgraph.librarian.phrase_scores import PhraseScores
from provgraph.librarian.rows import MMAP_BYTES

__all__ = ["LexicalHit", "LexicalIndex", "Fts5Index", "LEXICAL_DB", "query_terms", "stem"]

LEXICAL_DB = "lexical.sqlite3"
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be been by did do does for from had has have he her his how i in into is it its "
    "of on or she that the their them they this to was were what when where which who whom whose why "
    "will with you your".split()
)
KINDS = ("chunk", "entity")
_TOKENIZE = "porter unicode61 remove_diacritics 2"  # stems: "discovered" finds "discovery" (bench/multihop.py)
_EXACT_TOKENIZE = "unicode61 remove_diacritics 2"
EXACT = "lexical_chunk_exact"
"""The chunks again, words as written (not stemmed), under the same rowids: a chunk that has the question's own
word forms scores above one that has only other forms of them."""
EXACT_WEIGHT = 4 / 3
"""A chunk's lexical score is its stemmed-prefix BM25 plus this times its exact-form BM25 (a search may ask for
another weight; 0: stems only). Tuned on the dev sets (bench/quality.py computing, space) and the multi-hop TUNE
halves with Document RAG: stems only answered 2 space questions fewer than exact forms only, which lost 3.5
recall@5 points on HotpotQA; 4/3 answers as many as exact forms on both dev sets."""
_SCHEMA = "".join(
    f"CREATE VIRTUAL TABLE IF NOT EXISTS lexical_{kind} USING fts5("
    f"id UNINDEXED, stamp UNINDEXED, body, tokenize = '{_TOKENIZE}');\n"
    for kind in KINDS
) + f"CREATE VIRTUAL TABLE IF NOT EXISTS {EXACT} USING fts5(body, tokenize = '{_EXACT_TOKENIZE}');\n"


def _table(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown lexical kind {kind!r}")
    return f"lexical_{kind}"


def query_terms(text: str) -> list[str]:
    """The searchable words of ``text``: lower-cased, stop words dropped, each once, in order.

    >>> query_terms("Who discovered the Boeing 747?")
    ['discovered', 'boeing', '747']
    """
    words = [w.lower() for w in _WORD.findall(text)]
    return list(dict.fromkeys(w for w in words if w not in _STOP and (len(w) > 1 or w.isdigit())))


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly")


def stem(word: str) -> str:
    """A crude stem so "discovered" and "discovery" meet: common suffixes off, at least 4 letters kept."""
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    return w[:-1] if w.endswith("y") and len(w) > 4 else w


def _match_term(term: str, *, prefix: bool) -> str:
    """One FTS5 query term: the word, or (``prefix``, a word of 5+ letters) every word starting with its stem,
    so "discover" finds "discovered" and "discovery"."""
    if prefix and len(term) >= 5 and not term.isdigit():
        return '"' + stem(term).replace('"', '""') + '"*'
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """One lexical match: the record's id, its BM25 score (higher is better) and 1-based rank."""

    id: str
    score: float
    rank: int


@runtime_checkable
class LexicalIndex(Protocol):
    """A keyword index of texts by kind; derived data, rebuildable."""

    def stamps(self, kind: str) -> dict[str, str]:
        """Every indexed id of ``kind`` with its stamp."""
        ...

    def put(self, kind: str, rows: Sequence[tuple[str, str, str]]) -> None:
        """Insert or replace ``(id, stamp, text)`` rows (one transaction)."""
        ...

    def remove(self, kind: str, ids: Iterable[str]) -> None:
        """Forget these ids of ``kind`` (unknown ids are ignored)."""
        ...

    def search(self, kind: str, query: str, k: int, *, exact: float = EXACT_WEIGHT) -> list[LexicalHit]:
        """The ``k`` best matches of the query's words (any of them), best first; a chunk matches a word's other
        forms too (words starting with its stem: "discover" → "discovered", "discovery"), and ``exact`` weighs
        its share of the words as written (:data:`EXACT_WEIGHT`)."""
        ...

    def share(self, word: str) -> float:
        """The share of the chunks that have ``word`` as written (case aside): 0 when none does."""
        ...

    def close(self) -> None:
        """Release the file."""
        ...


class Fts5Index:
    """:class:`LexicalIndex` in SQLite FTS5, in folder ``path``. Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path / LEXICAL_DB, isolation_level=None, check_same_thread=False,
                                       timeout=10.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self._drop_other_tokenizer()
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the lexical index in {self.path}: {exc}") from exc
        self._scores = PhraseScores(self._db)  # each phrase's BM25 rows, kept until a table changes
        self._shares: dict[str, float] = {}  # each word's share of the chunks (share), kept until a table changes

    def _drop_other_tokenizer(self) -> None:
        """Drop a table made with another tokenizer (derived data: the next sync fills it again)."""
        exact = self._db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (EXACT,)).fetchone() is not None
        for kind in KINDS:
            row = self._db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (_table(kind),)).fetchone()
            if row is not None and (_TOKENIZE not in row[0] or (kind == "chunk" and not exact)):
                self._db.execute(f"DROP TABLE {_table(kind)}")
                if kind == "chunk":
                    self._db.execute(f"DROP TABLE IF EXISTS {EXACT}")

    def stamps(self, kind: str) -> dict[str, str]:
        with self._lock:
            rows = self._db.execute(f"SELECT id, stamp FROM {_table(kind)}").fetchall()
        return {i: s for i, s in rows}

    def put(self, kind: str, rows: Sequence[tuple[str, str, str]]) -> None:
        table = _table(kind)
        if not rows:
            return
        with self._writing():
            rows = list({r[0]: r for r in rows}.values())  # an id given twice: the last wins
            old = self._rowids(table, [r[0] for r in rows])
            self._delete(table, old)
            if kind != "chunk":
                self._db.executemany(f"INSERT INTO {table} (id, stamp, body) VALUES (?, ?, ?)", rows)
                return
            for row in rows:  # the exact-form copy under the same rowid
                rowid = self._db.execute(f"INSERT INTO {table} (id, stamp, body) VALUES (?, ?, ?)", row).lastrowid
                self._db.execute(f"INSERT INTO {EXACT} (rowid, body) VALUES (?, ?)", (rowid, row[2]))

    def remove(self, kind: str, ids: Iterable[str]) -> None:
        table = _table(kind)
        gone = list(ids)
        if not gone:
            return
        with self._writing():
            self._delete(table, self._rowids(table, gone))

    def _delete(self, table: str, rowids: Sequence[int]) -> None:
        """Delete rows by rowid (a chunk's exact-form copy with it)."""
        for t in (table, EXACT) if table == _table("chunk") else (table,):
            self._db.executemany(f"DELETE FROM {t} WHERE rowid = ?", [(r,) for r in rowids])

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write transaction under the lock: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._scores.forget()
            self._shares.clear()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _rowids(self, table: str, ids: Sequence[str]) -> list[int]:
        """Rows holding any of ``ids``: ONE scan (``id`` is not indexed, so a lookup per id would scan each time)."""
        wanted = set(ids)
        return [rowid for rowid, ident in self._db.execute(f"SELECT rowid, id FROM {table}") if ident in wanted]

    def search(self, kind: str, query: str, k: int, *, exact: float = EXACT_WEIGHT) -> list[LexicalHit]:
        table = _table(kind)
        terms = query_terms(query)
        if not terms or k < 1:
            return []
        phrases = [_match_term(t, prefix=kind == "chunk") for t in terms]
        groups = [(table, "body", phrases, 1.0)]
        with self._lock:  # = ORDER BY bm25 LIMIT k of the phrases OR-ed, each phrase's rows scored once (kept)
            if kind == "chunk" and exact > 0:
                # a word form no chunk writes cannot be preferred: its stem's rows stand in for it, so that
                # the question's other words do not outweigh it ("discover" where the texts say "discovered")
                written = [self._scores.matches(EXACT, "body", _match_term(t, prefix=False)) > 0 for t in terms]
                groups.append((EXACT, "body", [_match_term(t, prefix=False) for t, w in zip(terms, written) if w],
                               exact))
                groups.append((table, "body", [p for p, w in zip(phrases, written) if not w], exact))
            best = self._scores.top_of(groups, k)
            marks = ",".join("?" * len(best))
            ids = dict(self._db.execute(f"SELECT rowid, id FROM {table} WHERE rowid IN ({marks})",
                                        [r for r, _ in best]).fetchall()) if best else {}
        found = [(ids[row], score) for row, score in best if row in ids]
        return [LexicalHit(ident, -score, rank) for rank, (ident, score) in enumerate(found, start=1)]

    def share(self, word: str) -> float:
        terms = query_terms(word)
        if len(terms) != 1:
            return 0.0
        with self._lock:
            if terms[0] not in self._shares:
                total = self._db.execute(f"SELECT count(*) FROM {EXACT}").fetchone()[0]
                have = self._db.execute(f"SELECT count(*) FROM {EXACT} WHERE {EXACT} MATCH ?",
                                        (_match_term(terms[0], prefix=False),)).fetchone()[0]
                self._shares[terms[0]] = have / total if total else 0.0
            return self._shares[terms[0]]

    def close(self) -> None:
        with self._lock:
            self._db.close()
