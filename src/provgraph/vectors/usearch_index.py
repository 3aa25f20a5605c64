"""VectorIndex on disk: exact numpy search when small, usearch HNSW (cosine, vectors held as f16) when large.

Folder ``{dir}/{name}/``:

    records.sqlite   the records and the index's model/dimension (see :mod:`.records`)
    ann.usearch      the HNSW graph, a cache of the records

The records are the source of truth, durable after each write. The HNSW graph is kept in step
with every write from the first record on, so each write pays for its own vectors (a graph built
whole when the index reaches ``exact_threshold`` records would cost one write as much as all the
earlier ones), and saved by ``flush()``/``close()`` (written aside, fsynced, renamed, the folder
fsynced; its SHA-256 recorded with the generation). Searches stay exact (numpy) below
``exact_threshold`` records and use the graph from there on. The graph is loaded only if it was
saved at the records' current generation; otherwise it is rebuilt from the records when first
needed. A saved current graph that
is missing or does not match its SHA-256 is an error naming the file (``provgraph check --repair``
moves it aside and rebuilds it from the records), never silently used or written over.
A filter is resolved to its records first (payload postings): a selective one is searched
exactly over those records, a broad one over-fetches from the graph in proportion.
"""

from __future__ import annotations

import hashlib
import re
import threading
from datetime import datetime, timezone
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from provgraph.errors import IndexError_, InputError
from provgraph.layout import replace_durably
from provgraph.vectors.base import Hit
from provgraph.vectors.records import RecordTable

__all__ = ["UsearchIndex", "open_index", "EXACT_THRESHOLD", "HNSW_PARAMS"]

EXACT_THRESHOLD = 20_000
"""Below this many records search is exact (numpy); from it on, HNSW."""

HNSW_PARAMS: dict[str, int] = {"connectivity": 16, "expansion_add": 96, "expansion_search": 144}
"""recall@10 against exact search, model2vec vectors (256 dims): 100k names 0.957 (0.958 with 128/128), the
scale benchmark's 20k chunks 0.944 (0.938); adding a vector costs a quarter to a third less CPU than with
``expansion_add`` 128 (1.4 -> 0.85 s per 1,000 at 20k chunks), a search about the same. Only the
connectivity is stored in a saved graph: the expansions apply to graphs saved with other values too."""

HNSW_DTYPE = "f16"
"""How the graph holds its vectors (the records keep float32): half the bytes of f32, so adding 1,000 vectors at 20k
chunks costs 0.26 s of CPU instead of 0.47 and a search 0.26 ms instead of 0.60, at the same recall@10 (0.964 on the
scale benchmark's 20k chunk vectors). A graph saved as f32 before opens as f32 (usearch keeps a file's own type);
a rebuilt one is f16."""

SELECTIVE = 2_000
"""A filter matching at most this many records is searched exactly over just those."""

_NAME = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}$")


def open_index(
    dir: Path,  # noqa: A002 - the name the layer contract uses
    name: str,
    *,
    model: str,
    dimension: int,
    exact_threshold: int = EXACT_THRESHOLD,
) -> UsearchIndex:
    """Open (creating if needed) the index ``name`` under ``dir``, e.g. ``CollectionRef.vectors_dir``.

    Raises IndexError_ when it was created with another embedding model or dimension.
    """
    if not _NAME.match(name):
        raise InputError(f"invalid vector index name {name!r}: use letters, digits, '_', '-' or '.'")
    return UsearchIndex(Path(dir) / name, model=model, dimension=dimension, exact_threshold=exact_threshold)


