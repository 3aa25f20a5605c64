"""`provgraph load` end to end on embedded defaults (no LLM: the co-occurrence extractor)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.rdf.ids import document_iri
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.corpus_fixture import corpus_files


def _quads(collection: str = "default") -> int:
    with Runtime(load_settings(collection=collection), create=False) as rt:
        return len(rt.store)


def _nothing_for(doc: str, collection: str = "default") -> bool:
    iri = document_iri(doc)
    with Runtime(load_settings(collection=collection)) as rt:
        return not rt.librarian.exists(iri.value) and rt.store.count(iri) == 0 and rt.store.count(None, None, iri) == 0


def test_load_the_corpus_then_reload_changes_nothing() -> None:
    r = run("load", *[str(p) for p in corpus_files()], "--format", "json")
    assert r.code == 0, r.err
    docs = {d["document"]: d for d in json.loads(r.out)["documents"]}
    assert set(docs) == {document_iri(p.name).value for p in corpus_files()}
    assert all(d["status"] == "loaded" and d["chunks"] > 0 and d["facts"] > 0 for d in docs.values())
    pdf = docs["urn:doc:rutherford_radiation.pdf"]
    assert pdf["pages"] == 4
    before = _quads()
    r = run("load", str(corpus_files()[0].parent), "--format", "json")  # the folder, recursively
    assert r.code == 0
    assert {d["status"] for d in json.loads(r.out)["documents"]} == {"unchanged"}
    assert _quads() == before


def test_changed_file_replaces_its_parts(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("Marie Curie discovered polonium in 1898. Pierre Curie worked with Marie Curie.", encoding="utf-8")
    assert run("load", str(f)).code == 0
    f.write_text("Ernest Rutherford named alpha rays. Ernest Rutherford worked with Frederick Soddy.", encoding="utf-8")
    r = run("load", str(f), "--format", "json")
    assert json.loads(r.out)["documents"][0]["status"] == "replaced"
    out = run("sparql", "SELECT ?l WHERE { ?s rdfs:label ?l . ?s ?p ?o . FILTER(?p != rdfs:label) }", "--format", "csv").out
    assert "Ernest Rutherford" in out and "polonium" not in out  # facts only the old text supported are gone


def test_provenance_tree_and_documents_commands() -> None:
    pdf = [p for p in corpus_files() if p.suffix == ".pdf"][0]
    assert run("load", str(pdf)).code == 0
    r = run("provenance", pdf.name)
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0].startswith("Rutherford") or "urn:doc:rutherford_radiation.pdf" in lines[0]
    assert any("Page 1 (chars 0–" in line for line in lines)
    assert any("Chunk 1 (chars" in line for line in lines)
    assert any(line.strip().lstrip("│├└─ ").startswith("(") for line in lines)  # edges hang under chunks
    tree = json.loads(run("provenance", pdf.name, "--format", "json").out)
    assert [p["number"] for p in tree["parts"]] == [1, 2, 3, 4]
    assert all(c["extractors"] == ["cooccurrence-extractor"] for p in tree["parts"] for c in p["chunks"])
    listed = json.loads(run("documents", "list", "--format", "json").out)
    assert [d["id"] for d in listed] == ["urn:doc:rutherford_radiation.pdf"]
    shown = json.loads(run("documents", "show", pdf.name, "--format", "json").out)
    assert [p["kind"] for p in shown["parts"]] == ["page"] * 4
    assert run("documents", "remove", pdf.name).code == 0
    assert _nothing_for(pdf.name)
    assert run("sparql", "SELECT ?s WHERE { ?s ?p ?o }", "--format", "json").out.count('"s"') == 1  # only the head


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "empty": tmp_path / "empty.txt",
        "binary": tmp_path / "image.txt",
        "latin1": tmp_path / "latin1.txt",
        "unsupported": tmp_path / "data.xlsx",
        "corrupt": tmp_path / "corrupt.pdf",
    }
    files["empty"].write_bytes(b"")
    files["binary"].write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    files["latin1"].write_bytes("Marie Curie était physicienne.".encode("latin-1"))
    files["unsupported"].write_bytes(b"PK\x03\x04")
    files["corrupt"].write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    return files


def test_bad_files_fail_one_line_each_and_others_still_load(tmp_path: Path) -> None:
    bad = _bad_files(tmp_path)
    good = tmp_path / "good.txt"
    good.write_text("Marie Curie discovered radium.", encoding="utf-8")
    r = run("load", *map(str, bad.values()), str(good), str(tmp_path / "missing.txt"), "--format", "json")
    assert r.code == 1
    errors = [line for line in r.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 6
    for name, path in bad.items():
        assert any(str(path) in line for line in errors), name
    assert any("missing.txt: no such file" in e for e in errors)
    assert f"error: {bad['empty']}: the file is empty" in errors
    assert f"error: {bad['binary']}: looks like binary data (a PNG image), not text; check the file type" in errors
    assert any(e.startswith(f"error: {bad['unsupported']}: unsupported file type (suffix '.xlsx')") for e in errors)
    assert any(e.startswith(f"error: {bad['corrupt']}: corrupt or unreadable PDF") for e in errors)
    assert "Traceback" not in r.err
    assert [d["document"] for d in json.loads(r.out)["documents"]] == ["urn:doc:good.txt"]
    for path in bad.values():
        assert _nothing_for(path.name)


def test_folder_without_supported_files_and_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.bin").write_bytes(b"1")
    r = run("load", str(tmp_path / "d"))
    assert r.code == 2 and "folder has no supported files" in r.err  # nothing to load: bad input
    big = tmp_path / "big.txt"
    big.write_text("word " * 300_000, encoding="utf-8")  # 1.5 MB
    monkeypatch.setenv("PROVGRAPH_MAX_FILE_MB", "1")
    r = run("load", str(big))
    assert r.code == 1 and f"error: {big}: file too large" in r.err
    assert _nothing_for("big.txt")


def test_pdf_page_without_text_loads_with_a_warning(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    path = tmp_path / "blank-page.pdf"
    c = canvas.Canvas(str(path))
    c.drawString(72, 720, "Marie Curie discovered polonium.")
    c.showPage()
    c.showPage()  # a page with no text
    c.drawString(72, 720, "Pierre Curie studied crystals.")
    c.showPage()
    c.save()
    r = run("load", str(path), "--format", "json")
    assert r.code == 0
    assert json.loads(r.out)["documents"][0]["pages"] == 3
    assert "warning: urn:doc:blank-page.pdf: page 2" in r.err
