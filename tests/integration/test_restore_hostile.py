"""Restore fed hostile and damaged archives: every hazard is refused with one line naming it, nothing is
written outside the staging folder, no collection (nor staging folder) is left behind; a sound archive
restores whole.

Each archive is a real backup of a small collection, rewritten with one hazard: a member named ``../``
or absolute, a member that is a symlink, a hard link or a device, a store dump missing quads the
manifest counts, a truncated file, a compressed archive (backups are written uncompressed; a
compressed one could unpack to any size before a single check).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.layout import CollectionRef
from tests.cli_runner import run

TEXT = "Marie Curie discovered polonium in 1898. Pierre Curie worked with Marie Curie in Paris.\n"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a real backup of one loaded document."""
    home = tmp_path_factory.mktemp("hostile-restore") / "home"
    doc = home.parent / "curie.txt"
    doc.write_text(TEXT, encoding="utf-8")
    assert run("--home", str(home), "load", str(doc), "--llm", "none").code == 0
    file = home.parent / "good.tar"
    assert run("--home", str(home), "backup", str(file)).code == 0
    return file.read_bytes()


def members(data: bytes) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]


def write(path: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def renamed(data: bytes, old: str, new: str) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    out = []
    for info, content in members(data):
        if info.name == old:
            info.name = new
        out.append((info, content))
    return out


def special(data: bytes, name: str, kind: bytes, linkname: str = "") -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """The archive with member ``name`` replaced by a non-file member of ``kind``."""
    out = [(i, c) for i, c in members(data) if i.name != name]
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, linkname, 0
    if kind == tarfile.CHRTYPE:
        info.devmajor, info.devminor = 1, 3  # /dev/null's numbers
    return [*out, (info, None)]


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def restore_fails(home: Path, file: Path, message: str) -> None:
    """``restore`` refuses ``file`` with the one line ``message``; no collection, no staging folder is left."""
    before = files_under(home.parent)
    r = run("--home", str(home), "restore", str(file), "-C", "target")
    assert (r.code, r.out, r.err) == (2, "", f"error: {file}: {message}\n")
    assert not CollectionRef(home, "default", "target").exists()
    assert files_under(home.parent) == before  # nothing written anywhere, staging folder removed


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "users" / "default" / "collections").mkdir(parents=True)
    return home


@pytest.mark.embedded_only  # backup archives the embedded store (PostgreSQL: export)
def test_a_sound_archive_restores_whole(archive: bytes, home: Path) -> None:
    file = home.parent / "good.tar"
    file.write_bytes(archive)
    r = run("--home", str(home), "restore", str(file), "-C", "target")
    assert r.code == 0, r.err
    assert run("--home", str(home), "check", "-C", "target").code == 0
    settings = load_settings(home=str(home), collection="target")
    assert CollectionRef(settings.home, "default", "target").exists()


@pytest.mark.parametrize("name", ["../../outside/store.nq", "librarian/../../../outside/manifest.json",
                                  "./store.nq", "vectors/chunks/../../../../outside/records.sqlite",
                                  "store.nq/../../../outside/escaped", "manifest.json.d/../../../outside/x"])
def test_a_member_named_outside_the_archive_is_refused(archive: bytes, home: Path, name: str) -> None:
    file = write(home.parent / "dots.tar", renamed(archive, "store.nq", name))
    restore_fails(home, file, f"unexpected member {name!r}: not a provgraph backup")
    assert not (home.parent / "outside").exists() and not (home / "outside").exists()


def test_an_absolute_member_is_refused(archive: bytes, home: Path) -> None:
    target = home.parent / "outside" / "store.nq"
    file = write(home.parent / "absolute.tar", renamed(archive, "store.nq", str(target)))
    restore_fails(home, file, f"unexpected member {str(target)!r}: not a provgraph backup")
    assert not target.exists()


@pytest.mark.parametrize("kind, linkname", [(tarfile.SYMTYPE, "/etc/passwd"), (tarfile.LNKTYPE, "manifest.json"),
                                            (tarfile.CHRTYPE, ""), (tarfile.FIFOTYPE, ""), (tarfile.DIRTYPE, "")],
                         ids=["symlink", "hardlink", "device", "fifo", "directory"])
def test_a_member_that_is_not_a_regular_file_is_refused(archive: bytes, home: Path, kind: bytes, linkname: str) -> None:
    file = write(home.parent / "special.tar", special(archive, "store.nq", kind, linkname))
    restore_fails(home, file, "unexpected member 'store.nq': not a provgraph backup")


def test_a_store_dump_missing_quads_is_a_damaged_backup(archive: bytes, home: Path) -> None:
    entries = members(archive)
    dump = next(c for i, c in entries if i.name == "store.nq")
    assert dump is not None
    lines = dump.splitlines(keepends=True)
    kept = b"".join(lines[:-3])
    file = write(home.parent / "short.tar", [(i, kept if i.name == "store.nq" else c) for i, c in entries])
    restore_fails(home, file, f"damaged backup: {len(lines) - 3} quads, the manifest says {len(lines)}")


def test_a_manifest_counting_other_quads_is_a_damaged_backup(archive: bytes, home: Path) -> None:
    entries = members(archive)
    manifest = next(c for i, c in entries if i.name == "manifest.json")
    assert manifest is not None
    quads = next(c for i, c in entries if i.name == "store.nq").count(b"\n")  # type: ignore[union-attr]
    lied = manifest.replace(f'"quads": {quads}'.encode(), f'"quads": {quads + 1}'.encode())
    assert lied != manifest
    file = write(home.parent / "lied.tar", [(i, lied if i.name == "manifest.json" else c) for i, c in entries])
    restore_fails(home, file, f"damaged backup: {quads} quads, the manifest says {quads + 1}")


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_a_truncated_archive_is_refused_in_one_line(archive: bytes, home: Path, keep: float) -> None:
    file = home.parent / "cut.tar"
    file.write_bytes(archive[: int(len(archive) * keep)])
    before = files_under(home.parent)
    r = run("--home", str(home), "restore", str(file), "-C", "target")
    assert (r.code, r.out) == (2, "") and r.err.startswith(f"error: {file}: ") and r.err.count("\n") == 1, r.err
    assert "Traceback" not in r.err and not CollectionRef(home, "default", "target").exists()
    assert files_under(home.parent) == before


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress], ids=["gzip", "bzip2", "xz"])
def test_a_compressed_archive_is_refused_before_it_is_unpacked(archive: bytes, home: Path,
                                                              compress: Callable[[bytes], bytes]) -> None:
    file = home.parent / "packed.tar.z"
    file.write_bytes(compress(archive))
    before = files_under(home.parent)
    r = run("--home", str(home), "restore", str(file), "-C", "target")
    assert (r.code, r.out) == (2, "") and r.err.startswith(f"error: {file}: not a provgraph backup"), r.err
    assert r.err.count("\n") == 1 and not CollectionRef(home, "default", "target").exists()
    assert files_under(home.parent) == before
