"""What GraphRAG reads again from one question to the next, kept while it cannot have changed.

One :class:`ReadCache` serves every GraphRAG engine of a runtime (the API makes one engine per
request). ``labels`` (term → label) are read whole again once the knowledge graph changed
(``store.knowledge_generation``). ``facts`` (chunk → the facts extracted from it) and ``sources``
(edge → its sources), both read from ``urn:graph:source``, are emptied as soon as the store takes
a write that may touch a graph other than the traces' (``store.source_generation``): a document
loaded, replaced or removed never leaves a stale fact or source behind, while the trace a question
writes keeps them. ``vectors`` (edge text →
its embedding) depends on the text alone (one embedder per runtime), so only its size bounds it.
Each map is emptied when it would grow past its bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from provgraph.retrieval.labels import LabelCache, all_labels
from provgraph.store.base import QuadStore

__all__ = ["ReadCache", "Bounded"]


class Bounded(dict[Any, Any]):
    """A dict that empties itself before it would hold more than ``limit`` entries (see :meth:`room`)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def room(self, more: int) -> None:
        """Make room for ``more`` new entries (emptied when they would not fit)."""
        if len(self) + more > self.limit:
            self.clear()

    def through(self, keys: Iterable[Any], read: Callable[[list[Any]], Mapping[Any, Any]]) -> dict[Any, Any]:
        """Each key's value (each key once, in order): those held from here, the others from one
        ``read(missing)`` call, which are then held. The values are the held objects themselves."""
        wanted = list(dict.fromkeys(keys))
        found = {k: v for k in wanted if (v := self.get(k)) is not None}
        missing = [k for k in wanted if k not in found]
        if missing:
            fresh = read(missing)
            self.room(len(missing))
            self.update((k, fresh[k]) for k in missing)
            found.update((k, fresh[k]) for k in missing)
        return {k: found[k] for k in wanted}


class ReadCache:
    """Labels, chunk facts and edge-text vectors shared by the GraphRAG requests on one store."""

    def __init__(self, store: QuadStore, *, max_labels: int = 200_000, max_chunks: int = 5_000,
                 max_edges: int = 5_000, max_vectors: int = 10_000) -> None:
        self.store = store
        self._max_labels = max_labels
        self._labels: dict[Any, str] = {}
        self._labels_of = -1
        self._labels_complete = False  # every label of the graph was read at once
        self._facts: Bounded = Bounded(max_chunks)
        self._sources: Bounded = Bounded(max_edges)
        self._sources_of = store.source_generation  # of both maps
        self.vectors: Bounded = Bounded(max_vectors)  # edge text -> unit vector (float32)

    def labels(self) -> LabelCache:
        """A request's label cache, sharing the labels known for the knowledge graph as it is now."""
        generation = self.store.knowledge_generation
        if generation != self._labels_of or len(self._labels) > self._max_labels:
            self._labels_of = generation
            every = all_labels(self.store, self._max_labels // 2)
            self._labels = every if every is not None else {}
            self._labels_complete = every is not None
        return LabelCache(self.store, self._labels, complete=self._labels_complete)

    def facts(self) -> Bounded:
        """Chunk → facts, as :func:`~provgraph.retrieval.graph_walk.facts_by_chunk` read them, for the store as it is now."""
        self._check_sources()
        return self._facts

    def sources(self) -> Bounded:
        """(edge, with evidence) → sources, as :func:`~provgraph.retrieval.sources.edge_sources` read them, for the
        store as it is now."""
        self._check_sources()
        return self._sources

    def _check_sources(self) -> None:
        generation = self.store.source_generation
        if generation != self._sources_of:
            self._facts.clear()
            self._sources.clear()
            self._sources_of = generation
