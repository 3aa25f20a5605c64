"""Render a Markdown-ish text file as a PDF, mechanically (used once to make the sets' .pdf documents).

Uses the sample corpus's renderer (scripts/build_corpus_pdf.py: blank-line paragraphs, a one-line paragraph
without end punctuation is a heading starting a new page), with ``TITLE`` as the first paragraph. Needs
reportlab (a test dependency); the output is the same bytes on every run.

    .venv/bin/python bench/eval/md_to_pdf.py SOURCE.md "Title" OUT.pdf
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from build_corpus_pdf import _story  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.lib.units import cm  # noqa: E402
from reportlab.platypus import SimpleDocTemplate  # noqa: E402


def to_pdf(source: Path, title: str, target: Path) -> None:
    """Write ``source``'s text, headed by ``title``, to ``target``."""
    heading, story = _story(title + "\n\n" + source.read_text(encoding="utf-8"))
    SimpleDocTemplate(str(target), pagesize=A4, title=heading, invariant=1, leftMargin=2.5 * cm,
                      rightMargin=2.5 * cm).build(story)


if __name__ == "__main__":
    to_pdf(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
