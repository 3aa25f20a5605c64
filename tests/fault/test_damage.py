"""A full disk during load, and truncated or bit-flipped files of every kind.

Every kind of file a collection writes: the store's CURRENT and a table file, the librarian's
database and its blob files (document bytes), each vector index's records and its HNSW graph.
Blob files and HNSW graphs are made here at a small size (a lower inline limit and HNSW
threshold), the way they are made for a large collection.

The full disk is injected where the writes happen: SQLite's own "database or disk is full" (a
page limit on the vector records, with SQLite's real automatic rollback), and ENOSPC from the
quad store and from a flush. Each gives one line with the real cause; loading again afterwards
(space freed) leaves the collection consistent.
"""

from __future__ import annotations

import errno
import json
import re
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
from tests.fault.killer import make_parts_large

pytestmark = [pytest.mark.fault, pytest.mark.embedded_only]  # the embedded store's own files (RocksDB, SQLite, usearch) damaged


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


@pytest.fixture
def large_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Documents' bytes in blob files and every index with a saved HNSW graph, as at scale."""
    make_parts_large(monkeypatch.setattr)


def _blob(ref: CollectionRef) -> Path:
    doc = ref.librarian_dir / "blobs"
    files = sorted(p for p in doc.rglob("*") if p.is_file())
    assert files, "the documents' bytes are blob files"
    return files[0]


_TABLE = re.compile(rb"name(spog|posg|ospg|gspo|gpos|gosp|dspo|dpos|dosp|id2str|graphs|default)")


def _table_of(sst: Path) -> str:
    """The store index (RocksDB column family) an SST file belongs to, from its properties block."""
    names = _TABLE.findall(sst.read_bytes())
    return names[-1].decode() if names else ""


def _at_rest(ref: CollectionRef) -> None:
    """Open and close the collection until its store's table files stay the same (compactions done)."""
    for _ in range(4):
        before = sorted(ref.store_dir.glob("*.sst"))
        run("check")
        if sorted(ref.store_dir.glob("*.sst")) == before:
            return


def _files(ref: CollectionRef) -> dict[str, Path]:
    # the largest table of quads in graph order, which `check` reads whole when it counts the quads; which
    # index's table is largest overall depends on when RocksDB compacted, and a damaged block of another
    # index shows only on the first query that reads it
    ssts = sorted((p for p in ref.store_dir.glob("*.sst") if _table_of(p) == "gspo"), key=lambda p: p.stat().st_size)
    found = {"store-current": ref.store_dir / "CURRENT", "store-table": ssts[-1],
             "librarian": ref.librarian_dir / "librarian.sqlite3",
             "vectors": ref.vectors_dir / "chunks" / "records.sqlite",
             "vectors-graph": ref.vectors_dir / "chunks" / "ann.usearch"}
    if (ref.librarian_dir / "blobs").is_dir():
        found["librarian-blob"] = _blob(ref)
    return found


KINDS = ["store-current", "store-table", "librarian", "librarian-blob", "vectors", "vectors-graph"]


