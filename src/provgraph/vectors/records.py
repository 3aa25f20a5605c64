"""The records of one vector index: SQLite on disk, mirrored in memory for exact search.

``records.sqlite`` holds ``meta`` (model, dimension, generation, next_key, ann_generation, ann_digest),
``records`` (integer key, id, payload JSON, float32 vector) and ``appends`` (key, field, JSON list of
items appended to that payload list field, in rowid order; created by the first append). An upsert that only appends to a record's
payload lists (same vector, same other fields: an entity named by new chunks) writes just the new items,
so a batch costs what it adds, not the length of the lists; once a record's appended items outnumber
those in its row, the row is rewritten whole and its appends dropped. Every write is one transaction and
bumps ``generation``, which derived structures (the HNSW graph) compare against to know whether
they are current. In memory: a float32 matrix, keys, ids and payloads by row (deleting a row
moves the last row into its place), and postings ``field -> value -> keys`` of scalar payload
values and list items, so filters find their records without scanning.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from provgraph.errors import IndexError_, failure_advice, out_of_space
from provgraph.vectors.base import matches
from provgraph.vectors.payloads import appended, copy_flat, copy_payload, dump, extended, is_flat, list_items
from provgraph.vectors.postings import Postings
from provgraph.vectors.transaction import Transaction

__all__ = ["RecordTable", "Written"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, payload TEXT NOT NULL, vector BLOB NOT NULL
);
"""

_APPENDS = """
CREATE TABLE IF NOT EXISTS appends (key INTEGER NOT NULL, field TEXT NOT NULL, items TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS appends_key ON appends (key);
"""

_FOLD_MIN = 64
"""A record's appended items are folded into its row once they outnumber its row's items and this."""


class Written:
    """What an upsert did to vectors: the keys given a new vector (with their batch ``order``) and
    the ``replaced`` ones among them (an upsert that keeps a record's vector lists neither)."""

    __slots__ = ("keys", "replaced", "order")

    def __init__(self, keys: list[int], replaced: list[int], order: list[int]) -> None:
        self.keys = keys
        self.replaced = replaced
        self.order = order


