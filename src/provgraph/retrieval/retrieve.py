"""Retrieval without an answer: the ranked passages with their scores and provenance, and the supporting
subgraph — the context an external LLM or another RAG stack would be given (``provgraph retrieve``).

Modes: ``graph`` (graph-ranked passages with the bridge hop, :mod:`~provgraph.retrieval.graph_rank`),
``hybrid`` (lexical + dense fused by rank), ``lexical`` (BM25) and ``dense`` (the chunk vectors). Every
passage carries its document, page or section and offsets (from the store's ``chunk_sources``), and the
subgraph is the facts extracted from the passages (``facts_of_chunks``) with their labels — all named
store operations, so this works on any store backend. :func:`to_json` / :func:`from_json` are the wire form.

    result = Retriever.of(runtime).retrieve("Who discovered polonium?", k=5, mode="graph")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from provgraph.errors import InputError
from provgraph.librarian.base import Librarian
from provgraph.models.base import Embedder
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.retrieval.graph_rank import GraphRanker, PassageScore, Ranking
from provgraph.retrieval.hybrid import DENSE, LEXICAL, HybridRetriever, Ranked
from provgraph.retrieval.ranking_trace import relevant
from provgraph.store.queries import NamedQueries

__all__ = ["MODES", "Retrieval", "RetrievedPassage", "RetrievedFact", "Retriever", "to_json", "from_json"]

MODES = ("graph", "hybrid", "lexical", "dense")


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    """One passage: rank, chunk, text, scores, the path that brought it in, and where it comes from."""

    rank: int
    chunk: str
    text: str
    score: float
    document: str | None = None
    title: str | None = None
    parent: str | None = None  # page or section (or the document itself)
    page_number: int | None = None
    section_title: str | None = None
    chunk_index: int | None = None
    offset: int | None = None
    length: int | None = None
    graph_score: float | None = None
    graph_rank: int | None = None
    lexical_rank: int | None = None
    dense_rank: int | None = None
    hop: int = 1
    bridge: str | None = None
    via: str | None = None
    covers: str | None = None  # the question's name it was moved forward for (a comparison)


@dataclass(frozen=True, slots=True)
class RetrievedFact:
    """One fact of the supporting subgraph: its terms (IRIs or literal text), their labels, its chunks."""

    s: str
    p: str
    o: str
    s_label: str
    p_label: str
    o_label: str
    chunks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What ``retrieve`` returns: the question, the mode, the passages best first, and the subgraph."""

    question: str
    mode: str
    relevant: bool
    passages: tuple[RetrievedPassage, ...]
    facts: tuple[RetrievedFact, ...] = ()
    seeds: tuple[dict[str, Any], ...] = field(default=())  # graph mode: each hop's seeds


def to_json(result: Retrieval) -> dict[str, Any]:
    """The wire (``--format json``) form."""
    return asdict(result)


def from_json(data: Mapping[str, Any]) -> Retrieval:
    """The inverse of :func:`to_json`."""
    return Retrieval(
        question=data["question"], mode=data["mode"], relevant=bool(data["relevant"]),
        passages=tuple(RetrievedPassage(**p) for p in data["passages"]),
        facts=tuple(RetrievedFact(**{**f, "chunks": tuple(f["chunks"])}) for f in data["facts"]),
        seeds=tuple(dict(s) for s in data["seeds"]),
    )


def _value(term: object) -> str:
    return term.value if isinstance(term, (Iri, Literal)) else str(term)


class _Parts(Protocol):
    @property
    def store(self) -> Any: ...
    @property
    def librarian(self) -> Librarian: ...
    @property
    def embedder(self) -> Embedder: ...
    def retriever(self) -> HybridRetriever: ...


