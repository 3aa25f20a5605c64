"""PDF decoding with pypdf: one part per page.

The document text is the pages' texts (each stripped of surrounding whitespace, LF line ends)
joined with ``"\\n\\n"``; page ``n`` (1-based) is the part at its exact offset in that text. A
page without extractable text (e.g. a scanned image) stays a page of length 0 and adds a
warning; when every page is empty the PDF is rejected. PDFs locked with a user password are
rejected; ones with only an owner password (readable by anyone) are decoded. What pypdf logs about
a damaged file ("EOF marker not found") becomes a warning of the document, never a line on stderr.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from provgraph.errors import DecodeError
from provgraph.ingest.text_decoder import normalize_newlines
from provgraph.ingest.types import DecodedDocument, Part

__all__ = ["PDF_MIME", "PAGE_SEPARATOR", "decode_pdf"]

PDF_MIME = "application/pdf"
PAGE_SEPARATOR = "\n\n"
_NO_TITLE = frozenset({"untitled", "(untitled)", "untitled document"})  # placeholders PDF tools write


class _PypdfNotes(logging.Handler):
    """pypdf's log records, kept for the decode running in the same thread. Being a handler of the ``pypdf``
    logger, it also keeps Python's last-resort handler from printing them on stderr; records still
    propagate to an application's own logging."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        found = getattr(self._local, "found", None)
        if found is not None:
            found.append(" ".join(record.getMessage().split()))

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        """The messages pypdf logs in this thread while the block runs."""
        outer = getattr(self._local, "found", None)
        found: list[str] = []
        self._local.found = found
        try:
            yield found
        finally:
            self._local.found = outer


_NOTES = _PypdfNotes()
logging.getLogger("pypdf").addHandler(_NOTES)


def _clean(text: str) -> str:
    """Page text as stored: LF line ends, no NULs or lone surrogates, stripped."""
    text = normalize_newlines(text).replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.strip()


def _open(data: bytes, name: str) -> Any:
    """A pypdf reader over ``data``, decrypted when no password is needed."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data))
        encrypted = reader.is_encrypted
    except Exception as exc:  # pypdf raises many types on damaged files
        raise DecodeError(f"{name}: corrupt or unreadable PDF ({type(exc).__name__}: {exc})") from exc
    if encrypted:
        try:
            opened = bool(reader.decrypt(""))
        except DependencyError as exc:
            raise DecodeError(f"{name}: the PDF is encrypted and its cipher is not supported ({exc})") from exc
        except Exception:
            opened = False
        if not opened:
            raise DecodeError(f"{name}: the PDF is encrypted (password protected); save a decrypted copy first")
    return reader


def _title(reader: Any) -> str | None:
    try:
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception:  # broken metadata must not stop the text
        return None
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    return title if title and title.lower() not in _NO_TITLE else None


def decode_pdf(data: bytes, *, name: str) -> DecodedDocument:
    """Decode a PDF into its page texts, one :class:`Part` per page.

    Raises :class:`DecodeError` for an empty, corrupt or encrypted PDF, and for one with no
    extractable text on any page.
    """
    if not data:
        raise DecodeError(f"{name}: the file is empty")
    with _NOTES.capture() as logged:
        decoded = _decode(data, name)
    if not logged:
        return decoded
    notes = tuple(f"pypdf: {m}" for m in dict.fromkeys(logged) if m)
    return replace(decoded, warnings=decoded.warnings + notes)


def _decode(data: bytes, name: str) -> DecodedDocument:
    reader = _open(data, name)
    notes: list[str] = []
    texts: list[str] = []
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise DecodeError(f"{name}: corrupt or unreadable PDF ({type(exc).__name__}: {exc})") from exc
    for number, page in enumerate(pages, start=1):
        try:
            text = _clean(page.extract_text() or "")
        except Exception as exc:
            notes.append(f"page {number}: text extraction failed ({type(exc).__name__}: {exc})")
            text = ""
        if not text:
            notes.append(f"page {number}: no extractable text (a scanned image?)")
        texts.append(text)
    if not pages:
        raise DecodeError(f"{name}: the PDF has no pages")
    if not any(texts):
        raise DecodeError(
            f"{name}: no extractable text on any of its {len(pages)} page(s) (a scanned PDF? run OCR first)"
        )
    parts: list[Part] = []
    offset = 0
    for number, text in enumerate(texts, start=1):
        if number > 1:
            offset += len(PAGE_SEPARATOR)
        parts.append(Part(kind="page", number=number, label=f"Page {number}", offset=offset, length=len(text)))
        offset += len(text)
    return DecodedDocument(
        text=PAGE_SEPARATOR.join(texts),
        mime_type=PDF_MIME,
        title=_title(reader),
        parts=tuple(parts),
        warnings=tuple(notes),
    )
