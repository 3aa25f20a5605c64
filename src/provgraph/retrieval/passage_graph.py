"""Passages and entities as one graph, ranked by Personalized PageRank (random walk with restart).

Nodes are the collection's chunks and the entities their extraction subgraphs name; edges are
a chunk's *mentions* (chunk — each entity a fact of that chunk names) and *facts* (subject —
object of each fact between two entities). Every edge belongs to the chunk whose facts gave it,
so the graph follows the collection chunk by chunk: :meth:`PassageGraph.sync` reads the facts of
new chunks only (``facts_of_chunks``, a named store operation) and drops the edges of removed
chunks, and an entity with no edge left leaves the graph. The sparse matrix (``scipy.sparse``) is
assembled from those per-chunk edge lists when the graph changed — no store read, no full rebuild —
and the walk over it (:mod:`~provgraph.retrieval.ppr`) is kept until the graph changes again.

:meth:`PassageGraph.rank` spreads the seeds' weights over the graph (``restart`` is the share of
the walk that returns to the seeds at each step) and returns every chunk's mass, best first.
An entity's *specificity* (``1 / chunks mentioning it``) weights it as a seed: rare names count more.

    graph = PassageGraph(store, librarian)
    graph.sync()
    ranked = graph.rank({"urn:e:ada": 1.0, "urn:chunk:…": 0.2}, limit=10)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.retrieval.passage_cache import Ends, chunk_stamps, read_edges, write_edges
from provgraph.retrieval.ppr import Walk, walk_for
from provgraph.store.queries import NamedQueries

__all__ = ["PassageGraph", "GraphHit", "MENTION", "FACT"]

MENTION = 1.0
"""The weight of a chunk — entity mention edge."""
FACT = 0.5
"""The weight of an entity — entity fact edge (per fact)."""
_BATCH = 500


@dataclass(frozen=True, slots=True)
class GraphHit:
    """A ranked node: its id and its share of the walk's mass."""

    id: str
    score: float


