from __future__ import annotations

from collections.abc import Callable

import pytest

from provgraph.errors import DecodeError
from provgraph.ingest.pdf_decoder import decode_pdf

PdfMaker = Callable[..., bytes]


def test_three_pages_one_blank(three_page_pdf: bytes) -> None:
    doc = decode_pdf(three_page_pdf, name="c.pdf")
    page1 = "Marie Curie discovered polonium.\nShe was born in Warsaw."
    assert doc.text == page1 + "\n\n" + "\n\n" + "Radium came next."
    assert doc.mime_type == "application/pdf"
    assert doc.title == "Curie notes"
    assert [(p.kind, p.number, p.label, p.offset, p.length) for p in doc.parts] == [
        ("page", 1, "Page 1", 0, len(page1)),
        ("page", 2, "Page 2", len(page1) + 2, 0),
        ("page", 3, "Page 3", len(page1) + 4, len("Radium came next.")),
    ]
    assert [doc.part_text(p) for p in doc.parts] == [page1, "", "Radium came next."]
    assert doc.warnings == ("page 2: no extractable text (a scanned image?)",)


def test_page_count_of_longer_pdf(make_pdf: PdfMaker) -> None:
    doc = make_pdf([[f"Page body {n}"] for n in range(1, 8)])
    decoded = decode_pdf(doc, name="long.pdf")
    assert len(decoded.parts) == 7
    assert [decoded.part_text(p) for p in decoded.parts] == [f"Page body {n}" for n in range(1, 8)]
    assert decoded.title is None


def test_unicode_page_text(make_pdf: PdfMaker) -> None:
    decoded = decode_pdf(make_pdf([["café naïve"]]), name="u.pdf")
    assert decoded.text == "café naïve"


def test_encrypted_pdf(encrypted_pdf: bytes) -> None:
    with pytest.raises(DecodeError) as err:
        decode_pdf(encrypted_pdf, name="locked.pdf")
    assert str(err.value) == "locked.pdf: the PDF is encrypted (password protected); save a decrypted copy first"


def test_pdf_with_only_an_owner_password_is_readable(owner_locked_pdf: bytes) -> None:
    assert len(decode_pdf(owner_locked_pdf, name="o.pdf").parts) == 3


@pytest.mark.parametrize(
    "data",
    [b"%PDF-1.7\nthis is not really a pdf", b"not a pdf at all"],
    ids=["garbage-after-header", "no-header"],
)
def test_corrupt_pdf(data: bytes) -> None:
    with pytest.raises(DecodeError, match=r"^bad\.pdf: corrupt or unreadable PDF \("):
        decode_pdf(data, name="bad.pdf")


def test_truncated_pdf(three_page_pdf: bytes) -> None:
    with pytest.raises(DecodeError, match=r"^cut\.pdf: corrupt or unreadable PDF \("):
        decode_pdf(three_page_pdf[: len(three_page_pdf) // 2], name="cut.pdf")


def test_all_pages_blank(make_pdf: PdfMaker) -> None:
    with pytest.raises(DecodeError) as err:
        decode_pdf(make_pdf([[], []]), name="scan.pdf")
    assert str(err.value) == (
        "scan.pdf: no extractable text on any of its 2 page(s) (a scanned PDF? run OCR first)"
    )


def test_empty_pdf_file() -> None:
    with pytest.raises(DecodeError, match=r"^e\.pdf: the file is empty$"):
        decode_pdf(b"", name="e.pdf")
