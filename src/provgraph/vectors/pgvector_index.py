"""The vector index on PostgreSQL + pgvector: one table per index in the collection's schema.

``{schema}.vec_{name}(id, payload, fields, embedding)``: the payload as its exact JSON text, the same
payload as ``jsonb`` for ``where`` filters (GIN-indexed; U+0000, which ``jsonb`` cannot hold, reads as
U+FFFD there), and the unit vector under an HNSW index (cosine). Filtered searches run with
``hnsw.iterative_scan`` so a filter that most neighbours fail still fills ``k``. The model and
dimension an index was created with are recorded in ``{schema}.vector_indexes``. Every write is one
transaction, rows sorted by id. Safe across processes.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from provgraph.errors import IndexError_, InputError
from provgraph.store.pg_connection import PgLink, pg_errors
from provgraph.vectors.base import Hit
from provgraph.vectors.payloads import dump, extended

__all__ = ["PgVectorIndex"]

_NAME = re.compile(r"^[A-Za-z0-9_]{1,40}$")
_META = ("CREATE TABLE IF NOT EXISTS {s}.vector_indexes (name text PRIMARY KEY, model text NOT NULL, "
         "dimension int NOT NULL)")
_TABLE = """CREATE TABLE IF NOT EXISTS {t} (id text PRIMARY KEY, payload text NOT NULL, fields jsonb NOT NULL,
  embedding vector({d}) NOT NULL);
CREATE INDEX IF NOT EXISTS {n}_filter ON {t} USING gin (fields jsonb_path_ops);
CREATE INDEX IF NOT EXISTS {n}_hnsw ON {t} USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 96)"""
# the usearch index's connectivity, expansion_add and expansion_search (vectors/usearch_index.py HNSW_PARAMS): at
# pgvector's own default ef_search (40) a 50-entity search of a 3,939-entity collection missed 14 of the exact 50
# (100: 1 missed), which usearch found, so the two backends seeded GraphRAG differently
_EF_SEARCH = 144


def _filters(where: Mapping[str, Any]) -> tuple[str, list[str]]:
    """SQL and parameters for a ``where`` filter: each field equals, or its list holds, the wanted value(s)."""
    conds, params = [], []
    for key, wanted in where.items():
        if isinstance(wanted, list):
            conds.append("fields @> %s::jsonb")
            params.append(json.dumps({key: wanted}))
        else:  # a scalar field equal to it, or a list field holding it
            conds.append("(fields @> %s::jsonb OR fields @> %s::jsonb)")
            params += [json.dumps({key: wanted}), json.dumps({key: [wanted]})]
    return " AND ".join(conds), params


def _filter_of(text: str) -> str:
    return text.replace("\\u0000", "\\ufffd")


def _with_vectors(conn: Any) -> None:
    """A new connection: pgvector's type (created if the database lacks it) known to psycopg."""
    from pgvector.psycopg import register_vector

    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)


