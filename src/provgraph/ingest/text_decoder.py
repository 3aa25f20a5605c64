"""Plain-text decoding, and the byte checks every text format shares.

Text must be UTF-8 (a leading byte-order mark is dropped). Line ends are normalised to LF, so
``\\r\\n`` and ``\\r`` become ``\\n``; all offsets refer to the normalised text. Plain text has
no parts: its chunks derive from the whole document.
"""

from __future__ import annotations

import re

from provgraph.errors import DecodeError
from provgraph.ingest.types import DecodedDocument

__all__ = ["TEXT_MIME", "decode_text", "decode_utf8", "normalize_newlines"]

TEXT_MIME = "text/plain"

_SNIFF = 8192
# C0 controls other than \t \n \v \f \r and ESC: rare in text, common in binary formats.
_CONTROL = re.compile(rb"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF"),
    (b"PK\x03\x04", "a ZIP archive or Office document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip file"),
)


def _binary_kind(data: bytes) -> str | None:
    """What binary data looks like, or ``None`` when it looks like text."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if b"\x00" in data:
        return "NUL bytes"
    head = data[:_SNIFF]
    if len(_CONTROL.findall(head)) * 10 > len(head):
        return "control bytes"
    return None


def normalize_newlines(text: str) -> str:
    """``text`` with CRLF and CR line ends turned into LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_utf8(data: bytes, name: str) -> str:
    """Check ``data`` is non-empty UTF-8 text and return it with LF line ends.

    Raises :class:`DecodeError` for empty data, binary-looking data, and undecodable bytes
    (naming the byte position).
    """
    if not data:
        raise DecodeError(f"{name}: the file is empty")
    kind = _binary_kind(data)
    if kind is not None:
        raise DecodeError(f"{name}: looks like binary data ({kind}), not text; check the file type")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 4].hex(" ")
        raise DecodeError(
            f"{name}: not valid UTF-8 at byte {exc.start} ({exc.reason}: {bad}); convert the file to UTF-8"
        ) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise DecodeError(f"{name}: the file is empty (only whitespace)")
    return normalize_newlines(text)


def decode_text(data: bytes, *, name: str) -> DecodedDocument:
    """Decode UTF-8 plain text; raises :class:`DecodeError` (see :func:`decode_utf8`)."""
    return DecodedDocument(text=decode_utf8(data, name), mime_type=TEXT_MIME, title=None)
