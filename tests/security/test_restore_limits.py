"""High 7 and the Low restore items: a decompression bomb, an archive's manifest with wrong types,
negative versions or counts that are not the data's, and a librarian snapshot whose table is a view.
Each is refused with one line, nothing restored and no staging folder left (the hazards of member
names and kinds, truncation and compression formats are in tests/integration/test_restore_hostile.py,
whose archive helpers these reuse)."""

from __future__ import annotations

import bz2
import io
import json
import sqlite3
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_restore_hostile import archive, home, members, restore_fails, write  # noqa: F401
from tests.security.conftest import http
from tests.server.live import LiveServer

Entries = list[tuple[tarfile.TarInfo, bytes | None]]


def with_manifest(data: bytes, change: Any) -> Entries:
    out = []
    for info, content in members(data):
        if info.name == "manifest.json":
            manifest = json.loads(content or b"")
            change(manifest)
            content = json.dumps(manifest).encode()
        out.append((info, content))
    return out


def _set(field: str, value: object) -> Any:
    def change(manifest: dict[str, Any]) -> None:
        *parents, last = field.split(".")
        target = manifest
        for part in parents:
            target = target[part]
        target[last] = value
    return change


@pytest.mark.parametrize(("field", "value", "want"), [
    ("version", -1, "a format version (a whole number from 1), not -1"),
    ("version", True, "a format version (a whole number from 1), not True"),
    ("version", "1", "a format version (a whole number from 1), not '1'"),
    ("counts.quads", "12", "a count (a whole number from 0), not '12'"),
    ("counts.documents", -1, "a count (a whole number from 0), not -1"),
    ("counts", [], "an object, not []"),
    ("indexes.chunks", "x", "an object with model (text), dimension and records (counts), not 'x'"),
])
def test_a_manifest_of_the_wrong_types_is_refused(archive: bytes, home: Path, field: str, value: object,  # noqa: F811
                                                  want: str) -> None:
    file = write(home.parent / "typed.tar", with_manifest(archive, _set(field, value)))
    restore_fails(home, file, f"damaged backup: manifest.json's {field} must be {want}")


@pytest.mark.parametrize(("field", "label"), [("documents", "documents"), ("complete_documents", "complete documents"),
                                              ("chunk_vectors", "chunk vectors")])
def test_manifest_counts_are_checked_against_the_data(archive: bytes, home: Path, field: str,  # noqa: F811
                                                      label: str) -> None:
    real = json.loads(next(c for i, c in members(archive) if i.name == "manifest.json") or b"")["counts"][field]
    file = write(home.parent / "counted.tar", with_manifest(archive, _set(f"counts.{field}", real + 7)))
    restore_fails(home, file, f"damaged backup: {real} {label}, the manifest says {real + 7}")


def test_a_librarian_snapshot_whose_table_is_a_view_is_refused(archive: bytes, home: Path) -> None:  # noqa: F811
    out: Entries = []
    for info, content in members(archive):
        if info.name == "librarian/librarian.sqlite3":
            db_file = home.parent / "viewed.sqlite3"
            db_file.write_bytes(content or b"")
            db = sqlite3.connect(db_file)
            db.executescript("ALTER TABLE records RENAME TO kept; CREATE VIEW records AS SELECT * FROM kept;")
            db.close()
            content = db_file.read_bytes()
            db_file.unlink()
        out.append((info, content))
    restore_fails(home, write(home.parent / "viewed.tar", out),
                  "damaged backup: librarian/librarian.sqlite3 holds a view records (a snapshot holds only "
                  "provgraph's tables)")


def test_a_sparse_member_is_refused_before_it_unpacks(archive: bytes, home: Path) -> None:  # noqa: F811
    """A GNU sparse member unpacks to its map's real size, which can be far more than it takes in the archive."""
    entries = members(archive)
    for info, _ in entries:
        if info.name == "store.nq":
            info.type = tarfile.GNUTYPE_SPARSE
    file = write(home.parent / "sparse.tar", entries)
    with tarfile.open(file) as tar:
        assert tar.getmember("store.nq").issparse()
    restore_fails(home, file, "unexpected sparse member 'store.nq': not a provgraph backup")


def test_a_decompression_bomb_is_refused_before_it_unpacks(server: LiveServer) -> None:
    """A 20 MiB tar of zeros in bzip2 is about 100 bytes (the issue's 287 KB wrote 1 GiB)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("store.nq")
        info.size = 20 * 2**20
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    bomb = bz2.compress(raw.getvalue())
    assert len(bomb) < 4096
    api = server.url + "/api/v1"
    r = http.post(f"{api}/collections/bombed/restore", content=bomb)
    assert r.status_code == 400 and r.json()["error"]["type"] == "InputError", r.text
    assert r.json()["error"]["message"].startswith("the uploaded archive: not a provgraph backup")
    assert "bombed" not in [c["collection"] for c in http.get(f"{api}/collections").json()]
    home = server.home
    assert not [p for p in home.rglob("*") if p.name.startswith(".restore-") or p.name == "upload.tar"]



@pytest.mark.parametrize("where", ["header", "data"])
def test_a_truncated_archive_on_the_restore_route_is_one_line(server: LiveServer, where: str) -> None:
    """Cut inside the first member's header, or inside the biggest member's data: the route's answer and the
    server's log carry no traceback (the CLI's cases are in test_restore_hostile)."""
    api = server.url + "/api/v1"
    backup = http.get(f"{api}/collections/c/backup").content
    with tarfile.open(fileobj=io.BytesIO(backup)) as tar:
        biggest = max(tar.getmembers(), key=lambda m: m.size)
    cut = 300 if where == "header" else biggest.offset_data + biggest.size // 2
    r = http.post(f"{api}/collections/cut/restore", content=backup[:cut])
    error = r.json()["error"]
    assert (r.status_code, error["type"]) == (400, "InputError") and "\n" not in error["message"], r.text
    assert error["message"].startswith("the uploaded archive: ") and "Traceback" not in r.text
    assert "cut" not in [c["collection"] for c in http.get(f"{api}/collections").json()]
    assert "Traceback" not in server.log()
