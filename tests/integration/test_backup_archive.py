"""What a backup archive holds (manifest, blob files, the settings that matter) and what restore refuses."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.layout import CollectionRef
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS
from tests.fault.killer import make_parts_large


def _manifest(archive: Path) -> dict:
    with tarfile.open(archive) as tar:
        return json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]


@pytest.mark.embedded_only  # backup archives the embedded store (PostgreSQL: export)
def test_the_manifest_records_counts_index_models_and_the_settings_that_matter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_CHUNK_SIZE", "700")  # the collection's settings, in effect for load and backup
    monkeypatch.setenv("PROVGRAPH_CHUNK_OVERLAP", "70")
    doc = tmp_path / "a.txt"
    doc.write_text("Marie Curie discovered polonium in 1898. Pierre Curie worked with Marie Curie.", encoding="utf-8")
    assert run("load", str(doc), "--llm", "none").code == 0
    archive = tmp_path / "a.tar"
    assert run("backup", str(archive)).code == 0
    m = _manifest(archive)
    with Runtime(load_settings(), create=False) as rt:
        quads, embedder = len(rt.store), rt.embedder
        chunks, entities = rt.chunk_index.count(), rt.entity_index.count()
    assert (m["format"], m["version"], m["user"], m["collection"]) == ("provgraph-backup", 1, "default", "default")
    assert m["counts"] == {"documents": 1, "complete_documents": 1, "quads": quads, "chunk_vectors": chunks,
                           "entity_vectors": entities}
    assert m["indexes"]["chunks"] == {"model": embedder.name, "dimension": embedder.dimension, "records": chunks}
    assert m["settings"]["chunk_size"] == 700 and m["settings"]["chunk_overlap"] == 70
    with tarfile.open(archive) as tar:
        names = sorted(tar.getnames())
    assert names == ["librarian/librarian.sqlite3", "manifest.json", "store.nq", "vectors/chunks/records.sqlite",
                     "vectors/entities/records.sqlite"]  # no HNSW graph, no WAL, no checkpoint left behind
    assert not any(p.name.startswith(".backup-") for p in CollectionRef(Path(load_settings().home), "default",
                                                                        "default").root.iterdir())


@pytest.mark.embedded_only  # backup archives the embedded store (PostgreSQL: export)
def test_blob_files_are_in_the_archive_and_come_back_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_parts_large(monkeypatch.setattr)
    doc = tmp_path / "becquerel.txt"
    doc.write_bytes((CORPUS / "becquerel_rays.txt").read_bytes())
    assert run("load", str(doc), "--llm", "none").code == 0
    archive = tmp_path / "b.tar"
    assert run("backup", str(archive)).code == 0
    with tarfile.open(archive) as tar:
        blobs = [n for n in tar.getnames() if n.startswith("librarian/blobs/")]
    assert len(blobs) == 1
    assert run("restore", str(archive), "-C", "copy").code == 0
    copy = CollectionRef(Path(load_settings().home), "default", "copy")
    assert (copy.librarian_dir / blobs[0].split("/", 1)[1]).read_bytes() == doc.read_bytes()
    assert run("check", "-C", "copy").code == 0  # the blob's bytes match its name


def test_restore_refuses_a_backup_from_a_newer_provgraph(tmp_path: Path) -> None:
    archive = tmp_path / "new.tar"
    manifest = json.dumps({"format": "provgraph-backup", "version": 99}).encode()
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    r = run("restore", str(archive), "-C", "x")
    assert r.code == 2 and r.err == (f"error: {archive}: backup format version 99 is newer than this provgraph reads "
                                     "(1): upgrade provgraph\n")
    assert not CollectionRef(Path(load_settings().home), "default", "x").exists()


@pytest.mark.embedded_only  # backup archives the embedded store (PostgreSQL: export)
def test_a_backup_removes_the_staging_folder_a_killed_backup_left(tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Marie Curie discovered polonium in 1898.", encoding="utf-8")
    assert run("load", str(doc), "--llm", "none").code == 0
    root = CollectionRef(Path(load_settings().home), "default", "default").root
    dead = root / ".backup-999999999-x"  # no such process
    (dead / "store").mkdir(parents=True)
    assert run("backup", str(tmp_path / "a.tar")).code == 0
    assert not dead.exists()
