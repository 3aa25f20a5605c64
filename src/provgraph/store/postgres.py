"""The quad store on PostgreSQL: a term dictionary and a four-column quad table per collection.

Each collection is a schema (store/pg_placement.py); its ``quads(g, s, p, o)`` (term ids, 0 = default graph) are indexed
(s,p,o,g) unique, (p,o,s), (o,s,g), (g,s,p), and its triple terms by their parts. A write is one
transaction, its rows sorted by key (concurrent writers of the same facts cannot deadlock); the
generations are sequences, bumped after the commit, so every process sees every write. SPARQL is
not answered here (the named operations are, in SQL; SPARQL by the replica, store/replica.py).
"""

from __future__ import annotations

import io
import itertools
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from provgraph.errors import QueryError, StoreError
from provgraph.rdf.terms import Iri, Quad, Subject, Term
from provgraph.rdf.vocab import GRAPH_RETRIEVAL
from provgraph.store.base import ANY, GraphSel, RdfFormat, SelectResult
from provgraph.store.pg_connection import pg_connect, pg_errors
from provgraph.store.pg_placement import drop_pg_collection, list_pg_collections, place_collection, schema_of
from provgraph.store.pg_terms import DEFAULT_GRAPH, TRIPLE, TermRow, decode_row, term_id, term_rows
from provgraph.store.queries_postgres import SqlQueries

__all__ = ["PostgresStore", "sparql_data", "schema_of", "drop_pg_collection", "list_pg_collections", "pg_connect", "pg_errors"]

_DDL = """CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.terms (id bigint PRIMARY KEY, kind smallint NOT NULL, value text NOT NULL,
  extra text, ts bigint, tp bigint, tob bigint);
CREATE INDEX IF NOT EXISTS terms_parts ON {s}.terms (ts, tp, tob) WHERE kind = 6;
CREATE TABLE IF NOT EXISTS {s}.quads (g bigint NOT NULL, s bigint NOT NULL, p bigint NOT NULL, o bigint NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS quads_spog ON {s}.quads (s, p, o, g);
CREATE INDEX IF NOT EXISTS quads_pos ON {s}.quads (p, o, s);
CREATE INDEX IF NOT EXISTS quads_osg ON {s}.quads (o, s, g);
CREATE INDEX IF NOT EXISTS quads_gsp ON {s}.quads (g, s, p);
CREATE SEQUENCE IF NOT EXISTS {s}.gen_all;
CREATE SEQUENCE IF NOT EXISTS {s}.gen_knowledge;
CREATE SEQUENCE IF NOT EXISTS {s}.gen_source;
CREATE TABLE IF NOT EXISTS {s}.replicas (url text PRIMARY KEY, applied bigint NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.outbox (seq bigserial PRIMARY KEY, removed text NOT NULL, added text NOT NULL);"""
# Writers take this advisory lock shared, a replica being registered exclusive: a write committed after the
# registration is in the outbox, one committed before it is in the rebuild's export
_OUTBOX_LOCK = "SELECT pg_advisory_xact_lock{mode}(hashtext(%s))"
_OUTBOX_IN = ("INSERT INTO {s}.outbox (removed, added) SELECT %s, %s WHERE EXISTS (SELECT 1 FROM {s}.replicas)")
_TERMS_IN = ("INSERT INTO {s}.terms (id, kind, value, extra, ts, tp, tob) SELECT * FROM unnest("
             "%s::bigint[], %s::smallint[], %s::text[], %s::text[], %s::bigint[], %s::bigint[], %s::bigint[]) "
             "ORDER BY 1 ON CONFLICT (id) DO NOTHING RETURNING id")
_COLLIDED = ("SELECT t.id FROM {s}.terms t JOIN unnest(%s::bigint[], %s::smallint[], %s::text[], %s::text[], "
             "%s::bigint[], %s::bigint[], %s::bigint[]) AS n(id, kind, value, extra, ts, tp, tob) ON t.id = n.id "
             "WHERE (t.kind, t.value, t.extra, t.ts, t.tp, t.tob) IS DISTINCT FROM (n.kind, n.value, n.extra, n.ts, n.tp, n.tob)")
_QUADS_IN = ("INSERT INTO {s}.quads (g, s, p, o) SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], "
             "%s::bigint[]) AS n(g, s, p, o) ORDER BY s, p, o, g ON CONFLICT DO NOTHING")
