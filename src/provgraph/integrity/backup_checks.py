"""What a restore checks before trusting an archive: the manifest's shape, its members, and the
SQLite snapshots' schemas and counts against what the manifest says.

An archive is anyone's file: its manifest's numbers are checked against the data (a wrong count is
a damaged backup), its fields must have their types (a version is a whole number from 1, a count
one from 0), and a snapshot must hold its tables as tables: a view or trigger named like one would
restore and then answer (or act on) every later request.
"""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

from provgraph.errors import InputError

__all__ = ["check_manifest", "check_member", "check_snapshot", "COUNTS"]

COUNTS = ("documents", "complete_documents", "quads", "chunk_vectors", "entity_vectors")
_VECTOR_COUNTS = {"chunks": "chunk_vectors", "entities": "entity_vectors"}
_TABLES = {"librarian": ("records", "completions"), "vectors": ("meta", "records")}


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def check_manifest(manifest: dict[str, object], file: Path) -> None:
    """Refuse a manifest whose fields do not have their types (one line naming the field)."""
    def bad(field: str, want: str) -> InputError:
        return InputError(f"{file}: damaged backup: manifest.json's {field} must be {want}, not "
                          f"{manifest_value(manifest, field)!r:.60}")

    version = manifest.get("version")
    if type(version) is not int or version < 1:
        raise bad("version", "a format version (a whole number from 1)")
    for field in ("created", "user", "collection", "provgraph"):
        if field in manifest and not isinstance(manifest[field], str):
            raise bad(field, "text")
    if not isinstance(manifest.get("settings", {}), dict):
        raise bad("settings", "an object")
    counts = manifest.get("counts")
    if not isinstance(counts, dict):
        raise bad("counts", "an object")
    for name in COUNTS:
        if not _count(counts.get(name)):
            raise bad(f"counts.{name}", "a count (a whole number from 0)")
    indexes = manifest.get("indexes", {})
    if not isinstance(indexes, dict):
        raise bad("indexes", "an object")
    for name, index in indexes.items():
        if not isinstance(index, dict) or not isinstance(index.get("model"), str) or not all(
                _count(index.get(k)) for k in ("dimension", "records")):
            raise bad(f"indexes.{name}", "an object with model (text), dimension and records (counts)")


def manifest_value(manifest: dict[str, object], field: str) -> object:
    """A dotted field of the manifest (None when missing)."""
    value: object = manifest
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def check_member(member: tarfile.TarInfo, file: Path) -> None:
    """Refuse a member that could unpack to more than it takes in the archive (a sparse file)."""
    if member.issparse():
        raise InputError(f"{file}: unexpected sparse member {member.name!r}: not a provgraph backup")


def check_snapshot(db_file: Path, part: str, file: Path) -> sqlite3.Connection:
    """Open a restored SQLite snapshot read-only, refusing views and triggers and missing tables."""
    name = db_file.relative_to(db_file.parents[2 if part == "vectors" else 1]).as_posix()
    try:
        db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
        objects = db.execute("SELECT type, name FROM sqlite_master").fetchall()
    except sqlite3.Error as exc:
        raise InputError(f"{file}: damaged backup: {name} is not a readable SQLite database ({exc})") from exc
    odd = sorted(f"{kind} {label}" for kind, label in objects if kind not in ("table", "index"))
    tables = {label for kind, label in objects if kind == "table"}
    missing = [t for t in _TABLES[part] if t not in tables]
    if odd or missing:
        db.close()
        what = f"holds a {odd[0]}" if odd else f"has no table {missing[0]}"
        raise InputError(f"{file}: damaged backup: {name} {what} (a snapshot holds only provgraph's tables)")
    return db


def check_counts(staging: Path, manifest: dict[str, object], quads: int, librarian_db: str, file: Path) -> None:
    """Compare the manifest's counts with what was restored: a difference is a damaged backup."""
    counts = manifest["counts"]
    assert isinstance(counts, dict)
    found = {"quads": quads}
    db = check_snapshot(staging / "librarian" / librarian_db, "librarian", file)
    try:
        found["documents"] = db.execute("SELECT count(*) FROM records WHERE kind = 'document'").fetchone()[0]
        found["complete_documents"] = db.execute("SELECT count(*) FROM completions").fetchone()[0]
    except sqlite3.Error as exc:
        raise InputError(f"{file}: damaged backup: cannot read the librarian snapshot ({exc})") from exc
    finally:
        db.close()
    indexes = manifest.get("indexes", {})
    assert isinstance(indexes, dict)
    folders = {p.name for p in (staging / "vectors").glob("*") if p.is_dir()}
    if folders != set(indexes):
        raise InputError(f"{file}: damaged backup: vector indexes {sorted(folders)}, the manifest says "
                         f"{sorted(indexes)}")
    for index in sorted(folders):
        db = check_snapshot(staging / "vectors" / index / "records.sqlite", "vectors", file)
        try:
            records = db.execute("SELECT count(*) FROM records").fetchone()[0]
        except sqlite3.Error as exc:
            raise InputError(f"{file}: damaged backup: cannot read vectors/{index} ({exc})") from exc
        finally:
            db.close()
        if records != indexes[index]["records"]:
            raise InputError(f"{file}: damaged backup: {records} records in vectors/{index}, the manifest says "
                             f"{indexes[index]['records']}")
        if index in _VECTOR_COUNTS:
            found[_VECTOR_COUNTS[index]] = records
    for name in COUNTS:
        if found.get(name, 0) != counts[name]:
            label = name.replace("_", " ")
            raise InputError(f"{file}: damaged backup: {found.get(name, 0)} {label}, the manifest says {counts[name]}")
