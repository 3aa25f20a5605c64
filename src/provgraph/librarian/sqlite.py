"""The embedded librarian: SQLite metadata plus content-addressed blobs.

    <dir>/librarian.sqlite3     one row per record (WAL mode); small blobs in its table ``blobs``
    <dir>/blobs/ab/cdef…        larger content and text bytes, named by SHA-256, stored once

A record's content and its text are both blobs; when the text is the content decoded as
UTF-8 (pages, chunks, answers, text documents) they are the same blob. Writers serialise on
SQLite's write lock (``BEGIN IMMEDIATE``), and blob files are written and deleted only while
it is held, so a blob is never deleted under a record that another process is adding.
Blob files are durable before ``add`` returns (fsynced, renamed, folder fsynced); a damaged one is
reported (``damaged_blobs``, ``provgraph check``), never served.
"""

from __future__ import annotations

import builtins
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from provgraph.errors import NO_SPACE_ADVICE, InputError, NotFound, StoreError, StoreUnavailable, out_of_space
from provgraph.librarian import completions
from provgraph.librarian.base import PARENT_KINDS, NewRecord, Record, RecordKind
from provgraph.librarian.blobs import INLINE_LIMIT, BlobStore
from provgraph.librarian.rows import COLUMNS, MMAP_BYTES, SCHEMA, SCHEMA_VERSION, UPSERT, Prepared, check_batch, iso, to_record

__all__ = ["SqliteLibrarian", "DB_NAME"]

DB_NAME = "librarian.sqlite3"
_SUBTREE = (
    "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT r.id FROM records r JOIN sub ON r.parent_id = sub.id)"
)
_BATCH = 500  # ids per IN (…) query, below SQLite's variable limit


