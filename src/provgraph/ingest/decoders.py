"""Decoding dispatch: pick a decoder by file suffix or MIME type, with a size guard.

>>> mime_type_for(Path("notes.MD"))
'text/markdown'
>>> decode_bytes(b"# Hi\\nthere", mime_type="text/markdown", name="x.md").parts[0].label
'Hi'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from provgraph.errors import InputError, NotFound
from provgraph.ingest.html_decoder import HTML_MIME, decode_html
from provgraph.ingest.markdown_decoder import MARKDOWN_MIME, decode_markdown
from provgraph.ingest.pdf_decoder import PDF_MIME, decode_pdf
from provgraph.ingest.text_decoder import TEXT_MIME, decode_text
from provgraph.ingest.types import DecodedDocument

__all__ = [
    "require_regular_file",
    "DEFAULT_MAX_BYTES",
    "SUFFIXES",
    "MIME_TYPES",
    "mime_type_for",
    "read_file",
    "decode_bytes",
    "decode_file",
]

DEFAULT_MAX_BYTES = 64 * 1024 * 1024

SUFFIXES: dict[str, str] = {
    ".txt": TEXT_MIME,
    ".text": TEXT_MIME,
    ".md": MARKDOWN_MIME,
    ".markdown": MARKDOWN_MIME,
    ".pdf": PDF_MIME,
    ".html": HTML_MIME,
    ".htm": HTML_MIME,
}

_DECODERS: dict[str, Callable[..., DecodedDocument]] = {
    TEXT_MIME: decode_text,
    MARKDOWN_MIME: decode_markdown,
    PDF_MIME: decode_pdf,
    HTML_MIME: decode_html,
}
MIME_TYPES: tuple[str, ...] = tuple(_DECODERS)
_ALIASES = {"text/x-markdown": MARKDOWN_MIME, "application/xhtml+xml": HTML_MIME}


def _supported_suffixes() -> str:
    return " ".join(SUFFIXES)


def mime_type_for(path: Path) -> str:
    """The MIME type decoding ``path`` would use; :class:`InputError` for an unsupported suffix."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        shown = f"suffix {suffix!r}" if suffix else "no suffix"
        raise InputError(f"{path}: unsupported file type ({shown}); supported: {_supported_suffixes()}")
    return SUFFIXES[suffix]


def _check_size(size: int, max_bytes: int, name: str) -> None:
    if size > max_bytes:
        raise InputError(
            f"{name}: file too large ({size:,} bytes; the limit is {max_bytes:,}); split it or raise the limit"
        )


def decode_bytes(
    data: bytes, *, mime_type: str, name: str, max_bytes: int = DEFAULT_MAX_BYTES
) -> DecodedDocument:
    """Decode ``data`` of ``mime_type`` (parameters such as ``; charset=…`` are ignored).

    ``name`` only labels error messages. Raises :class:`InputError` for an unsupported MIME
    type or data over ``max_bytes``, :class:`~provgraph.errors.DecodeError` when it cannot be
    decoded.
    """
    base = mime_type.split(";", 1)[0].strip().lower()
    base = _ALIASES.get(base, base)
    decoder = _DECODERS.get(base)
    if decoder is None:
        raise InputError(f"{name}: unsupported MIME type {mime_type!r}; supported: {', '.join(MIME_TYPES)}")
    _check_size(len(data), max_bytes, name)
    return decoder(data, name=name)


_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _refuse_unless_regular(path: Path, mode: int, verb: str = "loaded") -> None:
    """Only regular files are read: anything else is refused by what it is, never by its size."""
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
    via = " (through a symbolic link)" if path.is_symlink() else ""
    raise InputError(f"{path}: is {kind}{via}, not a regular file; only regular files are {verb}")


def require_regular_file(path: Path, *, verb: str = "loaded") -> None:
    """Raise :class:`NotFound` when ``path`` names nothing, :class:`InputError` unless it names a regular file
    (symbolic links followed)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such file") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    _refuse_unless_regular(path, mode, verb)


def read_file(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, reading at most ``max_bytes``.

    Raises :class:`InputError` for a missing or unreadable file, for anything that is not a regular
    file (directory, FIFO, socket, device; symbolic links are followed, then judged the same way),
    and for a file over ``max_bytes`` (checked before reading, and again while reading).
    """
    try:
        _refuse_unless_regular(path, path.stat().st_mode)  # sockets cannot even be opened
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())  # the file actually opened, not what the name pointed at before
            _refuse_unless_regular(path, info.st_mode)
            _check_size(info.st_size, max_bytes, str(path))
            data = handle.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such file") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    _check_size(len(data), max_bytes, str(path))  # it grew while we read
    return data


def decode_file(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> DecodedDocument:
    """Read and decode the file at ``path``, choosing the decoder by its suffix.

    Raises :class:`InputError` for an unsupported suffix and as :func:`read_file` does, and
    :class:`~provgraph.errors.DecodeError` when the content cannot be decoded.
    """
    mime_type = mime_type_for(path)
    data = read_file(path, max_bytes=max_bytes)
    return decode_bytes(data, mime_type=mime_type, name=str(path), max_bytes=max_bytes)