@pytest.mark.parametrize("damage", [_truncate, _flip], ids=["truncated", "bit-flipped"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_file_gives_one_line_and_destroys_nothing(corpus: Path, kind: str, damage: Callable[[Path], None],
                                                            request: pytest.FixtureRequest) -> None:
    if kind in ("librarian-blob", "vectors-graph"):
        request.getfixturevalue("large_parts")
    ref = _loaded(corpus)
    _at_rest(ref)  # closes everything cleanly: every file is at rest, obsolete tables deleted
    target = _files(ref)[kind]
    damage(target)
    before = {p: p.read_bytes() for p in ref.root.rglob("*") if p.is_file() and "-wal" not in p.name}
    results = [run(*cmd) for cmd in (("documents", "list"), ("document-rag", "-q", "Who founded the institute?",
                                                              "--llm", "none"), ("check",))]
    for r in results:
        assert "Traceback" not in r.err
        assert len([line for line in r.err.splitlines() if line.startswith("error:")]) <= 1, r.err
    check = results[-1]
    assert check.code != 0, check.out  # check reports the damage
    named = target.parent if kind.startswith("store") else target  # RocksDB names the part of its folder at fault
    assert str(named) in check.err + check.out or kind == "vectors" and "chunks" in check.out
    after = {p: p.read_bytes() for p in before if p.exists()}
    assert after[target] == before[target]  # the damaged file is kept as it is, for a backup or forensics
    kept = {p for p in before if p.suffix in (".sqlite", ".sqlite3")}  # RocksDB compacts and rotates on its own
    assert kept <= set(after)
    repaired = run("check", "--repair")
    assert "Traceback" not in repaired.err
    if kind.startswith("vectors"):  # derived: moved aside (kept) and rebuilt from the store and the librarian
        assert repaired.code == 0 and run("check").code == 0, repaired.out
        aside = [p for p in ref.vectors_dir.rglob("*") if ".damaged-" in str(p) and p.is_file()
                 and p.read_bytes() == before[target]]
        assert aside, repaired.out
    elif kind == "librarian-blob":  # a document's bytes: not derivable, and said so
        assert repaired.code == 1 and "cannot repair: bytes-lost " in repaired.out, repaired.out
        assert target.read_bytes() == before[target]
    else:  # a source of truth: only a backup brings it back, and nothing is changed
        assert repaired.code == 4 and "restore a backup" in repaired.err, repaired.err
        assert target.read_bytes() == before[target]


def _final(out: str) -> tuple[list[str], str]:
    final = json.loads(out.strip().splitlines()[-1])
    return [s["chunk"] for s in final["sources"]], final["answer"]


def _errors(err: str) -> list[str]:
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("damage", [_truncate, _flip], ids=["truncated", "bit-flipped"])
def test_a_damaged_hnsw_graph_is_named_and_check_repair_rebuilds_it(corpus: Path, large_parts: None,
                                                                    damage: Callable[[Path], None]) -> None:
    ref = _loaded(corpus)
    question = ("document-rag", "-q", "Who founded the Radium Institute?", "--llm", "none", "--format", "json")
    answer = run(*question)
    assert answer.code == 0, answer.err
    graph = ref.vectors_dir / "chunks" / "ann.usearch"
    damage(graph)
    damaged = graph.read_bytes()
    r = run(*question[:-2])
    assert r.code == 4 and _errors(r.err) == [
        f"error: vector index file {graph} is damaged (its SHA-256 is not the one recorded when it was saved): "
        "move it aside and rebuild it from the records: provgraph check --repair -C default"], r.err
    assert graph.read_bytes() == damaged  # nothing written over it
    r = run("check")
    assert r.code == 1 and f"problem: index-graph-damaged {graph}: " in r.out, r.out
    r = run("check", "--repair")
    assert r.code == 0 and r.out.rstrip().endswith("consistent"), r.out
    aside = [p for p in graph.parent.iterdir() if p.name.startswith("ann.usearch.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == damaged  # kept, moved aside
    assert f"repaired: moved the HNSW graph of chunks to {aside[0]}; rebuilt it" in r.out
    assert run("check").code == 0
    assert _final(run(*question).out) == _final(answer.out)  # the rebuilt graph picks and answers as before


def test_a_missing_hnsw_graph_is_named_and_check_repair_rebuilds_it(corpus: Path, large_parts: None) -> None:
    ref = _loaded(corpus)
    graph = ref.vectors_dir / "entities" / "ann.usearch"
    graph.unlink()
    r = run("graph-rag", "-q", "Who founded the Radium Institute?", "--llm", "none")
    assert r.code == 4 and _errors(r.err) == [f"error: vector index file {graph} is missing or unreadable (No such file "
                                              "or directory): move it aside and rebuild it from the records: "
                                              "provgraph check --repair -C default"], r.err
    r = run("check", "--repair")
    assert r.code == 0 and "repaired: rebuilt the missing HNSW graph of entities" in r.out, r.out
    assert graph.is_file() and run("check").code == 0


@pytest.mark.parametrize("damage", [_truncate, _flip, Path.unlink], ids=["truncated", "bit-flipped", "missing"])
def test_lost_document_bytes_are_reported_and_repair_says_it_cannot_derive_them(
        corpus: Path, large_parts: None, damage: Callable[[Path], None]) -> None:
    ref = _loaded(corpus)
    assert run("check").code == 0
    blob = _blob(ref)
    damage(blob)
    kept = blob.read_bytes() if blob.exists() else None
    documents = run("documents", "list", "--format", "json")
    assert documents.code == 0, documents.err  # the rest of the collection still works
    r = run("check")
    assert r.code == 1, r.out
    lost = [line for line in r.out.splitlines() if line.startswith("problem: bytes-lost ")]
    assert lost and all(str(blob) in line and "restore a backup" in line for line in lost), r.out
    r = run("check", "--repair")
    assert r.code == 1 and "cannot repair: bytes-lost " in r.out and str(blob) in r.out, r.out
    assert (blob.read_bytes() if blob.exists() else None) == kept  # nothing recreated over it