class PgVectorIndex:
    """A :class:`~provgraph.vectors.base.VectorIndex` in PostgreSQL (the collection's ``schema``)."""

    def __init__(self, url: str, schema: str, name: str, *, model: str, dimension: int) -> None:
        if not _NAME.match(name):
            raise InputError(f"invalid vector index name {name!r}: use letters, digits or '_'")
        self._where = f"collection index {schema}.{name}"
        self._table = f"{schema}.vec_{name}"
        self._lock = threading.RLock()
        self._link = PgLink(url, self._where, prepare=_with_vectors)
        with self._errors("open"), self._conn.transaction():
            self._conn.execute(_META.format(s=schema))
            self._conn.execute(f"SELECT pg_advisory_xact_lock(hashtext('{self._table}'))")
            self._conn.execute(f"INSERT INTO {schema}.vector_indexes VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                               (name, model, dimension))
            self._model, self._dimension = self._conn.execute(
                f"SELECT model, dimension FROM {schema}.vector_indexes WHERE name = %s", (name,)).fetchone()
            self._conn.execute(_TABLE.format(t=self._table, n=f"vec_{name}", d=int(self._dimension)))
        if (self._model, self._dimension) != (model, dimension):
            raise IndexError_(f"vector index {name} of {schema} holds {self._dimension}-dim vectors of {self._model}; "
                              f"the embedder is {model} ({dimension}-dim): rebuild the index or use that embedder")

    @property
    def _conn(self) -> Any:
        return self._link.conn  # opened again after a server restart

    def _errors(self, doing: str) -> Any:
        return pg_errors(self._where, doing, IndexError_)

    @property
    def model(self) -> str:
        """The embedding model recorded at creation."""
        return str(self._model)

    @property
    def dimension(self) -> int:
        """The vector length recorded at creation."""
        return int(self._dimension)

    def _unit_rows(self, vectors: np.ndarray) -> np.ndarray:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim == 1:
            matrix = matrix.reshape(1, -1)
        if matrix.ndim != 2 or matrix.shape[1] != self.dimension:
            raise IndexError_(f"vector index {self._table} holds {self.dimension}-dim vectors of {self.model}; "
                              f"got shape {tuple(matrix.shape)}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return matrix / norms

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[dict[str, Any]], *,
               extend: Collection[str] = ()) -> None:
        """Insert or replace records in one transaction (the last of repeated ids wins); ``extend`` adds the
        given items of those list fields to the stored lists."""
        if len(ids) == 0 and len(payloads) == 0 and np.size(vectors) == 0:
            return
        matrix = self._unit_rows(vectors)
        if not (len(ids) == len(matrix) == len(payloads)):
            raise InputError(f"upsert needs as many ids, vectors and payloads: {len(ids)}, {len(matrix)}, {len(payloads)}")
        last = sorted({record_id: i for i, record_id in enumerate(ids)}.items())
        with self._lock, self._errors("write"), self._conn.transaction():
            stored: dict[str, Any] = {}
            if extend:
                rows = self._conn.execute(f"SELECT id, payload FROM {self._table} WHERE id = ANY(%s) ORDER BY id "
                                          "FOR UPDATE", ([i for i, _ in last],)).fetchall()
                stored = {i: json.loads(p) for i, p in rows}
            out = []
            for record_id, i in last:
                payload = payloads[i]
                if record_id in stored:
                    held = stored[record_id]
                    payload = extended(held, payload, extend, lambda f, item: item in held.get(f, ()))[0]
                text = dump(payload, record_id)
                out.append((record_id, text, _filter_of(text), matrix[i]))
            with self._conn.cursor() as cur:
                cur.executemany(f"INSERT INTO {self._table} (id, payload, fields, embedding) VALUES (%s, %s, %s, %s) "
                                "ON CONFLICT (id) DO UPDATE SET payload = EXCLUDED.payload, fields = EXCLUDED.fields, "
                                "embedding = EXCLUDED.embedding", out)

    def search(self, vector: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None) -> list[Hit]:
        """Top ``k`` by cosine similarity, best first, among records matching ``where``."""
        query = self._unit_rows(vector)
        if len(query) != 1:
            raise InputError(f"search takes one vector, got {len(query)}")
        if k <= 0:
            return []
        cond, params = _filters(where) if where else ("TRUE", [])
        with self._lock, self._errors("search"), self._conn.transaction():
            self._conn.execute(f"SET LOCAL hnsw.ef_search = {max(_EF_SEARCH, min(1000, 2 * int(k)))}")
            self._conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            rows = self._conn.execute(f"SELECT id, payload, 1 - (embedding <=> %s) FROM {self._table} WHERE {cond} "
                                      "ORDER BY embedding <=> %s LIMIT %s", [query[0], *params, query[0], k]).fetchall()
        return [Hit(i, float(score), json.loads(p)) for i, p, score in rows]

    def get(self, ids: Sequence[str], *, fields: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
        """Payloads of the ``ids`` present (only the ``fields`` named, if given)."""
        with self._lock, self._errors("read"):
            rows = self._conn.execute(f"SELECT id, payload FROM {self._table} WHERE id = ANY(%s)", (list(ids),)).fetchall()
        found = {i: json.loads(p) for i, p in rows}
        if fields is not None:
            found = {i: {f: v for f, v in p.items() if f in fields} for i, p in found.items()}
        return {i: found[i] for i in dict.fromkeys(ids) if i in found}

    def delete(self, ids: Sequence[str]) -> int:
        """Remove records by id (unknown ids ignored); returns how many went."""
        with self._lock, self._errors("delete"):
            return int(self._conn.execute(f"DELETE FROM {self._table} WHERE id = ANY(%s)",
                                          (sorted(set(ids)),)).rowcount)

    def delete_where(self, where: Mapping[str, Any]) -> int:
        """Remove every record matching ``where`` (an empty filter removes nothing)."""
        if not where:
            return 0
        cond, params = _filters(where)
        with self._lock, self._errors("delete"):
            return int(self._conn.execute(f"DELETE FROM {self._table} WHERE {cond}", params).rowcount)

    def count(self) -> int:
        """Number of records."""
        with self._lock, self._errors("read"):
            return int(self._conn.execute(f"SELECT count(*) FROM {self._table}").fetchone()[0])

    def ids(self) -> list[str]:
        """Every record's id, sorted."""
        with self._lock, self._errors("read"):
            return [r[0] for r in self._conn.execute(f"SELECT id FROM {self._table} ORDER BY id").fetchall()]

    def flush(self) -> None:
        """Nothing to do: every write is committed, and PostgreSQL keeps the HNSW graph."""

    def close(self) -> None:
        """Close the connection; idempotent."""
        with self._lock:
            self._link.close()
