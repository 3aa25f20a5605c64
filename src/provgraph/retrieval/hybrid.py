"""Hybrid retrieval: the lexical (BM25) index and the dense vector index, fused by reciprocal rank.

Every result says which retriever found it, at what rank and with what score
(:class:`Finding`), so a trace can explain why a chunk or an entity was chosen. Chunks
whose text is identical (same content hash) collapse into the best-ranked one, and
reference / link-list / boilerplate chunks are ranked after every content chunk
(:func:`~provgraph.retrieval.boilerplate.is_boilerplate`). Entities are found from the
question's words against their labels and aliases (an exact label inside the question ranks
first), and by vector similarity of the question to their labels.

Before a search the lexical index is brought in step with the librarian (chunks) and the store
(entity labels), see :mod:`provgraph.retrieval.lexical_sync` — only when that source was written
since the last sync (its ``content_generation`` / ``knowledge_generation`` moved: a question's own
answer record and trace do not count), so a question on an unchanged collection reads neither
every chunk id nor every label.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from threading import Lock

import numpy as np

from provgraph.librarian.base import Librarian
from provgraph.librarian.lexical import EXACT_WEIGHT, LexicalIndex, query_terms
from provgraph.retrieval.background import running
from provgraph.retrieval.boilerplate import is_boilerplate
from provgraph.retrieval.lexical_sync import sync_chunks, sync_entities
from provgraph.retrieval.passage_graph import PassageGraph
from provgraph.rdf.terms import Iri, Literal
from provgraph.store.base import QuadStore
from provgraph.vectors.base import Hit, VectorIndex

__all__ = ["Finding", "Ranked", "fuse", "HybridRetriever", "RRF_K", "LEXICAL", "DENSE"]

RRF_K = 10
"""The reciprocal-rank-fusion constant: a result at rank r adds 1 / (RRF_K + r)."""
LEXICAL = "lexical"
DENSE = "dense"
_POOL = 30
_MAX_NGRAM = 5
_KEPT_TEXTS = 4096  # chunk texts kept by content hash (~4 MB of 1,000-character chunks)
_DENSE_SEEN: ContextVar[dict[tuple[bytes, int], list[Hit]] | None] = ContextVar("dense_seen", default=None)


@dataclass(frozen=True, slots=True)
class Finding:
    """How one retriever found a result: its name, 1-based rank and own score."""

    retriever: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class Ranked:
    """A fused result: id, fused score, and every retriever's finding (for the trace).

    ``text`` is the chunk's text when the retriever read it (chunks only), so callers need not read it again.
    """

    id: str
    score: float
    found: tuple[Finding, ...]
    demoted: bool = False
    exact: bool = False
    text: str | None = field(default=None, compare=False, repr=False)

    def by(self, retriever: str) -> Finding | None:
        """This result's finding by ``retriever``, if that retriever found it."""
        return next((f for f in self.found if f.retriever == retriever), None)


WEIGHTS = {LEXICAL: 1.0, DENSE: 0.3}
"""Each retriever's weight in the fusion: the static embedder finds less than keywords (bench/lexical.py)."""


def fuse(lists: Mapping[str, Sequence[tuple[str, float]]], *, k: int = RRF_K,
         weights: Mapping[str, float] | None = None) -> list[Ranked]:
    """Weighted reciprocal rank fusion of ranked ``(id, score)`` lists, best first (ties by id).

    >>> [r.id for r in fuse({"lexical": [("a", 3.0), ("b", 1.0)], "dense": [("b", 0.9)]})]
    ['b', 'a']
    """
    order, scores, found = _fusion(lists, k, WEIGHTS if weights is None else weights)
    return [_ranked(i, scores[i], found[i]) for i in order]


_Found = list[tuple[str, int, float]]


def _fusion(lists: Mapping[str, Sequence[tuple[str, float]]], k: int,
            weights: Mapping[str, float]) -> tuple[list[str], dict[str, float], dict[str, _Found]]:
    """The fused order, each id's score and its ``(retriever, rank, score)`` findings (no objects built yet)."""
    scores: dict[str, float] = {}
    found: dict[str, _Found] = {}
    for name, ranked in lists.items():
        weight = weights.get(name, 1.0)
        seen: set[str] = set()
        for rank, (ident, score) in enumerate(ranked, start=1):
            if ident in seen:  # a retriever counts once per id
                continue
            seen.add(ident)
            scores[ident] = scores.get(ident, 0.0) + weight / (k + rank)
            found.setdefault(ident, []).append((name, rank, score))
    return sorted(scores, key=lambda i: (-scores[i], i)), scores, found


def _ranked(ident: str, score: float, found: _Found, *, demoted: bool = False, text: str | None = None) -> Ranked:
    return Ranked(ident, score, tuple(Finding(name, rank, float(s)) for name, rank, s in found), demoted=demoted,
                  text=text)


