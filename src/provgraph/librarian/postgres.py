"""The librarian on PostgreSQL: records, content-addressed blobs and completion records in the collection's schema.

``{schema}.lib_records`` has the embedded librarian's columns; ``lib_blobs(digest, data bytea)`` holds
every content and text once (records reference them by foreign key, so a blob in use can never be
deleted: clean-up after a write skips any a concurrent write has taken); ``lib_completions`` is written
last when a document is loaded and dropped first when it changes. Each write is one transaction. The
generations are sequences bumped after the commit, so every process sees every write.

With ``documents`` (``PROVGRAPH_BLOB_URL``: librarian/external.py) a document's content goes there, put before the
transaction that records it, and its ``lib_blobs`` row holds no bytes (a row of no bytes whose digest is not the empty
string's says: the bytes are outside); the bytes are deleted there once the row is (no record references them).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from provgraph.errors import InputError, NotFound
from provgraph.librarian.base import PARENT_KINDS, NewRecord, Record, RecordKind
from provgraph.librarian.blobs import sha256_hex
from provgraph.librarian.external import ExternalBlobs
from provgraph.librarian.rows import COLUMNS, Prepared, check_batch, iso, to_record
from provgraph.store.pg_connection import PgLink, pg_errors

__all__ = ["PgLibrarian"]

_DDL = """CREATE TABLE IF NOT EXISTS {s}.lib_blobs (digest text PRIMARY KEY, data bytea NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.lib_records (id text PRIMARY KEY, kind text NOT NULL,
  parent_id text REFERENCES {s}.lib_records(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, title text,
  mime_type text NOT NULL, metadata text NOT NULL, tags text NOT NULL, size bigint NOT NULL,
  content_hash text NOT NULL REFERENCES {s}.lib_blobs(digest), text_hash text NOT NULL REFERENCES {s}.lib_blobs(digest),
  created text NOT NULL, number bigint, char_offset bigint, char_length bigint);
CREATE INDEX IF NOT EXISTS lib_records_parent ON {s}.lib_records (parent_id, number);
CREATE INDEX IF NOT EXISTS lib_records_kind ON {s}.lib_records (kind, created);
CREATE INDEX IF NOT EXISTS lib_records_content ON {s}.lib_records (content_hash);
CREATE INDEX IF NOT EXISTS lib_records_text ON {s}.lib_records (text_hash);
CREATE TABLE IF NOT EXISTS {s}.lib_completions (
  document text PRIMARY KEY REFERENCES {s}.lib_records(id) ON DELETE CASCADE, content_hash text NOT NULL,
  completed text NOT NULL);
CREATE SEQUENCE IF NOT EXISTS {s}.lib_gen;
CREATE SEQUENCE IF NOT EXISTS {s}.lib_content_gen"""
_UPSERT = (f"INSERT INTO {{s}}.lib_records ({COLUMNS}) VALUES ({', '.join(['%s'] * 14)}) ON CONFLICT (id) DO UPDATE SET "
           + ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS.replace(" ", "").split(",")[1:]))
_SUBTREE = ("WITH RECURSIVE sub(id) AS (SELECT %s::text UNION ALL "
            "SELECT r.id FROM {s}.lib_records r JOIN sub ON r.parent_id = sub.id)")
_EMPTY = sha256_hex(b"")
_CURRENT = ("SELECT c.document FROM {s}.lib_completions c JOIN {s}.lib_records r ON r.id = c.document "
            "WHERE c.content_hash = r.content_hash")


def _dict_rows(conn: Any) -> None:
    from psycopg.rows import dict_row

    conn.row_factory = dict_row


class PgLibrarian:
    """A :class:`~provgraph.librarian.base.Librarian` in PostgreSQL (the collection's ``schema``)."""

    def __init__(self, url: str, schema: str, *, name: str, documents: ExternalBlobs | None = None) -> None:
        self.name = name
        self.documents = documents
        self.path = Path(schema)  # no folder: named for messages only
        self._schema = schema
        self._lock = threading.RLock()
        self._link = PgLink(url, name, prepare=_dict_rows)
        with self._errors("open"), self._db.transaction():
            self._db.execute(f"SELECT pg_advisory_xact_lock(hashtext('{schema}.lib'))")
            self._db.execute(self._sql(_DDL))

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def _db(self) -> Any:
        return self._link.conn  # opened again after a server restart

    def _sql(self, text: str) -> str:
        return text.format(s=self._schema)

    def _errors(self, doing: str) -> Any:
        return pg_errors(f"{self.name} (librarian)", doing)

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock, self._errors("read"):
            return list(self._db.execute(self._sql(sql), params).fetchall())

    @property
    def generation(self) -> int:
        return self._generation("lib_gen")

    @property
    def content_generation(self) -> int:
        return self._generation("lib_content_gen")

    def _generation(self, sequence: str) -> int:
        row = self._q(f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM {{s}}.{sequence}")[0]
        return int(row["n"])

    @contextmanager
    def _write(self, doing: str, *, content: bool = True) -> Iterator[Any]:
        """One transaction; the generations move after it commits."""
        with self._lock, self._errors(doing):
            with self._db.transaction():
                yield self._db
            bumps = "nextval('{s}.lib_gen')" + (", nextval('{s}.lib_content_gen')" if content else "")
            self._db.execute(self._sql(f"SELECT {bumps}"))

    def _collect(self, digests: Iterable[str]) -> None:
        """Delete the blobs among ``digests`` that no record references (a concurrent write's are kept)."""
        import psycopg

        for digest in sorted(set(digests)):
            try:
                with self._lock, self._db.transaction():
                    gone = self._db.execute(self._sql(
                        "DELETE FROM {s}.lib_blobs b WHERE digest = %s AND NOT EXISTS (SELECT 1 FROM {s}.lib_records r "
                        "WHERE r.content_hash = b.digest OR r.text_hash = b.digest) RETURNING length(data) AS n"),
                        (digest,)).fetchall()
            except psycopg.errors.ForeignKeyViolation:
                continue  # a record added meanwhile uses it
            if self.documents is not None and gone and gone[0]["n"] == 0 and digest != _EMPTY:
                self.documents.delete(digest)

    def _rows(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        rows = self._q(f"SELECT {COLUMNS} FROM {{s}}.lib_records WHERE id = ANY(%s)", (list(ids),))
        return {r["id"]: r for r in rows}

    def _row(self, id: str) -> dict[str, Any]:
        row = self._rows([id]).get(id)
        if row is None:
            raise NotFound(f"librarian record not found: {id}")
        return row

    def _blob(self, digest: str) -> bytes:
        rows = self._q("SELECT data FROM {s}.lib_blobs WHERE digest = %s", (digest,))
        return self._bytes(digest, bytes(rows[0]["data"]))

    def _bytes(self, digest: str, data: bytes) -> bytes:
        """A row's bytes, read from the document store when the row holds none."""
        if data or digest == _EMPTY:
            return data
        if self.documents is None:
            raise NotFound(f"{self.name}: the bytes of {digest} are in a document store (set PROVGRAPH_BLOB_URL)")
        return self.documents.get(digest)

    def _stored(self, id: str) -> tuple[str, str] | None:
        row = self._rows([id]).get(id)
        return None if row is None else (row["kind"], self._blob(row["text_hash"]).decode("utf-8"))

    # -- writing --------------------------------------------------------------------------------
    def add(self, records: Sequence[NewRecord]) -> None:
        """Add or replace ``records`` in one transaction: all or nothing, idempotent."""
        batch = sorted((Prepared(r) for r in records), key=lambda p: p.rec.id)
        if not batch:
            return
        check_batch(batch, self._stored)
        outside = self._put_documents(batch)
        ids = {p.rec.id for p in batch}
        garbage: set[str] = set()
        now = iso(datetime.now(UTC))
        with self._write("add", content=any(p.rec.kind != "answer" for p in batch)) as db:
            olds = {r["id"]: r for r in db.execute(self._sql(f"SELECT {COLUMNS} FROM {{s}}.lib_records WHERE id = ANY(%s) "
                                                             "ORDER BY id FOR UPDATE"), (sorted(ids),))}
            rows: builtins.list[tuple[Any, ...]] = []
            blobs: dict[str, bytes] = {}
            changed: builtins.list[str] = []
            blobs.update(dict.fromkeys(outside, b""))  # their bytes are in the document store
            for prep in batch:
                old = olds.get(prep.rec.id)
                created = iso(prep.rec.created) if prep.rec.created else (old["created"] if old else now)
                row = prep.row(created)
                if old is not None and tuple(old.values()) == row:
                    continue
                if old is not None and prep.rec.created is None:
                    row = prep.row(now)
                for data, digest in ((prep.rec.data, prep.content_hash), (prep.text_bytes, prep.text_hash)):
                    if data is not None:
                        blobs.setdefault(digest, data)
                if old is not None:
                    garbage.update((old["content_hash"], old["text_hash"]))
                    if (old["content_hash"], old["text_hash"]) != (prep.content_hash, prep.text_hash):
                        changed.append(prep.rec.id)
                rows.append(row)
            with db.cursor() as cur:
                cur.executemany(self._sql("INSERT INTO {s}.lib_blobs VALUES (%s, %s) ON CONFLICT DO NOTHING"),
                                sorted(blobs.items()))
                cur.executemany(self._sql(_UPSERT), rows)
            garbage.update(self._drop_stale(db, changed, ids, batch))
        self._collect(garbage)

    def _put_documents(self, batch: Sequence[Prepared]) -> set[str]:
        """The documents' contents put in the document store (before the transaction); their digests."""
        if self.documents is None:
            return set()
        put = {p.content_hash: p.rec.data for p in batch if p.rec.kind == "document"}
        for digest, data in sorted(put.items()):
            self.documents.put(digest, data)
        return set(put) - {_EMPTY}

    def _drop_stale(self, db: Any, changed: list[str], ids: set[str], batch: Sequence[Prepared]) -> set[str]:
        """Delete the descendants of changed records that the batch does not re-add."""
        stale: set[str] = set()
        for root in changed:
            rows = db.execute(self._sql(f"{_SUBTREE} SELECT id FROM sub WHERE id <> %s"), (root, root)).fetchall()
            stale.update(r["id"] for r in rows if r["id"] not in ids)
        if not stale:
            return set()
        for prep in batch:
            if prep.rec.parent_id in stale:
                raise InputError(f"record {prep.rec.id}: its parent {prep.rec.parent_id} is outdated by a changed "
                                 "ancestor; add the parent again in the same batch")
        gone = db.execute(self._sql("DELETE FROM {s}.lib_records WHERE id = ANY(%s) RETURNING content_hash, text_hash"),
                          (sorted(stale),)).fetchall()
        return {d for r in gone for d in (r["content_hash"], r["text_hash"])}

    def remove(self, id: str) -> int:
        """Remove ``id`` and its descendants, then blobs nobody uses; returns the count removed."""
        with self._write("remove") as db:
            rows = db.execute(self._sql(f"{_SUBTREE} DELETE FROM {{s}}.lib_records WHERE id IN (SELECT id FROM sub) "
                                        "RETURNING content_hash, text_hash"), (id,)).fetchall()
            if not rows:
                raise NotFound(f"librarian record not found: {id}")
        self._collect(d for r in rows for d in (r["content_hash"], r["text_hash"]))
        return len(rows)

    # -- completion records ---------------------------------------------------------------------
    def mark_complete(self, ids: Sequence[str]) -> None:
        """Record that documents ``ids`` are loaded in every store (written last)."""
        with self._write("completion") as db:
            db.execute(self._sql("INSERT INTO {s}.lib_completions SELECT id, content_hash, %s FROM {s}.lib_records "
                                 "WHERE kind = 'document' AND id = ANY(%s) ORDER BY id ON CONFLICT (document) DO UPDATE "
                                 "SET content_hash = EXCLUDED.content_hash, completed = EXCLUDED.completed"),
                       (iso(datetime.now(UTC)), sorted(set(ids))))

    def clear_complete(self, id: str) -> None:
        """Forget that document ``id`` is complete (before changing any of its stores)."""
        with self._write("completion") as db:
            db.execute(self._sql("DELETE FROM {s}.lib_completions WHERE document = %s"), (id,))

    def is_complete(self, id: str) -> bool:
        """Whether document ``id`` has a completion record for its current content."""
        return bool(self._q(_CURRENT + " AND c.document = %s", (id,)))

    def complete_documents(self) -> set[str]:
        """The documents with a completion record for their current content."""
        return {r["document"] for r in self._q(_CURRENT)}

    # -- reading --------------------------------------------------------------------------------
    def get(self, id: str) -> Record:
        """The record ``id``; :class:`NotFound` if absent."""
        return to_record(self._row(id))  # type: ignore[arg-type]

    def exists(self, id: str) -> bool:
        """Whether record ``id`` is stored."""
        return bool(self._q("SELECT 1 FROM {s}.lib_records WHERE id = %s", (id,)))

    def content(self, id: str) -> bytes:
        """The raw bytes of record ``id``; :class:`NotFound` if absent."""
        return self._blob(self._row(id)["content_hash"])

    def text(self, id: str) -> str:
        """The text of record ``id``; :class:`NotFound` if absent."""
        return self._blob(self._row(id)["text_hash"]).decode("utf-8")

    def texts(self, ids: Iterable[str], *, missing_ok: bool = False) -> dict[str, str]:
        """The texts of many records in one query, in the order asked."""
        wanted = list(dict.fromkeys(ids))
        rows = self._q("SELECT r.id, r.text_hash, b.data FROM {s}.lib_records r JOIN {s}.lib_blobs b ON b.digest = r.text_hash "
                       "WHERE r.id = ANY(%s)", (wanted,))
        found = {r["id"]: self._bytes(r["text_hash"], bytes(r["data"])).decode("utf-8") for r in rows}
        missing = [i for i in wanted if i not in found]
        if missing and not missing_ok:
            raise NotFound(f"librarian records not found: {', '.join(missing)}")
        return {i: found[i] for i in wanted if i in found}

    def damaged_blobs(self) -> builtins.list[tuple[str, str, Path, str]]:
        """None can be: the blobs are rows the records reference by foreign key."""
        return []

    def list(self, kind: RecordKind | None = None, parent: str | None = None) -> builtins.list[Record]:
        """Records of ``kind`` and/or under ``parent``: by number under a parent, else oldest first."""
        if kind is not None and kind not in PARENT_KINDS:
            raise InputError(f"unknown record kind {kind!r}; use one of {', '.join(sorted(PARENT_KINDS))}")
        order = "number, id" if parent is not None else "created, id"
        rows = self._q(f"SELECT {COLUMNS} FROM {{s}}.lib_records WHERE (%s::text IS NULL OR kind = %s) AND "
                       f"(%s::text IS NULL OR parent_id = %s) ORDER BY {order}", (kind, kind, parent, parent))
        return [to_record(r) for r in rows]  # type: ignore[arg-type]

    def children(self, id: str) -> builtins.list[Record]:
        """The direct children of ``id`` by number; :class:`NotFound` if ``id`` is absent."""
        if not self.exists(id):
            raise NotFound(f"librarian record not found: {id}")
        return self.list(parent=id)

    def close(self) -> None:
        """Close the connection; idempotent."""
        with self._lock:
            self._link.close()
            if self.documents is not None:
                self.documents.close()
