"""The sample corpus in examples/corpus: files, formats, sizes and the generated PDF."""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "examples" / "corpus"
PDF = CORPUS / "rutherford_radiation.pdf"
PDF_SOURCE = ROOT / "scripts" / "corpus_src" / "rutherford_radiation.txt"
DOCUMENTS = {
    "becquerel_rays.txt",
    "radium_institute.txt",
    "polonium_and_radium.md",
    "nobel_prizes.html",
    "rutherford_radiation.pdf",
}
MIN_CHARS, MAX_CHARS = 2_500, 6_000
KNOWN_SENTENCE = "In 1903 Rutherford named them gamma rays."


class _VisibleText(HTMLParser):
    """Collects the text a browser shows: no <script>, <style> or <title>."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "title"):
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _pdf_text() -> str:
    return _squash(" ".join(page.extract_text() for page in PdfReader(PDF).pages))


def test_corpus_has_exactly_the_five_documents() -> None:
    names = {path.name for path in CORPUS.iterdir()}
    assert names == DOCUMENTS  # the README lives one folder up, so loading the folder loads only these
    suffixes = sorted(Path(name).suffix for name in DOCUMENTS)
    assert suffixes == [".html", ".md", ".pdf", ".txt", ".txt"]
    assert not (CORPUS / "rutherford_radiation.txt").exists()


@pytest.mark.parametrize(
    "name", ["becquerel_rays.txt", "radium_institute.txt", "polonium_and_radium.md"]
)
def test_text_documents_are_short_utf8_prose(name: str) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    assert MIN_CHARS <= len(text) <= MAX_CHARS
    assert "Marie Curie" in text


def test_markdown_has_headings() -> None:
    lines = (CORPUS / "polonium_and_radium.md").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    assert sum(line.startswith("## ") for line in lines) >= 3


def test_html_has_title_headings_and_hidden_script_and_style() -> None:
    page = (CORPUS / "nobel_prizes.html").read_text(encoding="utf-8")
    assert "<title>The Nobel Prizes of 1903 and 1911</title>" in page
    for tag in ("<h1>", "<h2>", "<script>", "<style>"):
        assert tag in page
    parser = _VisibleText()
    parser.feed(page)
    visible = _squash(" ".join(parser.parts))
    assert MIN_CHARS <= len(visible) <= MAX_CHARS
    assert "MUST NOT BE SHOWN" not in visible
    assert "Marie Curie received the Nobel Prize in Chemistry in 1911." in visible


def test_pdf_is_small_has_pages_and_a_text_layer() -> None:
    assert PDF.read_bytes().startswith(b"%PDF-")
    assert PDF.stat().st_size <= 200 * 1024
    assert len(PdfReader(PDF).pages) >= 3
    text = _pdf_text()
    assert KNOWN_SENTENCE in text
    assert "Irène Joliot-Curie and Frédéric Joliot" in text
    assert MIN_CHARS <= len(text) <= MAX_CHARS


def test_pdf_source_text_is_kept_outside_the_corpus() -> None:
    source = PDF_SOURCE.read_text(encoding="utf-8")
    assert KNOWN_SENTENCE in source
    paragraphs = [_squash(p) for p in source.split("\n\n") if p.strip()]
    text = _pdf_text()
    assert all(paragraph in text for paragraph in paragraphs)


def _build_script() -> ModuleType:
    path = ROOT / "scripts" / "build_corpus_pdf.py"
    spec = importlib.util.spec_from_file_location("build_corpus_pdf", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pdf_rebuilds_byte_for_byte(tmp_path: Path) -> None:
    pytest.importorskip("reportlab")
    built = _build_script().build("rutherford_radiation", output_dir=tmp_path)
    assert built.read_bytes() == PDF.read_bytes()


def test_readme_lists_files_and_license() -> None:
    readme = (CORPUS.parent / "README.md").read_text(encoding="utf-8")
    for name in DOCUMENTS:
        assert f"`{name}`" in readme
    assert "written for provgraph" in readme
    assert re.search(r"License: the same as the project", readme)
