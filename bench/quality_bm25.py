"""The keyword baseline of the quality harness: SQLite FTS5 BM25 over provgraph's own stored chunks.

Question → its content words (lower-cased, stop words and single letters dropped) OR-ed into one FTS5 query
(porter stemmer, diacritics removed) → the top :data:`TOP_CHUNKS` chunks by ``bm25()`` → every sentence of
those chunks scored by how many distinct question words it contains → the best :data:`TOP_SENTENCES`
sentences (ties: better chunk rank, then earlier in the chunk), joined in (chunk rank, position) order.
Deterministic; no embeddings.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from quality_score import normalize

__all__ = ["Bm25Baseline", "BaselineAnswer", "TOP_CHUNKS", "TOP_SENTENCES", "terms", "sentences"]

TOP_CHUNKS = 3
TOP_SENTENCES = 2
_WORD = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_HEADING_MAX = 100
STOP = frozenset("""
a an and are as at be been by did do does for from had has have how in is it its of on or that the their
them they this to was were what when where which who whom whose why with
""".split())


def terms(text: str) -> list[str]:
    """Distinct content words of ``text`` (normalised, no stop words, no single letters), in order."""
    out: list[str] = []
    for w in _WORD.findall(normalize(text)):
        if (len(w) > 1 or w.isdigit()) and w not in STOP and w not in out:
            out.append(w)
    return out


def _blocks(text: str) -> list[str]:
    """Paragraphs (blank-line separated), with a first line that looks like a heading (short, no end
    punctuation, followed by a line starting with a capital) split off from the text under it."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines = para.split("\n")
        current: list[str] = []
        for n, line in enumerate(lines):
            current.append(line)
            nxt = lines[n + 1].lstrip() if n + 1 < len(lines) else ""
            stripped = line.strip()
            if (n == 0 and nxt[:1].isupper() and 0 < len(stripped) < _HEADING_MAX and stripped[-1] not in ".!?:;,"):
                out.append("\n".join(current))
                current = []
        out.append("\n".join(current))
    return out


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (. ! ? before a capital or digit, blank lines, after headings), trimmed."""
    parts = [p for block in _blocks(text) for p in _SENTENCE_END.split(block)]
    return [" ".join(p.split()) for p in parts if p and p.strip()]


@dataclass(frozen=True)
class BaselineAnswer:
    text: str
    chunks: tuple[str, ...]  # chunk ids, best first


class Bm25Baseline:
    """An in-memory FTS5 index over ``(chunk id, text)`` pairs."""

    def __init__(self, chunks: Sequence[tuple[str, str]]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE c USING fts5(id UNINDEXED, body,"
                         " tokenize = 'porter unicode61 remove_diacritics 2')")
        self._db.executemany("INSERT INTO c (id, body) VALUES (?, ?)", chunks)
        self._text = dict(chunks)

    def search(self, question: str, k: int = TOP_CHUNKS) -> list[str]:
        """The ids of the ``k`` best chunks by BM25 (ties by id, so runs are deterministic)."""
        words = terms(question)
        if not words:
            return []
        query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self._db.execute("SELECT id FROM c WHERE c MATCH ? ORDER BY bm25(c), id LIMIT ?", (query, k))
        return [r[0] for r in rows]

    def answer(self, question: str) -> BaselineAnswer:
        """The best sentences of the best chunks (see module doc)."""
        words = set(terms(question))
        ids = self.search(question)
        scored = []
        for rank, cid in enumerate(ids):
            for pos, sent in enumerate(sentences(self._text[cid])):
                overlap = len(words & set(_WORD.findall(normalize(sent))))
                scored.append((-overlap, rank, pos, sent))
        best = sorted(sorted(scored)[:TOP_SENTENCES], key=lambda s: (s[1], s[2]))
        return BaselineAnswer(" ".join(s[3] for s in best), tuple(ids))

    def close(self) -> None:
        self._db.close()
