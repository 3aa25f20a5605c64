"""Answer citations and ranked chunk selections, in ``urn:graph:retrieval`` (docs/trace-format.md).

A citation is one marker as written in the answer (``[2]``, ``[1, 3]``) with the span of the
answer it ends (``tg:charOffset``/``tg:charLength`` in ``tg:content``), the chunks it names and,
for GraphRAG, the edge selections those chunks support. Chunk selections record a Document RAG
chunk's rank, score and the retriever that found it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from provgraph.provenance.common import Quads
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, RDFS, TG

__all__ = ["CitationRecord", "ChunkChoice", "citation_quads", "chunk_selection_quads"]

G = GRAPH_RETRIEVAL


@dataclass(frozen=True, slots=True)
class CitationRecord:
    """One marker of an answer: the answer span it ends and what it cites."""

    iri: Iri
    marker: str
    offset: int
    length: int
    chunks: tuple[Iri, ...] = ()
    edges: tuple[Iri, ...] = ()  # GraphRAG edge selections


@dataclass(frozen=True, slots=True)
class ChunkChoice:
    """One retrieved chunk: its selection IRI, the chunk, 1-based rank, score and retriever."""

    iri: Iri
    chunk: Iri
    rank: int
    score: float | None
    retriever: str


def citation_quads(synthesis: Iri, citations: Sequence[CitationRecord]) -> list[Quad]:
    """``<synthesis> tg:citation <c>`` and each citation's marker, span, chunks and edges."""
    q = Quads(G)
    for c in citations:
        q.add(synthesis, TG.citation, c.iri).types(c.iri, TG.Citation)
        q.text(c.iri, TG.marker, c.marker).integer(c.iri, TG.charOffset, c.offset)
        q.integer(c.iri, TG.charLength, c.length)
        q.each(c.iri, TG.selectedChunk, c.chunks).each(c.iri, TG.selectedEdge, c.edges)
    return q.items


def chunk_selection_quads(exploration: Iri, choices: Sequence[ChunkChoice]) -> list[Quad]:
    """``<exploration> tg:chunkSelection <sel>`` and each selection's chunk, rank, score, retriever."""
    q = Quads(G)
    for c in choices:
        q.add(exploration, TG.chunkSelection, c.iri).types(c.iri, TG.ChunkSelection)
        q.text(c.iri, RDFS.label, f"Rank {c.rank}").add(c.iri, TG.chunk, c.chunk)
        q.integer(c.iri, TG.rank, c.rank).text(c.iri, TG.retriever, c.retriever)
        if c.score is not None:
            q.add(c.iri, TG.score, Literal.double(c.score))
    return q.items
