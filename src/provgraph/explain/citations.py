"""Citations, ranked chunk selections and retractions of a stored trace (docs/trace-format.md).

Pure functions over a :class:`TraceGraph` node and what the builder already made (selected
edges, chunk references, edge sources): nothing here queries the store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence

from provgraph.explain.graph import EPOCH, Node, TraceGraph
from provgraph.explain.model import (
    ChunkRef,
    Citation,
    Evidence,
    Retraction,
    SelectedEdge,
    SourceRef,
)
from provgraph.extract.evidence import align
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.rdf.vocab import PROV, TG

__all__ = ["citations_of", "chunk_ranks", "retractions_of", "Ranks"]

_INDEX = re.compile(r"/(\d+)$")
Ranks = dict[Iri, tuple[int | None, float | None, str | None]]


def _index(iri: Iri) -> tuple[int, str]:
    found = _INDEX.search(iri.value)
    return (int(found.group(1)) if found else 0, iri.value)


def citations_of(
    synthesis: Node,
    graph: TraceGraph,
    content: str,
    edges: Mapping[Iri, SelectedEdge],
    chunk: Callable[[Iri], ChunkRef],
    edge_sources: Callable[[SelectedEdge], Sequence[SourceRef]],
    text_of: Callable[[Iri], str | None] = lambda _: None,
) -> tuple[Citation, ...]:
    """The synthesis's citations in answer order, each resolved to its edges, chunks and sources.

    A chunk citation's evidence, and every citation's ``quote``, is where the cited span stands in
    a cited chunk's text, when it does (an extractive answer quotes its sentences): each marker
    then resolves to its own sentence, even where several markers cite one chunk.
    """
    out: list[Citation] = []
    for iri in sorted(synthesis.iris(TG.citation), key=_index):
        node = graph.node(iri)
        offset, length = node.integer(TG.charOffset) or 0, node.integer(TG.charLength) or 0
        cited_edges = tuple(edges[e] for e in sorted(node.iris(TG.selectedEdge), key=str) if e in edges)
        cited_edges = tuple(sorted(cited_edges, key=lambda e: (e.index is None, e.index or 0)))
        chunks = tuple(chunk(c) for c in node.iris(TG.selectedChunk))
        span = content[offset:offset + length]
        quotes = [SourceRef(c.source, c.excerpt, _quoted(span, text_of(c.iri))) for c in chunks if c.source is not None]
        if cited_edges:
            names = {c.iri.value for c in chunks}
            sources = tuple(r for e in cited_edges for r in edge_sources(e) if r.source.chunk in names)
        else:
            sources = tuple(quotes)
        quote = next((q for q in quotes if q.evidence is not None), None)
        out.append(Citation(iri, node.text(TG.marker) or "", offset, length, span, cited_edges, chunks, sources, quote))
    return tuple(out)


_ENDS = ".!?…"
_CLOSERS = "\"'”’)]"


def _quoted(span: str, text: str | None) -> Evidence | None:
    """Where ``span`` stands in ``text``, with the sentence's end the marker cut off ("… in 1806 [1].")."""
    found = align(span, text) if span.strip() and text else None
    if found is None or text is None:
        return None
    offset, length = found
    end = offset + length
    if end < len(text) and text[end] in _ENDS and text[end - 1] not in _ENDS:
        end += 1
        while end < len(text) and text[end] in _CLOSERS:
            end += 1
    return Evidence(offset, end - offset, text[offset:end])


def chunk_ranks(exploration: Node, graph: TraceGraph) -> Ranks:
    """Rank, score and retriever of each chunk the exploration's ``tg:ChunkSelection``s record."""
    out: Ranks = {}
    for iri in exploration.iris(TG.chunkSelection):
        node = graph.node(iri)
        chunk = node.iri_of(TG.chunk)
        if chunk is not None:
            out[chunk] = (node.integer(TG.rank), node.number(TG.score), node.text(TG.retriever))
    return out


def retractions_of(
    graph: TraceGraph,
    question: Iri,
    edges: Collection[TripleTerm] | None = None,
    chunks: Collection[Iri] | None = None,
) -> tuple[Retraction, ...]:
    """The retractions naming ``question``, oldest first, each cut to the trace's own edges and
    chunks when those are given."""
    out: list[Retraction] = []
    for node in graph.nodes.values():
        if not node.has_type(TG.Retraction) or question not in node.all(TG.affectedTrace):
            continue
        gone_edges = tuple(sorted((e for e in node.all(TG.retractedEdge)
                                   if isinstance(e, TripleTerm) and (edges is None or e in edges)), key=str))
        gone_chunks = tuple(sorted((c for c in node.iris(TG.retractedChunk) if chunks is None or c in chunks),
                                   key=str))
        out.append(Retraction(node.iri, node.iri_of(PROV.invalidated), node.time(PROV.startedAtTime) or EPOCH,
                              node.text(TG.reason) or "", gone_edges, gone_chunks))
    return tuple(sorted(out, key=lambda r: (r.at, r.iri.value)))
