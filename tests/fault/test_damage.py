"""A full disk during load, and truncated or bit-flipped files of every kind.

The full disk is injected where the writes happen: SQLite's own "database or disk is full" (a
page limit on the vector records, with SQLite's real automatic rollback), and ENOSPC from the
quad store and from a flush. Each gives one line with the real cause; loading again afterwards
(space freed) leaves the collection consistent.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.layout import CollectionRef
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors.records import RecordTable
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS

pytestmark = pytest.mark.fault


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("becquerel_rays.txt", "radium_institute.txt"):
        shutil.copy(CORPUS / name, folder / name)
    return folder


def _page_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    init = RecordTable.__init__

    def small_disk(self: RecordTable, *a: object, **kw: object) -> None:
        init(self, *a, **kw)  # type: ignore[arg-type]
        assert self._db is not None
        self._db.execute("PRAGMA max_page_count = 8")

    monkeypatch.setattr(RecordTable, "__init__", small_disk)


def _enospc_on(cls: type, name: str, after: int) -> Callable[[pytest.MonkeyPatch], None]:
    def inject(monkeypatch: pytest.MonkeyPatch) -> None:
        original = getattr(cls, name)
        calls = [0]

        def failing(self: object, *a: object, **kw: object) -> object:
            calls[0] += 1
            if calls[0] > after:
                raise OSError(errno.ENOSPC, "No space left on device", "/full/disk")
            return original(self, *a, **kw)

        monkeypatch.setattr(cls, name, failing)

    return inject


@pytest.mark.parametrize(("inject", "cause"), [
    (_page_limit, "database or disk is full"),
    (_enospc_on(OxigraphStore, "add", 2), "no space left on the device"),
    (_enospc_on(OxigraphStore, "flush", 0), "no space left on the device"),
])
def test_full_disk_is_one_line_and_a_reload_recovers(corpus: Path, monkeypatch: pytest.MonkeyPatch,
                                                     inject: Callable[[pytest.MonkeyPatch], None], cause: str) -> None:
    with monkeypatch.context() as m:
        inject(m)
        r = run("load", str(corpus), "--llm", "none")
    assert r.code != 0
    errors = [line for line in r.err.splitlines() if line.startswith("error:")]
    assert errors and all(cause in line for line in errors), r.err
    assert "Traceback" not in r.err and "cannot rollback" not in r.err
    assert run("load", str(corpus), "--llm", "none").code == 0
    r = run("check")
    assert r.code == 0, r.out


def _loaded(corpus: Path) -> CollectionRef:
    assert run("load", str(corpus), "--llm", "none").code == 0
    return CollectionRef(Path(load_settings().home), "default", "default")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    data[5] ^= 0x01
    path.write_bytes(bytes(data))


def _files(ref: CollectionRef) -> dict[str, Path]:
    ssts = sorted(ref.store_dir.glob("*.sst"), key=lambda p: p.stat().st_size)
    return {"store-current": ref.store_dir / "CURRENT", "store-table": ssts[-1],
            "librarian": ref.librarian_dir / "librarian.sqlite3",
            "vectors": ref.vectors_dir / "chunks" / "records.sqlite"}


@pytest.mark.parametrize("damage", [_truncate, _flip], ids=["truncated", "bit-flipped"])
@pytest.mark.parametrize("kind", ["store-current", "store-table", "librarian", "vectors"])
def test_a_damaged_file_gives_one_line_and_destroys_nothing(corpus: Path, kind: str,
                                                            damage: Callable[[Path], None]) -> None:
    ref = _loaded(corpus)
    run("check")  # closes everything cleanly: every file is at rest
    target = _files(ref)[kind]
    damage(target)
    before = {p: p.read_bytes() for p in ref.root.rglob("*") if p.is_file() and "-wal" not in p.name}
    results = [run(*cmd) for cmd in (("documents", "list"), ("document-rag", "-q", "Who founded the institute?",
                                                              "--llm", "none"), ("check",))]
    for r in results:
        assert "Traceback" not in r.err
        assert len([line for line in r.err.splitlines() if line.startswith("error:")]) <= 1
    check = results[-1]
    assert check.code != 0, check.out  # check reports the damage
    named = target.parent if kind.startswith("store") else target  # RocksDB names the part of its folder at fault
    assert str(named) in check.err + check.out or kind == "vectors" and "chunks" in check.out
    after = {p: p.read_bytes() for p in before if p.exists()}
    assert after[target] == before[target]  # the damaged file is kept as it is, for a backup or forensics
    kept = {p for p in before if p.suffix in (".sqlite", ".sqlite3")}  # RocksDB compacts and rotates on its own
    assert kept <= set(after)