class PassageGraph:
    """The chunk–entity graph of one collection, kept in step with it chunk by chunk."""

    def __init__(self, store: NamedQueries, librarian: Librarian, file: Path | None = None) -> None:
        self.store = store
        self.librarian = librarian
        self.file = file  # the edges kept on disk for the next process (passage_cache), if any
        self._index: dict[str, int] = {}  # node id -> row
        self._names: list[str] = []
        self._free: list[int] = []  # rows of nodes that left, reused first
        self._chunk_edges: dict[str, list[tuple[int, int, float]]] = {}  # chunk -> its edges (rows)
        self._entity_chunks: dict[int, set[str]] = {}  # entity row -> chunks mentioning it
        self._is_chunk = np.zeros(0, dtype=bool)
        self._matrix: sparse.csr_matrix | None = None  # the adjacency, rebuilt from the edge lists on change
        self._walks: dict[float, Walk] = {}  # restart -> the walk over _matrix
        self._synced: tuple[int, int] | None = None
        self._bare: set[str] = set()  # chunks whose extraction was not there yet when read
        self._ends: dict[str, Ends] = {}  # chunk -> its facts' ends (what the file keeps)

    # -- keeping in step ------------------------------------------------------------------------

    def sync(self) -> None:
        """Add the chunks loaded and drop those removed since the last sync (only when either store moved)."""
        stamp = (self.librarian.content_generation, self.store.knowledge_generation)  # type: ignore[attr-defined]
        if stamp == self._synced:
            return
        wanted = dict.fromkeys(r.id for r in self.librarian.list("chunk"))  # in the librarian's order
        if self._synced is None and self.file is not None:
            self._first_sync(wanted)
            self._synced = stamp
            return
        gone = [c for c in self._chunk_edges if c not in wanted]
        for chunk in gone:
            self.remove_chunk(chunk)
        todo = [c for c in wanted if c not in self._chunk_edges]
        if self._synced is not None and stamp[1] != self._synced[1]:
            todo += [c for c in self._bare if c in wanted]  # extraction may have come after the chunk
        self.add_chunks(list(dict.fromkeys(todo)))
        self._synced = stamp

    def add_chunks(self, chunks: Sequence[str]) -> None:
        """Read the facts of ``chunks`` and put their nodes and edges in the graph (replacing earlier ones)."""
        for start in range(0, len(chunks), _BATCH):
            part = chunks[start : start + _BATCH]
            facts = self.store.facts_of_chunks([Iri(c) for c in part])
            for chunk in part:
                self.put_chunk(chunk, facts.get(Iri(chunk), ()))

    def _first_sync(self, wanted: Mapping[str, None]) -> None:
        """The first sync of a process with a file: the chunks whose stamp it holds from it, the others read
        (then written back to it)."""
        assert self.file is not None
        stamps = chunk_stamps(self.store, wanted)  # type: ignore[arg-type]  # before the facts: never newer
        kept = read_edges(self.file) if self.file.exists() else {}
        todo = [c for c in wanted if c not in kept or kept[c][0] != stamps[c]]
        read: dict[str, Ends] = {}
        for start in range(0, len(todo), _BATCH):
            part = todo[start : start + _BATCH]
            facts = self.store.facts_of_chunks([Iri(c) for c in part])
            read.update((c, _ends(facts.get(Iri(c), ()))) for c in part)
        for chunk in wanted:  # in the librarian's order, as a graph read whole takes them
            self.put_ends(chunk, read[chunk] if chunk in read else kept[chunk][1])
        if todo or len(kept) != len(wanted):
            try:
                write_edges(self.file, self._ends, stamps)
            except OSError:  # a cache: the next process reads the facts again
                pass

    def put_chunk(self, chunk: str, facts: Sequence[TripleTerm]) -> None:
        """The chunk's node, a mention edge to each entity its facts name, and a fact edge per fact."""
        self.put_ends(chunk, _ends(facts))

    def put_ends(self, chunk: str, facts: Ends) -> None:
        """:meth:`put_chunk` of the facts' ends (subject and object IRIs, None for a literal)."""
        if chunk in self._chunk_edges:
            self.remove_chunk(chunk)
        row = self._node(chunk, is_chunk=True)
        edges: list[tuple[int, int, float]] = []
        mentioned: set[int] = set()
        if self.file is not None:
            self._ends[chunk] = facts
        for pair in facts:
            rows = [self._node(e, is_chunk=False) for e in pair if e is not None]
            mentioned.update(rows)
            if len(rows) == 2 and rows[0] != rows[1]:
                edges.append((rows[0], rows[1], FACT))
        for entity in sorted(mentioned):
            edges.append((row, entity, MENTION))
            self._entity_chunks.setdefault(entity, set()).add(chunk)
        self._chunk_edges[chunk] = edges
        if facts:
            self._bare.discard(chunk)
        else:
            self._bare.add(chunk)
        self._matrix = None

    def remove_chunk(self, chunk: str) -> None:
        """Drop the chunk, its edges, and every entity no other chunk mentions."""
        edges = self._chunk_edges.pop(chunk, None)
        if edges is None:
            return
        self._ends.pop(chunk, None)
        self._bare.discard(chunk)
        for _, entity, weight in edges:
            if weight == MENTION:
                holders = self._entity_chunks.get(entity)
                if holders is not None:
                    holders.discard(chunk)
                    if not holders:
                        del self._entity_chunks[entity]
                        self._drop(entity)
        self._drop(self._index[chunk])
        self._matrix = None

    def _node(self, ident: str, *, is_chunk: bool) -> int:
        row = self._index.get(ident)
        if row is not None:
            return row
        if self._free:
            row = self._free.pop()
            self._names[row] = ident
        else:
            row = len(self._names)
            self._names.append(ident)
            if row >= len(self._is_chunk):
                self._is_chunk = np.concatenate([self._is_chunk, np.zeros(max(64, row), dtype=bool)])
        self._is_chunk[row] = is_chunk
        self._index[ident] = row
        return row

    def _drop(self, row: int) -> None:
        del self._index[self._names[row]]
        self._names[row] = ""
        self._is_chunk[row] = False
        self._free.append(row)

    # -- reading --------------------------------------------------------------------------------

    def __contains__(self, ident: str) -> bool:
        return ident in self._index

    @property
    def chunk_count(self) -> int:
        return len(self._chunk_edges)

    @property
    def entity_count(self) -> int:
        return len(self._entity_chunks)

    def chunks_of(self, entity: str) -> set[str]:
        """The chunks mentioning ``entity`` (empty when it is not in the graph)."""
        row = self._index.get(entity)
        return set(self._entity_chunks.get(row, ())) if row is not None else set()

    def entities_of(self, chunk: str) -> list[str]:
        """The entities ``chunk`` mentions, rarest first (ties by id)."""
        rows = [e for _, e, w in self._chunk_edges.get(chunk, ()) if w == MENTION]
        return sorted((self._names[e] for e in rows), key=lambda e: (-self.specificity(e), e))

    def specificity(self, entity: str) -> float:
        """``1 / number of chunks mentioning entity`` (0 when no chunk does)."""
        row = self._index.get(entity)
        n = len(self._entity_chunks.get(row, ())) if row is not None else 0  # no copy: called per entity seen
        return 1.0 / n if n else 0.0

    def _adjacency(self) -> sparse.csr_matrix:
        """The symmetric weighted adjacency of the graph (a fact edge repeated adds its weight)."""
        if self._matrix is None:
            size = len(self._names)
            rows = [e for edges in self._chunk_edges.values() for e in edges]
            if rows:
                a, b, w = (np.fromiter((r[i] for r in rows), dtype=float if i == 2 else np.int64, count=len(rows))
                           for i in range(3))
            else:
                a = b = np.zeros(0, dtype=np.int64)
                w = np.zeros(0)
            self._matrix = sparse.coo_matrix((np.concatenate([w, w]), (np.concatenate([a, b]), np.concatenate([b, a]))),
                                             shape=(size, size)).tocsr()
            self._walks = {}
        return self._matrix

    def _walk(self, restart: float) -> Walk:
        """The walk over the current graph for ``restart`` (kept until the graph changes)."""
        adjacency = self._adjacency()
        walk = self._walks.get(restart)
        if walk is None:
            chunks = np.flatnonzero(self._is_chunk[: adjacency.shape[0]])
            entities = np.fromiter(sorted(self._entity_chunks), dtype=np.int64, count=len(self._entity_chunks))
            walk = self._walks[restart] = walk_for(adjacency, chunks, entities, restart=restart)
        return walk

    def rank(self, seeds: Mapping[str, float], *, limit: int, restart: float = 0.5,
             exclude: frozenset[str] = frozenset()) -> list[GraphHit]:
        """The ``limit`` chunks with the most walk mass from ``seeds`` (node id → weight), best first.

        Seeds not in the graph are ignored; no seed in the graph gives no result."""
        walk = self._walk(restart)
        start = np.zeros(self._adjacency().shape[0])
        for ident, weight in seeds.items():
            row = self._index.get(ident)
            if row is not None and weight > 0:
                start[row] += weight
        total = start.sum()
        if total <= 0:
            return []
        start /= total
        mass = walk.mass(start)
        chunks = np.flatnonzero(self._is_chunk[: len(mass)] & (mass > 0))
        wanted = limit + len(exclude)
        if len(chunks) > wanted:  # only the best (and every chunk tied with the last of them) need sorting
            least = np.partition(mass[chunks], len(chunks) - wanted)[len(chunks) - wanted]
            chunks = chunks[mass[chunks] >= least]
        order = chunks[np.lexsort((chunks, -mass[chunks]))]
        out: list[GraphHit] = []
        for row in order:
            name = self._names[row]
            if name in exclude:
                continue
            out.append(GraphHit(name, float(mass[row])))
            if len(out) >= limit:
                break
        return out


def _ends(facts: Sequence[TripleTerm]) -> Ends:
    return [(f.s.value if isinstance(f.s, Iri) else None, f.o.value if isinstance(f.o, Iri) else None) for f in facts]
