"""Backup and restore of a whole collection: one versioned tar archive.

Archive members::

    manifest.json                   format, version, provgraph version, counts, index models, settings
    librarian/librarian.sqlite3     a snapshot (SQLite backup API, taken under the write lock)
    librarian/blobs/ab/cdef…        the content-addressed blobs of that snapshot
    store.nq                        every quad of every graph (N-Quads, triple terms included)
    vectors/NAME/records.sqlite     each vector index's records (the HNSW graph is rebuilt)

Taken in that order while the collection may be in use: the librarian snapshot holds the
completion records, and a document is complete only after its quads and vectors are durable, so
every complete document of the snapshot is whole in the later parts. Documents in flight come
back incomplete; the next ``load`` redoes them. Restore builds the collection in a staging folder
and moves it into place; it refuses to replace a non-empty collection unless forced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pyoxigraph as ox

from provgraph import __version__
from provgraph.errors import InputError, NotFound, StoreError, StoreUnavailable
from provgraph.layout import MARKER, MARKER_FORMAT, CollectionRef, part_files
from provgraph.librarian.sqlite import DB_NAME
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["BACKUP_FORMAT", "BACKUP_VERSION", "make_backup", "restore_backup"]

BACKUP_FORMAT = "provgraph-backup"
BACKUP_VERSION = 1
_MEMBER = re.compile(r"^(manifest\.json|store\.nq|librarian/librarian\.sqlite3|librarian/blobs/[0-9a-f]{2}/[0-9a-f]{62}"
                     r"|vectors/[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}/records\.sqlite)$")


def _snapshot_sqlite(source: Path, target: Path) -> None:
    """Copy a live SQLite database consistently (the backup API reads one snapshot)."""
    try:
        src = sqlite3.connect(source, timeout=30.0)
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
            src.close()
    except sqlite3.Error as exc:
        raise StoreError(f"backup: cannot read {source}: {exc}") from exc


def _write_lock(db_file: Path) -> sqlite3.Connection:
    """Hold ``db_file``'s write lock (writers wait; readers, such as the backup, go on)."""
    lock = sqlite3.connect(db_file, timeout=30.0, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        lock.close()
        raise StoreError(f"backup: cannot lock {db_file}: {exc}") from exc
    return lock


def _dump_store(ref: CollectionRef, out: Path) -> int:
    """Every quad to N-Quads; read-only when another process has the store open for writing."""
    try:
        store = OxigraphStore(ref.store_dir, name=str(ref))
        handle = store._store  # noqa: SLF001 - the backup dumps the backend's own snapshot
    except StoreUnavailable:
        store, handle = None, ox.Store.read_only(str(ref.store_dir))
    try:
        with out.open("wb") as fh:
            handle.dump(fh, format=ox.RdfFormat.N_QUADS)
        return len(handle)
    finally:
        if store is not None:
            store.close()


def make_backup(ref: CollectionRef, file: Path, *, settings: dict[str, object] | None = None) -> dict[str, object]:
    """Write ``file`` (replaced atomically); returns the manifest. ``settings``: those that matter, recorded."""
    if not ref.exists():
        raise NotFound(f"collection {ref} does not exist")
    for part in ("store", "librarian"):
        if not part_files(ref, part).is_file():
            raise StoreError(f"collection {ref}: {part_files(ref, part)} is missing: nothing to back up")
    file = Path(file)
    with tempfile.TemporaryDirectory(prefix=".provgraph-backup-", dir=file.parent if file.parent.is_dir() else None) as tmp:
        staging = Path(tmp)
        (staging / "librarian").mkdir()
        lock = _write_lock(ref.librarian_dir / DB_NAME)
        try:  # blobs are written and deleted only under the write lock: copy them while holding it
            _snapshot_sqlite(ref.librarian_dir / DB_NAME, staging / "librarian" / DB_NAME)
            if (ref.librarian_dir / "blobs").is_dir():
                shutil.copytree(ref.librarian_dir / "blobs", staging / "librarian" / "blobs")
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        lib = sqlite3.connect(staging / "librarian" / DB_NAME)
        documents = lib.execute("SELECT count(*) FROM records WHERE kind = 'document'").fetchone()[0]
        complete = lib.execute("SELECT count(*) FROM completions").fetchone()[0]
        lib.close()
        quads = _dump_store(ref, staging / "store.nq")
        indexes: dict[str, dict[str, object]] = {}
        for folder in sorted(p for p in ref.vectors_dir.glob("*") if (p / "records.sqlite").is_file()):
            if ".damaged-" in folder.name:
                continue
            (staging / "vectors" / folder.name).mkdir(parents=True)
            target = staging / "vectors" / folder.name / "records.sqlite"
            _snapshot_sqlite(folder / "records.sqlite", target)
            db = sqlite3.connect(target)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            count = db.execute("SELECT count(*) FROM records").fetchone()[0]
            db.execute("PRAGMA journal_mode=DELETE")
            db.close()
            indexes[folder.name] = {"model": meta.get("model"), "dimension": int(meta.get("dimension", 0)),
                                    "records": count}
        manifest: dict[str, object] = {
            "format": BACKUP_FORMAT, "version": BACKUP_VERSION, "provgraph": __version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "user": ref.user, "collection": ref.collection, "indexes": indexes, "settings": settings or {},
            "counts": {"documents": documents, "complete_documents": complete, "quads": quads,
                       "chunk_vectors": indexes.get("chunks", {}).get("records", 0),
                       "entity_vectors": indexes.get("entities", {}).get("records", 0)},
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        partial = file.with_name(f".{file.name}.{os.getpid()}.partial")
        try:
            with tarfile.open(partial, "w") as tar:
                for path in sorted(staging.rglob("*")):
                    if path.is_file() and not path.name.endswith(("-wal", "-shm")):
                        tar.add(path, arcname=path.relative_to(staging).as_posix())
            os.replace(partial, file)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise InputError(f"{file}: cannot write the backup ({exc.strerror or exc})") from exc
    return manifest


def _read_manifest(tar: tarfile.TarFile, file: Path) -> dict[str, object]:
    try:
        member = tar.extractfile("manifest.json")
        manifest = json.load(member) if member is not None else None
    except (KeyError, ValueError) as exc:
        raise InputError(f"{file}: not a provgraph backup (no readable manifest.json)") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BACKUP_FORMAT:
        raise InputError(f"{file}: not a provgraph backup")
    if not isinstance(manifest.get("version"), int) or manifest["version"] > BACKUP_VERSION:
        raise InputError(f"{file}: backup format version {manifest.get('version')} is newer than this provgraph "
                         f"reads ({BACKUP_VERSION}): upgrade provgraph")
    return manifest


def _is_empty(ref: CollectionRef) -> bool:
    if not ref.exists():
        return True
    if part_files(ref, "librarian").is_file():
        db = sqlite3.connect(f"file:{part_files(ref, 'librarian')}?mode=ro", uri=True)
        try:
            if db.execute("SELECT count(*) FROM records").fetchone()[0]:
                return False
        except sqlite3.Error:
            return False
        finally:
            db.close()
    return not any(p.is_file() for p in ref.vectors_dir.rglob("records.sqlite")) and not any(
        p.name.endswith(".sst") for p in ref.store_dir.glob("*"))


def restore_backup(file: Path, ref: CollectionRef, *, force: bool = False) -> dict[str, object]:
    """Restore ``file`` into ``ref``; returns the manifest. Nothing changes unless all of it worked."""
    file = Path(file)
    if not file.is_file():
        raise InputError(f"{file}: no such backup file")
    if not force and not _is_empty(ref):
        raise InputError(f"collection {ref} is not empty: restore into another collection (-C), or pass --force "
                         "to replace it")
    parent = ref.root.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".restore-{ref.collection}-", dir=parent))
    try:
        try:
            tar = tarfile.open(file, "r")
        except (tarfile.TarError, OSError) as exc:
            raise InputError(f"{file}: not a provgraph backup ({exc})") from exc
        with tar:
            manifest = _read_manifest(tar, file)
            for member in tar.getmembers():
                if not member.isfile() or not _MEMBER.match(member.name):
                    raise InputError(f"{file}: unexpected member {member.name!r}: not a provgraph backup")
                source = tar.extractfile(member)
                assert source is not None
                target = staging / ("_store.nq" if member.name == "store.nq" else member.name)
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("wb") as out:
                    shutil.copyfileobj(source, out)
        _build(staging, manifest, ref, file)
        if ref.exists():
            old = parent / f".replaced-{ref.collection}-{os.getpid()}"
            ref.root.rename(old)
            staging.rename(ref.root)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(ref.root)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _build(staging: Path, manifest: dict[str, object], ref: CollectionRef, file: Path) -> None:
    """Turn the extracted members into a collection folder (store loaded from N-Quads), checking counts."""
    dump = staging / "_store.nq"
    if not dump.is_file() or not (staging / "librarian" / DB_NAME).is_file():
        raise InputError(f"{file}: incomplete backup (store or librarian missing)")
    store = OxigraphStore(staging / "store", name=str(ref))
    try:
        store.import_data(dump, "nquads")
        quads = len(store)
    finally:
        store.close()
    dump.unlink()
    counts = manifest.get("counts", {})
    if isinstance(counts, dict) and counts.get("quads") != quads:
        raise InputError(f"{file}: damaged backup: {quads} quads, the manifest says {counts.get('quads')}")
    (staging / "vectors").mkdir(exist_ok=True)
    parts = ["librarian", "store", *(f"vectors/{p.name}" for p in sorted((staging / "vectors").iterdir()))]
    (staging / MARKER).write_text(json.dumps({"format": MARKER_FORMAT, "parts": parts,
                                                         "created": manifest.get("created"),
                                                         "restored_from": str(file)}, indent=1), encoding="utf-8")