class Retriever:
    """Retrieves passages over one collection (the runtime's parts)."""

    @classmethod
    def of(cls, parts: _Parts) -> Retriever:
        """The retriever over a runtime's store, librarian, embedder and hybrid retriever (and its passage graph)."""
        return cls(parts.store, parts.librarian, parts.embedder, GraphRanker(parts.retriever()))

    def __init__(self, store: NamedQueries, librarian: Librarian, embedder: Embedder, ranker: GraphRanker) -> None:
        self.store = store
        self.librarian = librarian
        self.embedder = embedder
        self.ranker = ranker
        self.hybrid = ranker.retriever

    def retrieve(self, question: str, *, k: int = 5, mode: str = "graph", facts: bool = True) -> Retrieval:
        """The ``k`` best passages for ``question`` in ``mode``, with their provenance and subgraph."""
        if not question.strip():
            raise InputError("the question is empty")
        if mode not in MODES:
            raise InputError(f"unknown retrieval mode {mode!r}; use one of {', '.join(MODES)}")
        if k < 1:
            raise InputError(f"k must be a positive integer, got {k}")
        vector = None if mode == "lexical" else self.embedder.embed([question])[0]
        seeds: tuple[dict[str, Any], ...] = ()
        if mode == "graph":
            ranking = self.ranker.rank(question, vector, k)
            scored = list(ranking.passages)
            is_relevant = relevant(ranking)
            seeds = _seeds(ranking)
        else:
            scored = [_scored(i, r) for i, r in enumerate(self._plain(question, vector, k, mode), start=1)]
            is_relevant = bool(scored)
        passages = self._with_sources(scored)
        return Retrieval(question, mode, is_relevant, tuple(passages),
                         tuple(self._facts([p.chunk for p in passages])) if facts else (), seeds)

    def _plain(self, question: str, vector: np.ndarray | None, k: int, mode: str) -> list[Ranked]:
        ranked = self.hybrid.chunks(question, vector, max(k, 30) if mode == "dense" else k)
        if mode != "dense":
            return ranked
        dense = [r for r in ranked if r.by(DENSE) is not None]
        return sorted(dense, key=lambda r: r.by(DENSE).rank)[:k]  # type: ignore[union-attr]

    def _with_sources(self, scored: Sequence[PassageScore]) -> list[RetrievedPassage]:
        chunks = [Iri(s.chunk) for s in scored]
        rows = {r.chunk: r for r in self.store.chunk_sources(chunks)}
        unread = [s.chunk for s in scored if s.text is None]
        texts = self.librarian.texts(unread, missing_ok=True) if unread else {}
        out: list[RetrievedPassage] = []
        for s in scored:
            text = s.text if s.text is not None else texts.get(s.chunk)
            if text is None:
                continue
            row = rows.get(Iri(s.chunk))
            where: dict[str, Any] = {}
            if row is not None:
                document = row.document or row.parent
                page = row.page_number
                where = {"document": document.value, "title": row.title.value if row.title else None,
                         "parent": row.parent.value, "page_number": int(page.value) if page is not None else None,
                         "section_title": (row.parent_label.value if row.parent_label is not None and page is None
                                           and row.document is not None else None),
                         "chunk_index": int(row.chunk_index.value), "offset": int(row.offset.value),
                         "length": int(row.length.value)}
            out.append(RetrievedPassage(rank=len(out) + 1, chunk=s.chunk, text=text, score=s.score, **where,
                                        graph_score=s.graph_score, graph_rank=s.graph_rank,
                                        lexical_rank=s.lexical_rank, dense_rank=s.dense_rank, hop=s.hop,
                                        bridge=s.bridge, via=s.via, covers=s.covers))
        return out

    def _facts(self, chunks: Sequence[str]) -> list[RetrievedFact]:
        found = self.store.facts_of_chunks([Iri(c) for c in chunks])
        by_fact: dict[TripleTerm, list[str]] = {}
        for chunk in chunks:
            for fact in found.get(Iri(chunk), ()):
                by_fact.setdefault(fact, []).append(chunk)
        iris = list(dict.fromkeys(t for f in by_fact for t in (f.s, f.p, f.o) if isinstance(t, Iri)))
        labels = self.hybrid.labels(iris) if self.hybrid.store is self.store else self.store.labels(iris)

        def label(term: object) -> str:
            names = labels.get(term, []) if isinstance(term, Iri) else []  # type: ignore[call-overload]
            return min((n.value for n in names), default=_value(term))

        return [RetrievedFact(_value(f.s), _value(f.p), _value(f.o), label(f.s), label(f.p), label(f.o), tuple(c))
                for f, c in by_fact.items()]


def _scored(rank: int, r: Ranked) -> PassageScore:
    lexical, dense = r.by(LEXICAL), r.by(DENSE)
    return PassageScore(r.id, rank, r.score, None, None, lexical.rank if lexical else None,
                        dense.rank if dense else None, 1, text=r.text)


def _seeds(ranking: Ranking) -> tuple[dict[str, Any], ...]:
    return tuple({"id": s.id, "kind": s.kind, "weight": s.weight, "linked_by": s.how, "hop": hop}
                 for hop, group in enumerate(ranking.seeds, start=1) for s in group)
