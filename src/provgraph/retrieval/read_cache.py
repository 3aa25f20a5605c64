"""What GraphRAG reads again from one question to the next, kept while it cannot have changed.

``facts`` (chunk → the facts extracted from it, read from ``urn:graph:source``) is emptied as soon
as the store takes a write that may touch a graph other than the traces'
(``store.source_generation`` moved): a document loaded, replaced or removed never leaves a stale
fact behind, while the trace a question writes keeps it. ``vectors`` (edge text → its embedding)
depends on the text alone (one embedder per engine), so only its size bounds it. Each map is
emptied when it would grow past its bound.
"""

from __future__ import annotations

from provgraph.store.oxigraph import OxigraphStore

__all__ = ["ReadCache", "Bounded"]


class Bounded(dict):  # type: ignore[type-arg]
    """A dict that empties itself before it would hold more than ``limit`` entries (see :meth:`room`)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def room(self, more: int) -> None:
        """Make room for ``more`` new entries (emptied when they would not fit)."""
        if len(self) + more > self.limit:
            self.clear()


class ReadCache:
    """Chunk facts and edge-text vectors shared by the requests of one engine."""

    def __init__(self, store: OxigraphStore, *, max_chunks: int = 5_000, max_vectors: int = 10_000) -> None:
        self._store = store
        self._facts: Bounded = Bounded(max_chunks)
        self._facts_of = store.source_generation
        self.vectors: Bounded = Bounded(max_vectors)  # edge text -> unit vector (float32)

    def facts(self) -> Bounded:
        """Chunk → facts, as :func:`~provgraph.retrieval.graph_walk.facts_by_chunk` read them, for the store as it is now."""
        generation = self._store.source_generation
        if generation != self._facts_of:
            self._facts.clear()
            self._facts_of = generation
        return self._facts