class UsearchIndex:
    """A :class:`~provgraph.vectors.base.VectorIndex`; use :func:`open_index`. Thread-safe in one process."""

    def __init__(self, folder: Path, *, model: str, dimension: int, exact_threshold: int = EXACT_THRESHOLD) -> None:
        self._records = RecordTable(folder, model=model, dimension=dimension)
        self._ann_path = folder / "ann.usearch"
        self._exact_threshold = max(1, exact_threshold)
        self._lock = threading.RLock()
        self._ann: Any = None
        self._ann_dirty = False

    @property
    def model(self) -> str:
        """The embedding model recorded at creation."""
        return self._records.model

    @property
    def graph_path(self) -> Path:
        """The HNSW graph file (a cache of the records)."""
        return self._ann_path

    @property
    def dimension(self) -> int:
        """The vector length recorded at creation."""
        return self._records.dimension

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[dict[str, Any]], *,
               extend: Collection[str] = ()) -> None:
        """Insert or replace records (atomic, idempotent); the last of repeated ids wins.

        ``extend`` names payload list fields whose given items are added to a stored record's list
        (items it holds are skipped) rather than replacing it. Raises IndexError_ on a dimension
        mismatch, InputError on mismatched lengths or payloads that are not JSON.
        """
        if len(ids) == 0 and len(payloads) == 0 and np.size(vectors) == 0:
            return
        matrix = self._unit_rows(vectors)
        if not (len(ids) == len(matrix) == len(payloads)):
            raise InputError(
                f"upsert needs as many ids, vectors and payloads: {len(ids)}, {len(matrix)}, {len(payloads)}"
            )
        with self._lock:
            self._ensure_ann()  # kept in step with every write: ingestion pays for the graph, not queries
            written = self._records.upsert(ids, matrix, payloads, extend)
            if written.replaced:
                self._ann.remove(np.asarray(written.replaced, dtype=np.uint64))
            if written.keys:
                self._ann.add(np.asarray(written.keys, dtype=np.uint64), matrix[written.order])
            self._ann_dirty = True

    def search(self, vector: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None) -> list[Hit]:
        """Top ``k`` by cosine similarity, best first, among records matching ``where``."""
        query = self._unit_rows(vector)
        if len(query) != 1:
            raise InputError(f"search takes one vector, got {len(query)}")
        with self._lock:
            records = self._records
            if k <= 0 or records.n == 0:
                return []
            if not where:
                if records.n < self._exact_threshold:
                    return self._exact(query[0], k, None)
                self._ensure_ann()
                return self._ann_search(query[0], k, None, fetch=min(records.n, k)) or []
            bound = records.candidate_count(where)
            if bound == 0:
                return []
            if records.n < self._exact_threshold or bound is None or bound <= SELECTIVE:
                return self._exact(query[0], k, records.matching_rows(where))
            self._ensure_ann()
            fetch = min(records.n, int(2 * k * records.n / bound) + k)
            hits = self._ann_search(query[0], k, where, fetch=fetch)
            if hits is None:  # the graph's neighbourhood held too few matches
                hits = self._exact(query[0], k, records.matching_rows(where))
            return hits

    def get(self, ids: Sequence[str], *, fields: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
        """Payloads (copies) of the ``ids`` present, by id (only the ``fields`` named, if given); absent ids
        are left out."""
        with self._lock:
            records = self._records
            rows = ((i, records.row_of_id(i)) for i in ids)
            if fields is not None:
                return {i: records.fields(row, fields) for i, row in rows if row is not None}
            return {i: records.record(row)[1] for i, row in rows if row is not None}

    def delete(self, ids: Sequence[str]) -> int:
        """Remove records by id; unknown ids are ignored. Returns how many were removed."""
        with self._lock:
            present = [i for i in dict.fromkeys(ids) if self._records.row_of_id(i) is not None]
            return self._remove(present)

    def delete_where(self, where: Mapping[str, Any]) -> int:
        """Remove every record whose payload matches ``where`` (an empty filter removes nothing)."""
        if not where:
            return 0
        with self._lock:
            return self._remove([self._records.record(r)[0] for r in self._records.matching_rows(where)])

    def count(self) -> int:
        """Number of records."""
        return self._records.n

    def ids(self) -> list[str]:
        """Every record's id."""
        with self._lock:
            return [self._records.record(r)[0] for r in range(self._records.n)]

    def flush(self) -> None:
        """Build the HNSW graph if it is not current, and save it when it changed."""
        with self._lock:
            if self._records.closed:
                return
            records = self._records
            if records.ann_generation != records.generation:
                self._ensure_ann()  # not saved at this generation yet (a saved one is current: leave it)
            if self._ann is None or not self._ann_dirty:
                return
            if records.ann_generation == records.generation:  # replacing a current file: forget it first
                records.set_ann_generation(-1)
            tmp = self._ann_path.with_suffix(".tmp")
            try:
                self._ann.save(str(tmp))
                digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
                replace_durably(tmp, self._ann_path)
            except (OSError, RuntimeError) as exc:
                raise IndexError_(f"vector index {records.folder}: cannot save the HNSW graph: {exc}") from exc
            records.set_ann_generation(records.generation, digest)
            self._ann_dirty = False

    def graph_problem(self) -> str | None:
        """What is wrong with the saved HNSW graph file (one line naming it), or None when it is sound."""
        with self._lock:
            try:
                self._read_ann()
            except IndexError_ as exc:
                return str(exc)
            return None

    def rebuild_graph(self) -> Path | None:
        """Move the saved graph file aside (kept) and rebuild it from the records; returns where it went."""
        with self._lock:
            aside = None
            if self._ann_path.exists():
                aside = self._ann_path.with_name(f"ann.usearch.damaged-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}")
                self._ann_path.rename(aside)
            self._records.set_ann_generation(-1)
            self._ann = None
            self._ensure_ann()
            self.flush()
            return aside

    def close(self) -> None:
        """Flush and close; idempotent."""
        with self._lock:
            if self._records.closed:
                return
            try:
                self.flush()
            finally:
                self._records.close()
                self._ann = None

    def __enter__(self) -> UsearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _remove(self, ids: list[str]) -> int:
        if not ids:
            return 0
        self._ensure_ann()
        keys = self._records.remove(ids)
        self._ann.remove(np.asarray(keys, dtype=np.uint64))
        self._ann_dirty = True
        return len(keys)

    # -- search ----------------------------------------------------------------------------------

    def _exact(self, query: np.ndarray, k: int, rows: list[int] | None) -> list[Hit]:
        if rows is not None and not rows:
            return []
        matrix = self._records.matrix if rows is None else self._records.matrix[rows]
        scores = matrix @ query
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        picked = top if rows is None else np.asarray(rows)[top]
        return [self._hit(int(r), float(s)) for r, s in zip(picked, scores[top])]

    def _ann_search(
        self, query: np.ndarray, k: int, where: Mapping[str, Any] | None, *, fetch: int
    ) -> list[Hit] | None:
        """HNSW search of ``fetch`` candidates; None when a filter leaves fewer than ``k`` of them."""
        records = self._records
        result = self._ann.search(query, fetch, threads=1)  # one query: no thread pool to start (~0.2 ms less)
        hits: list[Hit] = []
        for key, distance in zip(result.keys, result.distances):
            row = records.row_of_key(int(key))
            if row is None or not records.payload_matches(row, where):
                continue
            hits.append(self._hit(row, 1.0 - float(distance)))
            if len(hits) == k:
                return hits
        return hits if not where or fetch >= records.n else None

    def _hit(self, row: int, score: float) -> Hit:
        record_id, payload = self._records.record(row)
        return Hit(record_id, score, payload)

    # -- HNSW graph --------------------------------------------------------------------------------

    def _new_ann(self) -> Any:
        from usearch.index import Index

        return Index(
            ndim=self._records.dimension,
            metric="cos",
            dtype=HNSW_DTYPE,
            connectivity=HNSW_PARAMS["connectivity"],
            expansion_add=HNSW_PARAMS["expansion_add"],
            expansion_search=HNSW_PARAMS["expansion_search"],
        )

    def _ensure_ann(self) -> None:
        if self._ann is not None:
            return
        self._load_current_ann()
        if self._ann is not None:
            return
        ann = self._new_ann()
        if self._records.n:
            ann.add(self._records.keys.astype(np.uint64), self._records.matrix)
        self._ann, self._ann_dirty = ann, True

    def _load_current_ann(self) -> None:
        """Load the saved graph if it matches the records' generation (a write must keep it current)."""
        if self._ann is None:
            ann = self._read_ann()
            if ann is not None:
                self._ann, self._ann_dirty = ann, False

    def _read_ann(self) -> Any:
        """The saved graph if it was saved at the current generation, else None; IndexError_ when damaged."""
        records = self._records
        if records.ann_generation != records.generation:
            return None
        fix = (f"move it aside and rebuild it from the records: provgraph check --repair -C "
               f"{records.folder.parent.parent.name}")
        try:
            data = self._ann_path.read_bytes()
        except OSError as exc:
            raise IndexError_(f"vector index file {self._ann_path} is missing or unreadable ({exc.strerror or exc}):"
                              f" {fix}") from exc
        if records.ann_digest and hashlib.sha256(data).hexdigest() != records.ann_digest:
            raise IndexError_(f"vector index file {self._ann_path} is damaged (its SHA-256 is not the one recorded"
                              f" when it was saved): {fix}")
        ann = self._new_ann()
        try:
            ann.load(data)
        except (RuntimeError, ValueError, OSError) as exc:
            raise IndexError_(f"vector index file {self._ann_path} is damaged ({exc}): {fix}") from exc
        if len(ann) != records.n:
            raise IndexError_(f"vector index file {self._ann_path} is damaged (it holds {len(ann)} vectors, the "
                              f"records {records.n}): {fix}")
        return ann

    def _unit_rows(self, vectors: np.ndarray) -> np.ndarray:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim == 1:
            matrix = matrix.reshape(1, -1)
        if matrix.ndim != 2 or matrix.shape[1] != self._records.dimension:
            raise IndexError_(
                f"vector index {self._records.folder} holds {self._records.dimension}-dim vectors of"
                f" {self._records.model}; got shape {tuple(matrix.shape)}"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(matrix / norms, dtype=np.float32)
