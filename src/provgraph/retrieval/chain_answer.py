"""The no-LLM GraphRAG answer along a ranking's chain of passages: the first hop's best sentences, then one
sentence of the bridge passage (a passage about the bridge entity), each citing its chunk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from provgraph.librarian.base import Librarian
from provgraph.models.base import Embedder
from provgraph.rdf.terms import Iri
from provgraph.retrieval.answer_pick import pick_sentences
from provgraph.retrieval.graph_rank import GraphRanker, PassageScore, Ranking
from provgraph.retrieval.sources import chunk_sources
from provgraph.retrieval.synthesis import Citations, Quote
from provgraph.store.base import QuadStore

__all__ = ["chain_quotes", "with_chunk_sources", "HOP_POOL"]

HOP_POOL = (4, 2)
"""The best passages of the first hop, of the bridge hop, that hop's sentence is picked from."""


def chain_quotes(ranking: Ranking, ranker: GraphRanker, librarian: Librarian, embedder: Embedder, question: str,
                 vector: np.ndarray, first: Callable[[int], list[Quote]]) -> list[Quote]:
    """The chain of evidence. ``first(limit)`` gives the first hop's best-answering sentences (of the selected
    edges' chunks); without any, the first hop's best passages are quoted. With a bridge passage, the first
    hop gives its best two sentences and the bridge passage one after them, in chain order."""
    about = [p for p in ranking.passages if p.hop > 1 and ranker.about(p)]
    limit = 2 if about else 3  # the bridge sentence after the first hop's best two
    quotes = first(limit)
    if not quotes:
        quotes = _pick(question, vector, embedder, librarian, [p for p in ranking.passages if p.hop == 1][:HOP_POOL[0]],
                       limit, [])
    if about:
        names = ranker.retriever.names(about[0].bridge or "")
        asked = f"{names[0]} {question}" if names else question  # hop 2 is about the bridge entity
        quotes += _pick(asked, vector, embedder, librarian, about[:HOP_POOL[1]], 1, quotes)
    return quotes


def _pick(question: str, vector: np.ndarray, embedder: Embedder, librarian: Librarian,
          passages: list[PassageScore], limit: int, taken: list[Quote]) -> list[Quote]:
    unread = [p.chunk for p in passages if p.text is None]
    got = librarian.texts(unread, missing_ok=True) if unread else {}
    pool = [(p.chunk, p.text if p.text is not None else got.get(p.chunk), i) for i, p in enumerate(passages, start=1)]
    picks = pick_sentences(question, vector, embedder, [(c, t, i) for c, t, i in pool if t is not None], limit=limit)
    return [Quote(p.text, (p.chunk,)) for p in picks if all(q.text != p.text for q in taken)]


def with_chunk_sources(store: QuadStore, citations: Citations, chunks: list[str]) -> Citations:
    """The citations with a source for each quoted chunk no selected edge came from."""
    have = {s.chunk for s in citations.sources}
    missing = [Iri(c) for c in dict.fromkeys(chunks) if c not in have and c in citations.by_chunk]
    if not missing:
        return citations
    found = chunk_sources(store, missing)
    extra = tuple(replace(found[c], marker=citations.by_chunk[c.value]) for c in missing if c in found)
    return Citations(citations.sources + extra, citations.by_edge, citations.by_chunk)
