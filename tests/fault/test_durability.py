"""Files written outside SQLite and RocksDB are durable before the completion record that relies on them.

Blob files (document bytes) and the HNSW graphs are written to a temporary name, fsynced, renamed
and their folder fsynced; the completion record comes after. Observed on a real `load` by
recording the fsync and rename calls and the completion writes, in order.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from provgraph.librarian.sqlite import SqliteLibrarian
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS
from tests.fault.test_damage import large_parts  # noqa: F401 - the fixture making blob files and HNSW graphs

pytestmark = [pytest.mark.fault, pytest.mark.embedded_only]  # the embedded store's fsyncs


def _journal(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    journal: list[tuple[str, str]] = []
    fsync, replace, mark = os.fsync, os.replace, SqliteLibrarian.mark_complete

    def fsync_(fd: int) -> None:
        journal.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def replace_(src: str | Path, dst: str | Path) -> None:
        replace(src, dst)
        journal.append(("rename", str(dst)))

    def mark_(self: SqliteLibrarian, ids: list[str]) -> None:
        mark(self, ids)
        journal.append(("complete", ",".join(ids)))

    monkeypatch.setattr(os, "fsync", fsync_)
    monkeypatch.setattr(os, "replace", replace_)
    monkeypatch.setattr(SqliteLibrarian, "mark_complete", mark_)
    return journal


@pytest.mark.usefixtures("large_parts")
def test_blob_files_and_hnsw_graphs_are_fsynced_renamed_and_their_folder_fsynced_before_completion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_bytes((CORPUS / "becquerel_rays.txt").read_bytes())
    journal = _journal(monkeypatch)
    assert run("load", str(corpus), "--llm", "none").code == 0
    completes = [i for i, (what, _) in enumerate(journal) if what == "complete"]
    assert len(completes) == 1
    home = Path(os.environ["PROVGRAPH_HOME"]) / "users" / "default" / "collections" / "default"
    blobs = [p for p in (home / "librarian" / "blobs").rglob("*") if p.is_file()]
    graphs = [home / "vectors" / name / "ann.usearch" for name in ("chunks", "entities")]
    assert blobs and all(g.is_file() for g in graphs)
    for target in [*blobs, *graphs]:
        renamed = journal.index(("rename", str(target)))
        before, after = journal[:renamed], journal[renamed + 1:]
        assert before[-1][0] == "fsync" and before[-1][1].startswith(str(target.parent))  # the temporary file
        assert before[-1][1] != str(target)
        assert after[0] == ("fsync", str(target.parent))  # then the folder holding the new name
        assert renamed < completes[0], target