_QUADS_OUT = ("DELETE FROM {s}.quads q USING unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[]) "
              "AS d(g, s, p, o) WHERE q.s = d.s AND q.p = d.p AND q.o = d.o AND q.g = d.g")
_TERMS_OF = """WITH RECURSIVE t AS (SELECT id, kind, value, extra, ts, tp, tob FROM {s}.terms WHERE id = ANY(%s)
  UNION SELECT x.id, x.kind, x.value, x.extra, x.ts, x.tp, x.tob FROM {s}.terms x JOIN t ON t.kind = 6
  AND x.id IN (t.ts, t.tp, t.tob)) SELECT * FROM t"""  # a triple term's parts come with it, at any depth
_CACHE = 500_000  # decoded terms kept per store


def sparql_data(quads: Iterable[Quad]) -> str:
    """Quads as the inside of a SPARQL ``INSERT DATA``/``DELETE DATA`` block, terms in canonical form (the outbox's text)."""
    return "".join(f"{q.s} {q.p} {q.o} .\n" if q.g is None else f"GRAPH {q.g} {{ {q.s} {q.p} {q.o} . }}\n" for q in quads)


def _columns(rows: Iterable[TermRow]) -> list[list[Any]]:
    rows = sorted(rows)
    return [list(col) for col in zip(*rows)] if rows else [[] for _ in range(7)]


def _quad_columns(quads: Iterable[Quad]) -> list[list[int]]:
    keyed = sorted({(term_id(q.s), term_id(q.p), term_id(q.o), DEFAULT_GRAPH if q.g is None else term_id(q.g))
                    for q in quads})
    s, p, o, g = ([k[i] for k in keyed] for i in range(4))
    return [g, s, p, o]