class RecordTable:
    """Ids, payloads and unit vectors of one index, durable in SQLite. Not thread-safe by itself."""

    def __init__(self, folder: Path, *, model: str, dimension: int) -> None:
        if dimension <= 0:
            raise IndexError_(f"vector index {folder}: dimension must be positive, got {dimension}")
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        try:
            self._db: sqlite3.Connection | None = sqlite3.connect(
                folder / "records.sqlite", check_same_thread=False, isolation_level=None
            )
            self._db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;" + _SCHEMA)
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.Error as exc:
            raise IndexError_(
                f"vector index file {folder / 'records.sqlite'} cannot be read ({exc}): " + failure_advice(
                    exc, "restore a backup, or move it aside and run: provgraph check --repair")
            ) from exc
        if not meta:
            meta = {"model": model, "dimension": str(dimension), "generation": "0", "next_key": "1"}
            with self._transaction() as tx:
                tx.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        elif meta["model"] != model or int(meta["dimension"]) != dimension:
            self._db.close()
            raise IndexError_(
                f"vector index {folder} was built with embedding model {meta['model']} ({meta['dimension']} dims),"
                f" not {model} ({dimension} dims): use the same embedder, or delete the folder and re-index"
            )
        self.model: str = meta["model"]
        self.dimension = int(meta["dimension"])
        self.generation = int(meta["generation"])
        self.ann_generation = int(meta.get("ann_generation", -1))
        self.ann_digest: str = meta.get("ann_digest", "")
        self._next_key = int(meta["next_key"])
        self._flat: dict[int, bool] = {}  # row -> is_flat(its payload), while ``generation`` is _flat_of
        self._flat_of = -1
        try:
            self._load()
        except (sqlite3.Error, ValueError, KeyError) as exc:
            self._db.close()
            raise IndexError_(
                f"vector index file {folder / 'records.sqlite'} {'cannot be read' if out_of_space(exc) else 'is damaged'} "
                f"({exc}): " + failure_advice(exc, "restore a backup, or move it aside and run: provgraph check --repair")
            ) from exc

    # -- reading -----------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of records."""
        return self._n

    @property
    def matrix(self) -> np.ndarray:
        """The unit vectors, one row per record (a view)."""
        return self._matrix[: self._n]

    @property
    def keys(self) -> np.ndarray:
        """The integer keys, one per row (a view)."""
        return self._keys[: self._n]

    def row_of_id(self, record_id: str) -> int | None:
        """The row holding ``record_id``."""
        return self._row_of_id.get(record_id)

    def row_of_key(self, key: int) -> int | None:
        """The row holding ``key``."""
        return self._row_of_key.get(key)

    def fields(self, row: int, names: Collection[str]) -> dict[str, Any]:
        """Copies of the named fields of ``row``'s payload (those it has)."""
        payload = self._payloads[row]
        return {name: copy_payload(payload[name]) for name in names if name in payload}

    def record(self, row: int) -> tuple[str, dict[str, Any]]:
        """Id and payload of ``row`` (the payload is a copy; a row's shape is checked once per generation)."""
        payload = self._payloads[row]
        if self._flat_of != self.generation:
            self._flat.clear()
            self._flat_of = self.generation
        flat = self._flat.get(row)
        if flat is None:
            flat = self._flat[row] = is_flat(payload)
        return self._ids[row], copy_flat(payload) if flat else copy_payload(payload)

    def payload_matches(self, row: int, where: Mapping[str, Any] | None) -> bool:
        """Whether ``row``'s payload satisfies ``where``."""
        return matches(self._payloads[row], where)

    def matching_rows(self, where: Mapping[str, Any]) -> list[int]:
        """Rows whose payload satisfies ``where``, in row order (postings, else a scan)."""
        payloads = self._payloads
        candidates = self._candidate_keys(where)
        if candidates is None:
            return [r for r in range(self._n) if matches(payloads[r], where)]
        rows = (self._row_of_key[k] for k in candidates)
        return sorted(r for r in rows if matches(payloads[r], where))

    def candidate_count(self, where: Mapping[str, Any]) -> int | None:
        """An upper bound on the records matching ``where`` from postings, or None if unknown."""
        candidates = self._candidate_keys(where)
        return None if candidates is None else len(candidates)

    def _candidate_keys(self, where: Mapping[str, Any]) -> set[int] | None:
        """Keys that may match (a superset), or None when postings cannot tell."""
        sets: list[set[int]] = []
        for field, wanted in where.items():
            values = wanted if isinstance(wanted, list) else [wanted]
            for value in values:
                if not isinstance(value, Hashable):
                    return None
                sets.append(self._postings.keys(field, value))
        if not sets:
            return None
        sets.sort(key=len)
        return set(sets[0]).intersection(*sets[1:])

    # -- writing -----------------------------------------------------------------------------------

    def upsert(self, ids: Sequence[str], matrix: np.ndarray, payloads: Sequence[dict[str, Any]],
               extend: Collection[str] = ()) -> Written:
        """Write ``ids`` (last of repeated ids wins) with unit vectors ``matrix``; one transaction.

        ``extend`` names list fields whose given items are added to a stored record's list (those it
        holds already are skipped) instead of replacing it: the cost is that of the new items.
        """
        last = {record_id: i for i, record_id in enumerate(ids)}
        order = sorted(last.values())
        extensions: dict[int, dict[str, list[Any]] | None] = {}  # batch index -> its new items when that is all
        if extend:
            payloads = list(payloads)
            for i in order:
                row = self._row_of_id.get(ids[i])
                if row is not None:
                    key = int(self._keys[row])
                    payloads[i], extensions[i] = extended(self._payloads[row], payloads[i], extend,
                                                          lambda field, item: self._postings.holds(field, item, key))
        moved: list[int] = []  # batch indices given a new vector, with their keys
        keys: list[int] = []
        replaced: list[int] = []
        rows: list[tuple[int, str, str, bytes]] = []
        appends: list[tuple[int, str, str]] = []
        counts: dict[int, int] = {}  # key -> appended items after this write
        assigned: list[int] = []  # the key of each of ``order``
        tails: dict[int, dict[str, list[Any]]] = {}  # batch index -> what it appends to its record's lists
        next_key = self._next_key
        for i in order:
            row = self._row_of_id.get(ids[i])
            if row is None:
                key, next_key = next_key, next_key + 1
                assigned.append(key)
            else:
                key = int(self._keys[row])
                assigned.append(key)
                same_vector = bool(np.array_equal(self._matrix[row], matrix[i]))
                if not same_vector:
                    tail = None
                elif i in extensions:
                    tail = extensions[i]
                else:
                    tail = appended(self._payloads[row], payloads[i])
                if tail is not None:
                    tails[i] = tail
                    count = self._appends.get(key, 0) + sum(map(len, tail.values()))
                    if count <= max(_FOLD_MIN, list_items(payloads[i]) - count):
                        appends += [(key, field, dump(items, ids[i])) for field, items in tail.items()]
                        counts[key] = count
                        continue
                counts[key] = 0
                if same_vector:
                    rows.append((key, ids[i], dump(payloads[i], ids[i]), matrix[i].tobytes()))
                    continue
                replaced.append(key)
            moved.append(i)
            keys.append(key)
            rows.append((key, ids[i], dump(payloads[i], ids[i]), matrix[i].tobytes()))
        folded = [(k,) for k, c in counts.items() if not c and self._appends.get(k)]
        with self._transaction() as tx:
            tx.executemany("INSERT OR REPLACE INTO records (key, id, payload, vector) VALUES (?, ?, ?, ?)", rows)
            if folded:
                tx.executemany("DELETE FROM appends WHERE key = ?", folded)
            if appends:
                for statement in _APPENDS.strip().splitlines():
                    tx.execute(statement)
                tx.executemany("INSERT INTO appends (key, field, items) VALUES (?, ?, ?)", appends)
            generation = self._bump(tx, next_key=next_key)
        self.generation, self._next_key = generation, next_key
        for key, count in counts.items():
            if count:
                self._appends[key] = count
            else:
                self._appends.pop(key, None)
        for key, i in zip(assigned, order):
            tail = tails.get(i)
            if tail is None:
                self._put(ids[i], key, matrix[i], payloads[i])
            else:  # the same vector and fields: extend the lists in place
                stored = self._payloads[self._row_of_id[ids[i]]]
                for field, items in tail.items():
                    stored[field].extend(copy_payload(items))
                self._postings.post(key, tail)
        return Written(keys, replaced, moved)

    def remove(self, ids: Sequence[str]) -> list[int]:
        """Remove the given (present) ids; one transaction. Returns their keys."""
        keys = [int(self._keys[self._row_of_id[i]]) for i in ids]
        if not keys:
            return keys
        with self._transaction() as tx:
            tx.executemany("DELETE FROM records WHERE key = ?", [(k,) for k in keys])
            appended = [(k,) for k in keys if self._appends.get(k)]
            if appended:
                tx.executemany("DELETE FROM appends WHERE key = ?", appended)
            generation = self._bump(tx)
        self.generation = generation
        for record_id, key in zip(ids, keys):
            self._appends.pop(key, None)
            self._drop(record_id, key)
        return keys

    def set_ann_generation(self, generation: int, digest: str = "") -> None:
        """Record that the saved HNSW graph (its file's SHA-256 ``digest``) matches ``generation``."""
        with self._transaction() as tx:
            tx.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                           [("ann_generation", str(generation)), ("ann_digest", digest)])
        self.ann_generation, self.ann_digest = generation, digest

    def close(self) -> None:
        """Close the database; idempotent."""
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._db is None

    # -- internals ---------------------------------------------------------------------------------

    def _load(self) -> None:
        assert self._db is not None
        rows = self._db.execute("SELECT key, id, payload, vector FROM records ORDER BY key").fetchall()
        n = self._n = len(rows)
        self._matrix = np.zeros((max(16, n), self.dimension), dtype=np.float32)
        if n:
            self._matrix[:n] = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(n, -1)
        self._keys = np.zeros(len(self._matrix), dtype=np.int64)
        self._keys[:n] = [r[0] for r in rows]
        self._ids: list[str] = [r[1] for r in rows]
        self._payloads: list[dict[str, Any]] = [json.loads(r[2]) for r in rows]
        self._row_of_id = {record_id: i for i, record_id in enumerate(self._ids)}
        self._row_of_key = {int(r[0]): i for i, r in enumerate(rows)}
        self._appends: dict[int, int] = {}  # key -> items in its rows of ``appends``
        has_appends = self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'appends'").fetchone()
        appended = self._db.execute("SELECT key, field, items FROM appends ORDER BY rowid") if has_appends else ()
        for key, field, items in appended:
            tail = json.loads(items)
            target = self._payloads[self._row_of_key[key]].get(field)
            if not isinstance(target, list) or not isinstance(tail, list):
                raise ValueError(f"appended items of record key {key} do not extend a list field {field!r}")
            target.extend(tail)
            self._appends[key] = self._appends.get(key, 0) + len(tail)
        self._postings = Postings()
        for key, payload in zip(self._keys[:n].tolist(), self._payloads):
            self._postings.post(key, payload)

    def _put(self, record_id: str, key: int, vector: np.ndarray, payload: dict[str, Any]) -> None:
        row = self._row_of_id.get(record_id)
        if row is None:
            if self._n == len(self._matrix):
                self._matrix = np.concatenate([self._matrix, np.zeros_like(self._matrix)])
                self._keys = np.concatenate([self._keys, np.zeros_like(self._keys)])
            row = self._n
            self._n += 1
            self._ids.append(record_id)
            self._payloads.append({})
            self._row_of_id[record_id] = row
            self._row_of_key[key] = row
            self._keys[row] = key
            self._postings.post(key, payload)
        else:  # only the postings that changed: a payload list that grows is not re-posted whole
            self._postings.repost(key, self._payloads[row], payload)
        self._matrix[row] = vector
        self._payloads[row] = copy_payload(dict(payload))

    def _drop(self, record_id: str, key: int) -> None:
        row = self._row_of_id.pop(record_id)
        del self._row_of_key[key]
        self._postings.post(key, self._payloads[row], remove=True)
        last = self._n - 1
        if row != last:
            moved_id, moved_key = self._ids[last], int(self._keys[last])
            self._matrix[row] = self._matrix[last]
            self._keys[row] = moved_key
            self._ids[row] = moved_id
            self._payloads[row] = self._payloads[last]
            self._row_of_id[moved_id] = row
            self._row_of_key[moved_key] = row
        self._ids.pop()
        self._payloads.pop()
        self._n = last

    def _transaction(self) -> Transaction:
        if self._db is None:
            raise IndexError_(f"vector index {self.folder} is closed")
        return Transaction(self._db, self.folder)

    def _bump(self, tx: sqlite3.Connection, *, next_key: int | None = None) -> int:
        """Write the next generation (and key counter) in ``tx``; applied in memory after commit."""
        generation = self.generation + 1
        tx.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(generation),))
        if next_key is not None:
            tx.execute("INSERT OR REPLACE INTO meta VALUES ('next_key', ?)", (str(next_key),))
        return generation