class SqliteLibrarian:
    """The embedded librarian in folder ``path`` (created when missing). Thread-safe."""

    def __init__(self, path: Path, *, inline_limit: int = INLINE_LIMIT) -> None:
        self.path = Path(path)
        self._blobs = BlobStore(self.path / "blobs", self._conn, inline_limit=inline_limit)
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self.generation = 0  # bumped by every write transaction; derived indexes compare against it
        self.content_generation = 0  # the same, except for writes of answer records only (never indexed)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path / DB_NAME, isolation_level=None, check_same_thread=False, timeout=10.0)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"librarian: cannot open {self.path}: {exc}") from exc
        db.row_factory = sqlite3.Row
        self._db = db
        try:
            self._open(db)
        except StoreError as exc:
            db.close()
            self._db = None
            if isinstance(exc, StoreUnavailable) or exc.__cause__ is None:
                raise
            if out_of_space(exc.__cause__):  # a backup would not help, and restoring one needs space too
                raise StoreError(f"librarian: cannot open {self.path / DB_NAME}: {NO_SPACE_ADVICE}") from exc
            raise StoreError(f"librarian: cannot open {self.path / DB_NAME}: {str(exc).rsplit(': ', 1)[-1]}: restore a"
                             " backup (provgraph restore FILE); nothing was changed") from exc

    def _open(self, db: sqlite3.Connection) -> None:
        with self._errors("open"):
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a completion record must never outlive a power cut
            db.execute("PRAGMA foreign_keys=ON")
            db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")  # reads from the OS's page cache, not copied in by read()
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"librarian: {self.path} was written by a newer provgraph (schema {version})")
            db.executescript(SCHEMA)
            if version == 1:
                db.execute(completions.ADOPT)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    # -- plumbing -------------------------------------------------------------------------------
    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreUnavailable(f"librarian: {self.path} is busy ({doing}): {exc}; try again") from exc
            advice = f": {NO_SPACE_ADVICE}" if out_of_space(exc) else ""
            raise StoreError(f"librarian: {doing} failed in {self.path}: {exc}{advice}") from exc
        except sqlite3.DatabaseError as exc:
            advice = ": restore a backup (provgraph restore FILE)" if "malformed" in str(exc) else ""
            raise StoreError(f"librarian: {doing} failed in {self.path / DB_NAME}: {exc}{advice}") from exc
        except OSError as exc:  # blob files: a full disk, a read-only folder
            raise StoreError(f"librarian: {doing} failed in {self.path}: {exc.strerror or exc}") from exc

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"librarian: {self.path} is closed")
        return self._db

    @contextmanager
    def _write(self, doing: str, *, content: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction holding SQLite's write lock; rolled back on any error."""
        with self._lock, self._errors(doing):
            db = self._conn()
            self.generation += 1
            self.content_generation += content
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    try:
                        db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # SQLite rolled back already (a full disk): report the original failure
                raise

    def _collect(self, digests: Iterable[str]) -> None:
        """Delete the blobs among ``digests`` that no record references any more."""
        pending = set(digests)
        if not pending:
            return
        with self._write("blob clean-up") as db:
            for digest in pending:
                used = db.execute(
                    "SELECT 1 FROM records WHERE content_hash = ? OR text_hash = ? LIMIT 1", (digest, digest)
                ).fetchone()
                if used is None:
                    self._blobs.delete(digest)

    @staticmethod
    def _rows(db: sqlite3.Connection, ids: Sequence[str]) -> dict[str, sqlite3.Row]:
        """The stored rows of many ids, in as few queries as SQLite's parameter limit allows."""
        found: dict[str, sqlite3.Row] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ", ".join("?" * len(part))
            for row in db.execute(f"SELECT {COLUMNS} FROM records WHERE id IN ({marks})", part):
                found[row["id"]] = row
        return found

    def _row(self, id: str) -> sqlite3.Row:
        with self._lock, self._errors("lookup"):
            row: sqlite3.Row | None = self._conn().execute(
                f"SELECT {COLUMNS} FROM records WHERE id = ?", (id,)
            ).fetchone()
        if row is None:
            raise NotFound(f"librarian record not found: {id}")
        return row

    # -- writing --------------------------------------------------------------------------------
    def _stored(self, id: str) -> tuple[str, str] | None:
        """A stored record's kind and text (None when absent)."""
        try:
            row = self._row(id)
        except NotFound:
            return None
        return row["kind"], self._blobs.get(row["text_hash"]).decode("utf-8")

    def add(self, records: Sequence[NewRecord]) -> None:
        """Add or replace ``records`` in one transaction: all or nothing, idempotent.

        See :meth:`provgraph.librarian.base.Librarian.add` for the rules.
        """
        batch = [Prepared(r) for r in records]
        if not batch:
            return
        check_batch(batch, self._stored)
        ids = {p.rec.id for p in batch}
        written: list[str] = []
        garbage: set[str] = set()
        now = iso(datetime.now(UTC))
        with self._write("add", content=any(p.rec.kind != "answer" for p in batch)) as db:
            try:
                changed: list[str] = []
                rows: list[tuple[object, ...]] = []
                blobs: dict[str, bytes] = {}  # content and text are often one blob
                olds = self._rows(db, [p.rec.id for p in batch])
                for prep in batch:
                    old = olds.get(prep.rec.id)
                    created = iso(prep.rec.created) if prep.rec.created else (old["created"] if old else now)
                    row = prep.row(created)
                    if old is not None and tuple(old) == row:
                        continue  # identical: nothing to do
                    if old is not None and prep.rec.created is None:
                        row = prep.row(now)  # a new version of the record
                    for data, digest in ((prep.rec.data, prep.content_hash), (prep.text_bytes, prep.text_hash)):
                        if data is not None:
                            blobs.setdefault(digest, data)
                    if old is not None:
                        garbage.update((old["content_hash"], old["text_hash"]))
                        if (old["content_hash"], old["text_hash"]) != (prep.content_hash, prep.text_hash):
                            changed.append(prep.rec.id)
                    rows.append(row)
                written += self._blobs.put_many(blobs)
                db.executemany(UPSERT, rows)
                garbage.update(self._drop_stale(db, changed, ids, batch))
            except BaseException:
                for digest in written:  # files new in this call: no committed record uses them
                    self._blobs.delete(digest)
                raise
        self._collect(garbage)

    def _drop_stale(
        self, db: sqlite3.Connection, changed: list[str], ids: set[str], batch: Sequence[Prepared]
    ) -> set[str]:
        """Delete the descendants of changed records that the batch does not re-add."""
        stale: set[str] = set()
        for root in changed:
            rows = db.execute(f"{_SUBTREE} SELECT id FROM sub WHERE id != ?", (root, root)).fetchall()
            stale.update(r[0] for r in rows if r[0] not in ids)
        if not stale:
            return set()
        for prep in batch:
            if prep.rec.parent_id in stale:
                raise InputError(
                    f"record {prep.rec.id}: its parent {prep.rec.parent_id} is outdated by a changed ancestor;"
                    " add the parent again in the same batch"
                )
        digests: set[str] = set()
        stale_list = sorted(stale)
        for i in range(0, len(stale_list), _BATCH):
            part = stale_list[i : i + _BATCH]
            marks = ", ".join("?" * len(part))
            for row in db.execute(f"SELECT content_hash, text_hash FROM records WHERE id IN ({marks})", part):
                digests.update(row)
            db.execute(f"DELETE FROM records WHERE id IN ({marks})", part)
        return digests

    def remove(self, id: str) -> int:
        """Remove ``id`` and its descendants, then blobs nobody uses; returns the count removed."""
        with self._write("remove") as db:
            rows = db.execute(
                f"{_SUBTREE} SELECT id, content_hash, text_hash FROM records WHERE id IN (SELECT id FROM sub)", (id,)
            ).fetchall()
            if not rows:
                raise NotFound(f"librarian record not found: {id}")
            db.execute(f"{_SUBTREE} DELETE FROM records WHERE id IN (SELECT id FROM sub)", (id,))
        self._collect(d for row in rows for d in (row["content_hash"], row["text_hash"]))
        return len(rows)

    # -- completion records ---------------------------------------------------------------------
    def mark_complete(self, ids: Sequence[str]) -> None:
        """Record that documents ``ids`` are loaded in every store (written last, durably)."""
        with self._write("completion") as db:
            completions.mark(db, ids, iso(datetime.now(UTC)))

    def clear_complete(self, id: str) -> None:
        """Forget that document ``id`` is complete (before changing any of its stores)."""
        with self._write("completion") as db:
            completions.clear(db, id)

    def is_complete(self, id: str) -> bool:
        """Whether document ``id`` has a completion record for its current content."""
        with self._lock, self._errors("lookup"):
            return bool(completions.complete(self._conn(), id))

    def complete_documents(self) -> set[str]:
        """The documents with a completion record for their current content."""
        with self._lock, self._errors("lookup"):
            return completions.complete(self._conn())

    # -- reading --------------------------------------------------------------------------------
    def get(self, id: str) -> Record:
        """The record ``id``; :class:`NotFound` if absent."""
        return to_record(self._row(id))

    def exists(self, id: str) -> bool:
        """Whether record ``id`` is stored."""
        with self._lock, self._errors("lookup"):
            return self._conn().execute("SELECT 1 FROM records WHERE id = ?", (id,)).fetchone() is not None

    def content(self, id: str) -> bytes:
        """The raw bytes of record ``id``; :class:`NotFound` if absent."""
        return self._blobs.get(self._row(id)["content_hash"])

    def text(self, id: str) -> str:
        """The text of record ``id``; :class:`NotFound` if absent."""
        return self._blobs.get(self._row(id)["text_hash"]).decode("utf-8")

    def texts(self, ids: Iterable[str], *, missing_ok: bool = False) -> dict[str, str]:
        """The texts of many records (one query per 500 ids, inline blobs joined in), in the order asked."""
        wanted = list(dict.fromkeys(ids))
        digests: dict[str, str] = {}
        cache: dict[str, str] = {}
        with self._lock, self._errors("lookup"):
            db = self._conn()
            for i in range(0, len(wanted), _BATCH):
                part = wanted[i : i + _BATCH]
                query = (f"SELECT r.id, r.text_hash, b.data FROM records r LEFT JOIN blobs b ON b.digest = r.text_hash"
                         f" WHERE r.id IN ({', '.join('?' * len(part))})")
                for rid, digest, data in db.execute(query, part):
                    digests[rid] = digest
                    if data is not None and digest not in cache:
                        cache[digest] = bytes(data).decode("utf-8")
            missing = [i for i in wanted if i not in digests]
            if missing and not missing_ok:
                raise NotFound(f"librarian records not found: {', '.join(missing)}")
            out: dict[str, str] = {}
            for rid in wanted:
                digest = digests.get(rid)
                if digest is not None:
                    if digest not in cache:  # a blob file (larger than the inline limit)
                        cache[digest] = self._blobs.get(digest).decode("utf-8")
                    out[rid] = cache[digest]
        return out

    def damaged_blobs(self) -> builtins.list[tuple[str, str, Path, str]]:
        """Records whose bytes or text file is missing or damaged: (id, kind, file, what is wrong)."""
        query = ("SELECT id, kind, h FROM (SELECT id, kind, content_hash AS h FROM records UNION SELECT id, kind,"
                 " text_hash FROM records) WHERE h NOT IN (SELECT digest FROM blobs) ORDER BY id")
        with self._lock, self._errors("blob check"):
            rows = self._conn().execute(query).fetchall()
            found = {h: self._blobs.damage(h) for h in {r[2] for r in rows}}
        return [(r[0], r[1], self._blobs.path(r[2]), found[r[2]]) for r in rows if found[r[2]]]  # type: ignore[misc]

    def list(self, kind: RecordKind | None = None, parent: str | None = None) -> builtins.list[Record]:
        """Records of ``kind`` and/or under ``parent``: by number under a parent, else oldest first."""
        clauses: builtins.list[str] = []
        args: builtins.list[str] = []
        if kind is not None:
            if kind not in PARENT_KINDS:
                raise InputError(f"unknown record kind {kind!r}; use one of {', '.join(sorted(PARENT_KINDS))}")
            clauses.append("kind = ?")
            args.append(kind)
        if parent is not None:
            clauses.append("parent_id = ?")
            args.append(parent)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        order = "number, id" if parent is not None else "created, id"
        with self._lock, self._errors("list"):
            rows = self._conn().execute(f"SELECT {COLUMNS} FROM records{where} ORDER BY {order}", args).fetchall()
        return [to_record(r) for r in rows]

    def children(self, id: str) -> builtins.list[Record]:
        """The direct children of ``id`` by number; :class:`NotFound` if ``id`` is absent."""
        if not self.exists(id):
            raise NotFound(f"librarian record not found: {id}")
        return self.list(parent=id)

    # -- lifetime -------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the database; later calls raise :class:`StoreError`. Idempotent."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> SqliteLibrarian:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
