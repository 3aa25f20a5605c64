"""Build the sample corpus PDF from its source text (needs reportlab, a test dependency).

    .venv/bin/python scripts/build_corpus_pdf.py [NAME]     # default: rutherford_radiation

Reads ``scripts/corpus_src/NAME.txt`` and writes ``examples/corpus/NAME.pdf``. Source format:
paragraphs separated by blank lines; the first is the title; a one-line paragraph without
final punctuation is a heading, and every heading starts a new page. The output is the same
bytes on every run (reportlab invariant mode: fixed dates and document ID).
"""

from __future__ import annotations

import sys
from pathlib import Path
from xml.sax.saxutils import escape

from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import cm
from reportlab.platypus import Flowable, PageBreak, Paragraph, SimpleDocTemplate, Spacer

__all__ = ["build", "main"]

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = ROOT / "scripts" / "corpus_src"
OUTPUT_DIR = ROOT / "examples" / "corpus"
DEFAULT_NAME = "rutherford_radiation"


def _is_heading(paragraph: str) -> bool:
    return "\n" not in paragraph and not paragraph.endswith((".", "!", "?", ":"))


def _story(text: str) -> tuple[str, list[Flowable]]:
    styles = getSampleStyleSheet()
    body = ParagraphStyle("Body", parent=styles["BodyText"], fontSize=12, leading=17, spaceAfter=8)
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]
    title, rest = paragraphs[0], paragraphs[1:]
    story: list[Flowable] = [Paragraph(escape(title), styles["Title"]), Spacer(1, 0.5 * cm)]
    for index, paragraph in enumerate(rest):
        if _is_heading(paragraph):
            if index > 0:
                story.append(PageBreak())
            story.append(Paragraph(escape(paragraph), styles["Heading2"]))
        else:
            story.append(Paragraph(escape(paragraph), body))
    return title, story


def build(name: str = DEFAULT_NAME, output_dir: Path = OUTPUT_DIR) -> Path:
    """Render ``corpus_src/<name>.txt`` to ``<output_dir>/<name>.pdf`` and return its path."""
    source = SOURCE_DIR / f"{name}.txt"
    target = output_dir / f"{name}.pdf"
    title, story = _story(source.read_text(encoding="utf-8"))
    document = SimpleDocTemplate(
        str(target),
        pagesize=A4,
        title=title,
        author="provgraph sample corpus",
        subject="Written for provgraph; same license as the project",
        creator="scripts/build_corpus_pdf.py",
        invariant=1,
        leftMargin=2.5 * cm,
        rightMargin=2.5 * cm,
    )
    document.build(story)
    return target


def main(argv: list[str]) -> int:
    """Build the PDF named on the command line (or the default one) and print its path."""
    path = build(argv[0] if argv else DEFAULT_NAME)
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
