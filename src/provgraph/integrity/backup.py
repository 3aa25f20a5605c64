"""Backup and restore of a whole collection: one versioned tar archive.

Archive members::

    manifest.json                   format, version, provgraph version, counts, index models, settings
    librarian/librarian.sqlite3     a snapshot (SQLite backup API, taken under the write lock)
    librarian/blobs/ab/cdef…        the content-addressed blobs of that snapshot
    store.nq                        every quad of every graph (N-Quads, triple terms included)
    vectors/NAME/records.sqlite     each vector index's records (the HNSW graph is rebuilt)

Taken while the collection may be in use: every part is copied while the librarian's write lock
is held (cheap copies: snapshots, hard links, a RocksDB checkpoint), so the completion records of
the snapshot describe the copied store and vectors: every complete document is whole. Documents
in flight come back incomplete; the next ``load`` redoes them. The store must be open in this
process (a server backs up what it serves) or free to open; another process's store is never
read. Restore builds the collection in a staging folder and moves it into place; it refuses to
replace a non-empty collection unless forced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import tarfile
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pyoxigraph as ox

from provgraph import __version__
from provgraph.config import Settings
from provgraph.integrity.backup_checks import check_counts, check_manifest, check_member
from provgraph.errors import InputError, NotFound, StoreError, StoreUnavailable
from provgraph.layout import MARKER, MARKER_FORMAT, CollectionRef, part_files
from provgraph.librarian.sqlite import DB_NAME
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["BACKUP_FORMAT", "BACKUP_VERSION", "make_backup", "restore_backup", "settings_that_matter"]

BACKUP_FORMAT = "provgraph-backup"
BACKUP_VERSION = 1
_MEMBER = re.compile(r"^(manifest\.json|store\.nq|librarian/librarian\.sqlite3|librarian/blobs/[0-9a-f]{2}/[0-9a-f]{62}"
                     r"|vectors/[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}/records\.sqlite)$")


def settings_that_matter(settings: Settings) -> dict[str, object]:
    """The settings a backup records: those that shaped the collection's data."""
    return {"embedder": settings.embedder, "embedder_model": settings.embedder_model,
            "chunk_size": settings.chunk_size, "chunk_overlap": settings.chunk_overlap,
            "entity_base": settings.entity_base, "extractors": settings.extractors}


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