def _ngrams(words: Sequence[str]) -> set[str]:
    return {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + _MAX_NGRAM) + 1)}


class HybridRetriever:
    """Chunks and entities by lexical + dense retrieval over one collection."""

    def __init__(self, lexical: LexicalIndex, librarian: Librarian, store: QuadStore, *,
                 chunk_index: VectorIndex | None = None, entity_index: VectorIndex | None = None,
                 graph_file: Path | None = None) -> None:
        self.lexical = lexical
        self.graph_file = graph_file  # where the passage graph keeps its edges for the next process
        self.librarian = librarian
        self.store = store
        self.chunk_index = chunk_index
        self.entity_index = entity_index
        self._hashes: dict[str, str] = {}
        self._boilerplate: dict[str, bool] = {}  # content hash -> is_boilerplate(its text): a hash's text never changes
        self._texts: dict[str, str] = {}  # content hash -> text, the latest read (a question's hops read the same)
        self._texts_lock = Lock()
        self._stored_labels: dict[Iri, list[Literal]] = {}  # read so far, while the knowledge graph is unchanged
        self._stored_labels_of = -1  # the store's knowledge_generation they were read at
        self._labels_lock = Lock()
        self._labels: dict[str, list[str]] = {}
        self._synced: dict[str, int] = {}  # kind -> the source's generation the lexical index last caught up with

    def _sync_chunks(self) -> None:
        """Bring the chunk index up to the librarian, only when the librarian was written since the last sync."""
        generation = self.librarian.content_generation  # answers written by questions are not indexed
        if self._synced.get("chunk") != generation:
            self._hashes = sync_chunks(self.lexical, self.librarian)
            current = set(self._hashes.values())
            self._boilerplate = {h: b for h, b in self._boilerplate.items() if h in current}
            self._synced["chunk"] = generation

    def _sync_entities(self) -> None:
        """Bring the entity index up to the store's labels, only when the store was written since the last sync."""
        generation = self.store.knowledge_generation  # labels live in the default graph; traces do not
        if self._synced.get("entity") != generation:
            self._labels = sync_entities(self.lexical, self.store)
            self._synced["entity"] = generation

    def chunks(self, question: str, vector: np.ndarray | None, k: int, *, exact: float = EXACT_WEIGHT) -> list[Ranked]:
        """The ``k`` best chunks: fused, duplicates collapsed, boilerplate after content (``exact``: the lexical
        search's weight of the words as written, see :data:`~provgraph.librarian.lexical.EXACT_WEIGHT`)."""
        if k < 1:
            return []
        self._sync_chunks()
        pool = max(_POOL, 4 * k)
        hits = self._known_dense(vector, pool)
        search = partial(self.lexical.search, exact=exact)
        if vector is not None and self.chunk_index is not None and hits is None:
            with running(search, "chunk", question, pool) as keyword:  # beside the vector search
                hits = self._dense(vector, pool)
            keyword_hits = keyword.result()
        else:  # nothing to do beside it (no vector, or the question's dense hits are known): no thread to wait for
            keyword_hits = search("chunk", question, pool)
        lists = {LEXICAL: [(h.id, h.score) for h in keyword_hits]}
        if hits is not None:
            lists[DENSE] = [(str(h.payload.get("chunk", h.id)), h.score) for h in hits]
        order, scores, found = _fusion(lists, RRF_K, WEIGHTS)
        fused = [i for i in order if i in self._hashes]
        seen: set[str] = set()
        content: list[Ranked] = []
        demoted: list[Ranked] = []
        # texts are read a batch at a time, until k content chunks are found (usually the first batch)
        for start in range(0, len(fused), 2 * k):
            if len(content) >= k:
                break
            batch = fused[start : start + 2 * k]
            texts = self._read_texts(batch)
            for ident in batch:
                digest = self._hashes[ident]
                text = texts.get(ident)
                if digest in seen or text is None:
                    continue
                seen.add(digest)
                flag = self._boilerplate.get(digest)
                if flag is None:
                    flag = self._boilerplate[digest] = is_boilerplate(text)
                (demoted if flag else content).append(
                    _ranked(ident, scores[ident], found[ident], demoted=flag, text=text))
        return (content + demoted)[:k]

    def labels(self, iris: Sequence[Iri]) -> dict[Iri, list[Literal]]:
        """``store.labels(iris)``, those read since the knowledge graph last changed from memory."""
        with self._labels_lock:  # one retriever answers several requests at once
            generation = self.store.knowledge_generation
            if generation != self._stored_labels_of or len(self._stored_labels) > 100_000:
                self._stored_labels, self._stored_labels_of = {}, generation
            known = self._stored_labels
            missing = [i for i in dict.fromkeys(iris) if i not in known]
            if missing:
                found = self.store.labels(missing)
                known.update((i, found.get(i, [])) for i in missing)
            return {i: known[i] for i in iris if known[i]}

    def _read_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The texts of ``ids`` (indexed chunks), those read lately from memory: a content hash's text never changes."""
        with self._texts_lock:
            out = {i: t for i in ids if (t := self._texts.get(self._hashes[i])) is not None}
        unread = [i for i in ids if i not in out]
        if unread:
            read = self.librarian.texts(unread, missing_ok=True)
            with self._texts_lock:
                for ident, text in read.items():
                    self._texts[self._hashes[ident]] = text
                while len(self._texts) > _KEPT_TEXTS:
                    del self._texts[next(iter(self._texts))]
            out.update(read)
        return out

    @contextmanager
    def one_question(self) -> Iterator[None]:
        """Within the block (one question, in this thread or task) a chunk search repeats no dense search: the
        hops search the chunk vectors with the question's vector again, and nothing is written meanwhile."""
        token = _DENSE_SEEN.set({})
        try:
            yield
        finally:
            _DENSE_SEEN.reset(token)

    def _known_dense(self, vector: np.ndarray | None, pool: int) -> list[Hit] | None:
        """This question's dense hits of ``vector`` if they were searched already (see :meth:`one_question`)."""
        seen = _DENSE_SEEN.get()
        if vector is None or seen is None:
            return None
        return seen.get((np.asarray(vector, dtype=np.float32).tobytes(), pool))

    def _dense(self, vector: np.ndarray, pool: int) -> list[Hit]:
        hits = self.chunk_index.search(vector, pool)  # type: ignore[union-attr]
        seen = _DENSE_SEEN.get()
        if seen is not None:
            seen[(np.asarray(vector, dtype=np.float32).tobytes(), pool)] = hits
        return hits

    def chunks_for_parts(self, parts: Sequence[str], vectors: np.ndarray | None, k: int) -> list[Ranked]:
        """Chunks for a question of several parts: each part's best chunks, interleaved, each once (at most 2k)."""
        if len(parts) == 1:
            return self.chunks(parts[0], None if vectors is None else np.atleast_2d(vectors)[0], k)
        lists = [self.chunks(part, None if vectors is None else np.atleast_2d(vectors)[i], k)
                 for i, part in enumerate(parts)]
        out: dict[str, Ranked] = {}
        for row in range(k):
            for ranked in lists:
                if row < len(ranked):
                    out.setdefault(ranked[row].id, ranked[row])
        return list(out.values())[: 2 * k]

    @cached_property
    def graph(self) -> PassageGraph:
        """The collection's passage graph (one per retriever, so per runtime: it follows the collection chunk by
        chunk; :mod:`~provgraph.retrieval.graph_rank` ranks on it)."""
        return PassageGraph(self.store, self.librarian, self.graph_file)

    def names(self, entity: str) -> list[str]:
        """The entity's labels then aliases, as the lexical index knows them (empty when it has none)."""
        self._sync_entities()
        return list(self._labels.get(entity, ()))

    def entities(self, question: str, vectors: np.ndarray | None, k: int) -> list[Ranked]:
        """The ``k`` entities the question names: exact labels in it first, then fused lexical + dense."""
        if k < 1:
            return []
        self._sync_entities()
        labels = self._labels
        hits = self.lexical.search("entity", question, max(_POOL, 4 * k))
        grams = _ngrams(query_terms(question))
        terms = set(query_terms(question))

        def exactness(ident: str) -> float:
            names = labels.get(ident, ())
            best = 0.0
            for name in names:
                words = query_terms(name)
                if not words:
                    continue
                if " ".join(words) in grams:
                    best = max(best, 1.0 + 0.1 * len(words))
                else:
                    best = max(best, sum(w in terms for w in words) / len(words))
            return best

        lexical = sorted(((h.id, h.score) for h in hits), key=lambda hs: (-exactness(hs[0]), -hs[1]))
        lists: dict[str, list[tuple[str, float]]] = {LEXICAL: lexical}
        if vectors is not None and self.entity_index is not None:
            best: dict[str, float] = {}
            for row in np.atleast_2d(vectors):
                for hit in self.entity_index.search(row, max(k, 10)):
                    entity = hit.payload.get("entity")
                    if isinstance(entity, str) and hit.score > best.get(entity, -2.0):
                        best[entity] = hit.score
            lists[DENSE] = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        fused = fuse(lists)
        exact = [Ranked(r.id, r.score, r.found, exact=True) for r in fused if exactness(r.id) >= 1.0]
        exact.sort(key=lambda r: -exactness(r.id))
        rest = [r for r in fused if exactness(r.id) < 1.0]
        return (exact + rest)[:k]