class PostgresStore(SqlQueries):
    """:class:`~provgraph.store.base.QuadStore` on PostgreSQL (named reads in SQL; no SPARQL)."""

    def __init__(self, url: str, user: str, collection: str, *, create: bool = True) -> None:
        self.name = f"{user}/{collection}"
        self.url = url
        self.schema = schema_of(user, collection)
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()
        self._terms: dict[int, Term] = {}
        self._verified: set[int] = set()  # ids known to name our term in the database
        conn = self._conn()
        with pg_errors(self.name, "open"), conn.transaction():
            place_collection(conn, user, collection, self.schema, _DDL.format(s=self.schema), create=create)

    # -- connections ------------------------------------------------------------------------------------
    def _conn(self) -> Any:
        """This thread's connection (a store is used from the request and background threads)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = pg_connect(self.url, self.name)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _sql(self, text: str) -> str:
        return text.format(s=self.schema)

    def _fetch(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = (), doing: str = "read") -> list[tuple[Any, ...]]:
        with pg_errors(self.name, doing):
            return self._conn().execute(self._sql(sql), params).fetchall()

    # -- terms ------------------------------------------------------------------------------------------
    def _decode(self, ids: Iterable[int]) -> dict[int, Term]:
        """The terms of ``ids`` (from the cache, else in one read)."""
        wanted = set(ids)
        wanted.discard(DEFAULT_GRAPH)
        missing = wanted - self._terms.keys()
        pending: dict[int, tuple[Any, ...]] = {}
        while missing:
            rows = self._fetch(_TERMS_OF, ([*missing],))
            found = {r[0] for r in rows}
            if missing - found:
                raise StoreError(f"collection {self.name}: {len(missing - found)} term id(s) have no dictionary entry")
            for row in rows:
                pending[row[0]] = row
            missing = {i for r in rows if r[1] == TRIPLE for i in r[4:7]} - self._terms.keys() - pending.keys()
        if len(self._terms) + len(pending) > _CACHE:
            self._terms.clear()
        for tid in sorted(pending, key=lambda i: pending[i][1] == TRIPLE):  # parts before triples
            self._build(tid, pending)
        return {i: self._terms[i] for i in wanted}

    def _build(self, tid: int, pending: dict[int, tuple[Any, ...]]) -> Term:
        term = self._terms.get(tid)
        if term is None:
            _, kind, value, extra, ts, tp, to = pending[tid]
            parts = tuple(self._build(i, pending) for i in (ts, tp, to)) if kind == TRIPLE else None
            term = self._terms[tid] = decode_row(kind, value, extra, parts)  # type: ignore[arg-type]
        return term

    def _write_terms(self, conn: Any, terms: Iterable[Term]) -> None:
        rows: dict[int, TermRow] = {}
        term_rows(terms, rows)
        new = [r for tid, r in rows.items() if tid not in self._verified]
        if not new:
            return
        cols = _columns(new)
        inserted = {r[0] for r in conn.execute(self._sql(_TERMS_IN), cols).fetchall()}
        existing = [r for r in new if r.id not in inserted]
        if existing and conn.execute(self._sql(_COLLIDED), _columns(existing)).fetchall():
            raise StoreError(f"collection {self.name}: two different terms share a 64-bit dictionary id; nothing was written")
        self._verified.update(r.id for r in new)
        if len(self._verified) > _CACHE:
            self._verified.clear()

    # -- writes -----------------------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self._generations()[0]

    @property
    def knowledge_generation(self) -> int:
        return self._generations()[1]

    @property
    def source_generation(self) -> int:
        return self._generations()[2]

    def _generations(self) -> tuple[int, int, int]:
        row = self._fetch("SELECT " + ", ".join(f"(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {{s}}.{n})"
                                                for n in ("gen_all", "gen_knowledge", "gen_source")))[0]
        return int(row[0]), int(row[1]), int(row[2])

    def _bump(self, quads: list[Quad] | None) -> None:
        names = ["gen_all"]
        if quads is None or any(q.g is None for q in quads):
            names.append("gen_knowledge")
        if quads is None or any(q.g != GRAPH_RETRIEVAL for q in quads):
            names.append("gen_source")
        self._fetch("SELECT " + ", ".join(f"nextval('{{s}}.{n}')" for n in names), doing="write")

    def apply(self, *, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add in ONE transaction (replace). Idempotent."""
        removing, adding = list(remove), list(add)
        if not removing and not adding:
            return
        conn = self._conn()
        with pg_errors(self.name, "write"), conn.transaction():
            if removing:
                conn.execute(self._sql(_QUADS_OUT), _quad_columns(removing))
            if adding:
                self._write_terms(conn, (t for q in adding for t in (q.s, q.p, q.o, q.g) if t is not None))
                conn.execute(self._sql(_QUADS_IN), _quad_columns(adding))
            self._to_outbox(conn, sparql_data(removing), sparql_data(adding))
        self._bump(removing + adding)

    def _to_outbox(self, conn: Any, removed: str, added: str) -> None:
        """The write for the collection's SPARQL replicas (store/replica.py), when it has one, in the same transaction."""
        conn.execute(_OUTBOX_LOCK.format(mode="_shared"), (self.schema,))
        conn.execute(self._sql(_OUTBOX_IN), (removed, added))

    def outbox_lock(self, conn: Any) -> None:
        """Wait for the writes in progress and keep new ones out until ``conn``'s transaction ends."""
        conn.execute(_OUTBOX_LOCK.format(mode=""), (self.schema,))

    def add(self, quads: Iterable[Quad]) -> int:
        """Add quads in one transaction; returns how many were given. Idempotent."""
        given = quads if isinstance(quads, list) else list(quads)
        self.apply(add=given)
        return len(given)

    def bulk_add(self, quads: Iterable[Quad]) -> int:
        """As :meth:`add` (one transaction is as fast here)."""
        return self.add(quads)

    def clear(self) -> None:
        """Remove every quad (the dictionary stays)."""
        conn = self._conn()
        with pg_errors(self.name, "clear"), conn.transaction():
            conn.execute(self._sql("DELETE FROM {s}.quads"))
            self._to_outbox(conn, "*", "")
        self._bump(None)

    # -- reads ------------------------------------------------------------------------------------------
    def _where(self, s: Subject | None, p: Iri | None, o: Term | None, g: GraphSel) -> tuple[str, list[int]]:
        conds, params = [], []
        for col, term in (("s", s), ("p", p), ("o", o)):
            if term is not None:
                conds.append(f"{col} = %s")
                params.append(term_id(term))
        if g is not ANY:
            conds.append("g = %s")
            params.append(DEFAULT_GRAPH if g is None else term_id(g))  # type: ignore[arg-type]
        return (" WHERE " + " AND ".join(conds)) if conds else "", params

    def match(self, s: Subject | None = None, p: Iri | None = None, o: Term | None = None, *,
              g: GraphSel = ANY) -> Iterator[Quad]:
        """Quads matching the pattern (``g=None`` is the default graph, ``g=ANY`` every graph)."""
        where, params = self._where(s, p, o, g)
        rows = self._fetch("SELECT g, s, p, o FROM {s}.quads" + where, params)
        terms = self._decode(i for r in rows for i in r)
        for gid, sid, pid, oid in rows:
            quad = Quad(terms[sid], terms[pid], terms[oid], None if gid == DEFAULT_GRAPH else terms[gid])  # type: ignore[arg-type]
            if (s is None or quad.s == s) and (p is None or quad.p == p) and (o is None or quad.o == o):
                yield quad

    def count(self, s: Subject | None = None, p: Iri | None = None, o: Term | None = None, *, g: GraphSel = ANY) -> int:
        """How many quads match the pattern."""
        where, params = self._where(s, p, o, g)
        return int(self._fetch("SELECT count(*) FROM {s}.quads" + where, params)[0][0])

    def __len__(self) -> int:
        return self.count()

    def _no_sparql(self) -> QueryError:
        return QueryError(f"collection {self.name}: SPARQL is not answered by the PostgreSQL store (its SPARQL replica "
                          "is not built yet); the named operations are")

    def select(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> SelectResult:
        raise self._no_sparql()

    def ask(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> bool:
        raise self._no_sparql()

    def construct(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> list[Quad]:
        raise self._no_sparql()

    # -- files ------------------------------------------------------------------------------------------
    def export(self, out: BinaryIO, fmt: RdfFormat = "nquads") -> None:
        """Every quad, serialised as the embedded store does (through a scratch pyoxigraph store, so the
        bytes are the same as the embedded export of the same quads)."""
        import pyoxigraph as ox

        from provgraph.rdf.convert import quads_to_ox
        from provgraph.store.oxigraph import OX_FORMATS

        with tempfile.TemporaryDirectory(prefix="provgraph-export-") as scratch:
            store = ox.Store(scratch)
            try:
                conn = self._conn()
                with pg_errors(self.name, "export"), conn.transaction(), conn.cursor(name="export") as cur:
                    cur.execute(self._sql("SELECT g, s, p, o FROM {s}.quads"))
                    while rows := cur.fetchmany(20_000):
                        terms = self._decode(i for r in rows for i in r)
                        store.bulk_extend(quads_to_ox([Quad(terms[s], terms[p], terms[o],  # type: ignore[arg-type]
                                                            None if g == DEFAULT_GRAPH else terms[g])  # type: ignore[arg-type]
                                                       for g, s, p, o in rows]))
                store.dump(out, format=OX_FORMATS[fmt])
            finally:
                del store

    def export_bytes(self, fmt: RdfFormat = "nquads") -> bytes:
        buf = io.BytesIO()
        self.export(buf, fmt)
        return buf.getvalue()

    def import_data(self, data: bytes | Path, fmt: RdfFormat = "nquads") -> int:
        """Check the whole text first (a syntax error imports nothing), then add it in one transaction,
        sent in batches of ``IMPORT_BATCH`` quads (PostgreSQL holds the transaction; this process one batch)."""
        from provgraph.rdf.convert import quad_from_ox
        from provgraph.store.oxigraph import IMPORT_BATCH, parse_rdf

        checked = sum(1 for _ in parse_rdf(self.name, data, fmt))
        written, batch = 0, []
        conn = self._conn()
        with pg_errors(self.name, "write"), conn.transaction():
            for quad in itertools.chain(parse_rdf(self.name, data, fmt), [None]):  # None: the end
                if quad is not None:
                    batch.append(quad_from_ox(quad))
                if batch and (quad is None or len(batch) == IMPORT_BATCH):
                    self._write_terms(conn, (t for q in batch for t in (q.s, q.p, q.o, q.g) if t is not None))
                    conn.execute(self._sql(_QUADS_IN), _quad_columns(batch))
                    self._to_outbox(conn, "", sparql_data(batch))
                    written += len(batch)
                    batch = []
        if written:
            self._bump(None)
        assert written == checked
        return written

    def flush(self) -> None:
        """Nothing to do: every write is committed."""

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