def _open_store(ref: CollectionRef, wait: float) -> OxigraphStore:
    """Open the store for the backup, waiting up to ``wait`` seconds for another process that has it."""
    deadline = time.monotonic() + max(0.0, wait)
    while True:
        try:
            return OxigraphStore(ref.store_dir, name=str(ref))
        except StoreUnavailable:
            if time.monotonic() >= deadline:
                raise StoreUnavailable(
                    f"collection {ref} is open in another provgraph process (a `load`, or `provgraph serve`), and a "
                    "backup needs a consistent copy of its store: run it again when that process has finished, pass "
                    "--wait SECONDS to wait for it, or take it through the server that has the collection open"
                ) from None
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link (or, across file systems, copy) every file under ``source`` into ``target``."""
    for path in sorted(source.rglob("*")):
        if path.is_file() and not path.name.startswith(".tmp-"):
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, dest)
            except OSError:
                shutil.copy2(path, dest)


def _freeze(ref: CollectionRef, store: OxigraphStore, staging: Path) -> dict[str, dict[str, object]]:
    """One consistent copy of every part into ``staging``, taken while writers of the librarian wait.

    Cheap, so the lock is held briefly: SQLite backup-API snapshots, hard links to the (immutable)
    blob files, and a RocksDB checkpoint (hard links to its immutable tables). A document
    complete in the librarian snapshot was whole in the store and vectors before it was marked, and
    cannot be changed or removed meanwhile (that drops its completion record first, under the lock).
    """
    (staging / "librarian").mkdir()
    lock = _write_lock(ref.librarian_dir / DB_NAME)
    try:
        _snapshot_sqlite(ref.librarian_dir / DB_NAME, staging / "librarian" / DB_NAME)
        if (ref.librarian_dir / "blobs").is_dir():
            _link_tree(ref.librarian_dir / "blobs", staging / "librarian" / "blobs")
        try:
            store.checkpoint(staging / "_checkpoint")  # RocksDB's consistent checkpoint
        except (OSError, RuntimeError) as exc:
            raise StoreError(f"backup: cannot copy the store of {ref}: {str(exc).splitlines()[0]}") from exc
        indexes: dict[str, dict[str, object]] = {}
        for folder in sorted(p for p in ref.vectors_dir.glob("*") if (p / "records.sqlite").is_file()):
            if ".damaged-" in folder.name:
                continue
            (staging / "vectors" / folder.name).mkdir(parents=True)
            target = staging / "vectors" / folder.name / "records.sqlite"
            _snapshot_sqlite(folder / "records.sqlite", target)
            indexes[folder.name] = {}
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    for name in list(indexes):
        db = sqlite3.connect(staging / "vectors" / name / "records.sqlite")
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            count = db.execute("SELECT count(*) FROM records").fetchone()[0]
            db.execute("DELETE FROM meta WHERE key IN ('ann_generation', 'ann_digest')")  # its graph is rebuilt
            db.commit()
            db.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.Error:
            meta, count = {}, 0
        finally:
            db.close()
        if not meta:  # being created at that moment: it held nothing yet
            shutil.rmtree(staging / "vectors" / name)
            del indexes[name]
            continue
        indexes[name] = {"model": meta.get("model"), "dimension": int(meta.get("dimension", 0)), "records": count}
    return indexes


def _remove_stale_staging(ref: CollectionRef) -> None:
    """Remove the staging folders of backups whose process is gone (killed mid-backup)."""
    for folder in ref.root.glob(".backup-*-*"):
        try:
            os.kill(int(folder.name.split("-")[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (ValueError, OSError):
            continue  # not ours, or a live process of another user


def _dump_checkpoint(checkpoint: Path, out: Path) -> int:
    """Every quad of the checkpoint to N-Quads; returns how many (of that same copy, which nothing writes)."""
    copy = ox.Store.read_only(str(checkpoint))
    try:
        with out.open("wb") as fh:
            copy.dump(fh, format=ox.RdfFormat.N_QUADS)
        return len(copy)
    finally:
        del copy
        shutil.rmtree(checkpoint, ignore_errors=True)


def make_backup(ref: CollectionRef, file: Path, *, settings: dict[str, object] | None = None,
                store: OxigraphStore | None = None, wait: float = 0.0) -> dict[str, object]:
    """Write ``file`` (replaced atomically); returns the manifest. ``settings``: those that matter, recorded.

    ``store``: the collection's store when this process has it open (a server backs up what it serves);
    otherwise it is opened here, waiting up to ``wait`` seconds for another process that has it open,
    then refused with one line (reading a store another process writes is not consistent).
    """
    if not ref.exists():
        raise NotFound(f"collection {ref} does not exist")
    for part in ("store", "librarian"):
        if not part_files(ref, part).is_file():
            raise StoreError(f"collection {ref}: {part_files(ref, part)} is missing: nothing to back up")
    file = Path(file)
    if not file.parent.is_dir():
        raise InputError(f"{file}: cannot write the backup (no such folder {file.parent})")
    # staged inside the collection's folder: the same file system, so blobs and store tables are hard links
    _remove_stale_staging(ref)
    with tempfile.TemporaryDirectory(prefix=f".backup-{os.getpid()}-", dir=ref.root) as tmp:
        staging = Path(tmp)
        opened = _open_store(ref, wait) if store is None else store
        try:
            indexes = _freeze(ref, opened, staging)
        finally:
            if store is None:
                opened.close()
        lib = sqlite3.connect(staging / "librarian" / DB_NAME)
        documents = lib.execute("SELECT count(*) FROM records WHERE kind = 'document'").fetchone()[0]
        complete = lib.execute("SELECT count(*) FROM completions").fetchone()[0]
        lib.close()
        quads = _dump_checkpoint(staging / "_checkpoint", staging / "store.nq")
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
    if type(manifest.get("version")) is int and manifest["version"] > BACKUP_VERSION:
        raise InputError(f"{file}: backup format version {manifest.get('version')} is newer than this provgraph "
                         f"reads ({BACKUP_VERSION}): upgrade provgraph")
    check_manifest(manifest, file)
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
    if not file.exists():
        raise NotFound(f"{file}: no such backup file")
    if not file.is_file():
        raise InputError(f"{file}: not a backup file (not a regular file)")
    if not force and not _is_empty(ref):
        raise InputError(f"collection {ref} is not empty: restore into another collection (-C), or pass --force "
                         "to replace it")
    parent = ref.root.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".restore-{ref.collection}-", dir=parent))
    try:
        try:
            tar = tarfile.open(file, "r:")  # uncompressed, as backups are written: nothing unpacks to any size
        except (tarfile.TarError, OSError) as exc:
            raise InputError(f"{file}: not a provgraph backup ({exc})") from exc
        with tar:
            try:
                manifest = _read_manifest(tar, file)
                for member in tar.getmembers():
                    if not member.isfile() or not _MEMBER.match(member.name):
                        raise InputError(f"{file}: unexpected member {member.name!r}: not a provgraph backup")
                    check_member(member, file)
                    source = tar.extractfile(member)
                    assert source is not None
                    target = staging / ("_store.nq" if member.name == "store.nq" else member.name)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with target.open("wb") as out:
                        shutil.copyfileobj(source, out)
            except tarfile.TarError as exc:
                raise InputError(f"{file}: damaged backup (truncated or corrupt archive: {exc})") from exc
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
        store.import_data(dump, "nquads", bulk=True)  # a staging copy, thrown away on failure: bounded memory
        quads = len(store)
    finally:
        store.close()
    dump.unlink()
    (staging / "vectors").mkdir(exist_ok=True)
    check_counts(staging, manifest, quads, DB_NAME, file)
    parts = ["librarian", "store", *(f"vectors/{p.name}" for p in sorted((staging / "vectors").iterdir()))]
    (staging / MARKER).write_text(json.dumps({"format": MARKER_FORMAT, "parts": parts,
                                                         "created": manifest.get("created"),
                                                         "restored_from": str(file)}, indent=1), encoding="utf-8")
