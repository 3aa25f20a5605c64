"""The no-LLM GraphRAG answer along a ranking's chain of passages: the first hop's best sentences, then one
sentence of the bridge passage (a passage about the bridge entity), each citing its chunk.

The first hop quotes from the ranking's best first-hop passages and the chunks of the selected edges (the
passages first); its three best sentences come before the bridge sentence, which adds to them rather than
taking one of their places (on the real-text sets a bridge sentence in the third place cost answers whose
third sentence held the question's second fact, bench/eval/README.md)."""

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

__all__ = ["chain_quotes", "first_hop_chunks", "with_chunk_sources", "HOP_POOL", "FIRST_HOP_PASSAGES"]

HOP_POOL = (4, 2)
"""The best passages of the first hop, of the bridge hop, that hop's sentence is picked from."""
FIRST_HOP_PASSAGES = 3
"""The ranking's best first-hop passages quoted from beside the selected edges' chunks (tuned on the dev sets)."""
FIRST_HOP_SENTENCES = 3


def first_hop_chunks(ranking: Ranking, edge_chunks: list[str]) -> list[str]:
    """The chunks the first hop's sentences are picked from: its best passages, then the selected edges'."""
    best = [p.chunk for p in ranking.passages if p.hop == 1][:FIRST_HOP_PASSAGES]
    return list(dict.fromkeys(best + edge_chunks))


def chain_quotes(ranking: Ranking, ranker: GraphRanker, librarian: Librarian, embedder: Embedder, question: str,
                 vector: np.ndarray, first: Callable[[int], list[Quote]]) -> list[Quote]:
    """The chain of evidence. ``first(limit)`` gives the first hop's best-answering sentences (of
    :func:`first_hop_chunks`); without any, the first hop's best passages are quoted. With a bridge passage,
    the bridge passage's best sentence follows the first hop's, in chain order."""
    about = [p for p in ranking.passages if p.hop > 1 and ranker.about(p)]
    limit = FIRST_HOP_SENTENCES
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
