"""PDF builders for the ingest tests (real PDFs made with reportlab and pypdf)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import pytest
from pypdf import PdfReader, PdfWriter
from reportlab.pdfgen import canvas

PdfMaker = Callable[..., bytes]


def build_pdf(pages: Sequence[Sequence[str]], title: str | None = None) -> bytes:
    """A PDF with one page per item, each line drawn as text; an empty item is a blank page."""
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, invariant=True)
    if title:
        pdf.setTitle(title)
    for lines in pages:
        for i, line in enumerate(lines):
            pdf.drawString(72, 720 - 16 * i, line)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def encrypt_pdf(data: bytes, user_password: str, owner_password: str | None = None) -> bytes:
    """``data`` encrypted by pypdf's writer."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password, owner_password=owner_password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.fixture
def make_pdf() -> PdfMaker:
    return build_pdf


@pytest.fixture
def three_page_pdf() -> bytes:
    """Pages 1 and 3 have text, page 2 is blank."""
    return build_pdf(
        [["Marie Curie discovered polonium.", "She was born in Warsaw."], [], ["Radium came next."]],
        title="Curie notes",
    )


@pytest.fixture
def encrypted_pdf(three_page_pdf: bytes) -> bytes:
    return encrypt_pdf(three_page_pdf, "secret")


@pytest.fixture
def owner_locked_pdf(three_page_pdf: bytes) -> bytes:
    return encrypt_pdf(three_page_pdf, "", owner_password="owner")
