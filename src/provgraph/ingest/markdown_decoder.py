"""Markdown decoding: the text is the Markdown source itself, sections come from its headings.

The document text is the UTF-8 source with LF line ends (see :mod:`provgraph.ingest.text_decoder`),
so offsets point straight into what the author wrote. Sections follow the flat rule of
:mod:`provgraph.ingest.sections`: each starts at a heading line and ends at the next heading of
any level. Headings recognised:

* ATX headings, ``# Title`` to ``###### Title`` (up to 3 spaces of indent; a closing ``#``
  sequence is dropped from the label), outside fenced code blocks (``````` or ``~~~``);
* setext headings, a one-line paragraph underlined with ``===`` (level 1) or ``---``
  (level 2). A ``---`` under a blank line, a list item, a quote or a table is not a heading.

The title is ``title:`` from a leading YAML front-matter block, else the first level-1 heading.
Front matter is kept in the text (it belongs to the preamble) but never yields headings.
"""

from __future__ import annotations

import re

from provgraph.ingest.sections import sections_from_headings
from provgraph.ingest.text_decoder import decode_utf8
from provgraph.ingest.types import DecodedDocument

__all__ = ["MARKDOWN_MIME", "decode_markdown", "markdown_headings"]

MARKDOWN_MIME = "text/markdown"

# Only lines that could be a heading, a fence or a setext underline are looked at.
_CANDIDATE = re.compile(
    r"^[ ]{0,3}(?:"
    r"(?P<atx>#{1,6})(?:[ \t]+(?P<rest>[^\n]*))?[ \t]*$"
    r"|(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$"
    r"|(?P<under>=+|-+)[ \t]*$"
    r")",
    re.MULTILINE,
)
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|>|[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|\|)")
_BREAK_LINE = re.compile(r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|=+[ \t]*$|-+[ \t]*$)")
_FRONT_MATTER = re.compile(r"---[ \t]*\n(?P<body>.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|$)", re.DOTALL)
_FM_TITLE = re.compile(r"^title:[ \t]*(?P<title>[^\n]*?)[ \t]*$", re.MULTILINE)


def _line_before(text: str, line_start: int) -> tuple[int, str] | None:
    """The line ending just before ``line_start`` as ``(start, text)``, or ``None`` at the top."""
    if line_start == 0:
        return None
    start = text.rfind("\n", 0, line_start - 1) + 1
    return start, text[start : line_start - 1]


def _is_setext(text: str, underline_start: int, top: int) -> tuple[int, str] | None:
    """``(heading offset, label)`` when the underline at ``underline_start`` makes a setext heading."""
    prev = _line_before(text, underline_start)
    if prev is None or prev[0] < top:
        return None
    start, line = prev
    if not line.strip() or line.startswith("    ") or line.startswith("\t") or _NOT_PARAGRAPH.match(line):
        return None
    before = _line_before(text, start)
    if before is not None and before[0] >= top:
        other = before[1]
        if other.strip() and not _BREAK_LINE.match(other):
            return None  # a multi-line paragraph: treat the underline as a thematic break
    return start, line.strip()


def _front_matter(text: str) -> tuple[int, str | None]:
    """Where headings may start (after front matter) and the front matter's title."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return 0, None
    found = _FM_TITLE.search(match.group("body") or "")
    title = found.group("title").strip("\"'").strip() if found else ""
    return match.end(), title or None


def markdown_headings(text: str) -> tuple[list[tuple[int, str, int]], str | None]:
    """Headings of Markdown ``text`` as ``(offset, label, level)``, and the document title."""
    top, title = _front_matter(text)
    headings: list[tuple[int, str, int]] = []
    fence: tuple[str, int] | None = None
    for m in _CANDIDATE.finditer(text, top):
        marker = m.group("fence")
        if fence is not None:
            if marker and marker[0] == fence[0] and len(marker) >= fence[1] and not m.group("info").strip():
                fence = None
            continue
        if marker:
            fence = (marker[0], len(marker))
        elif m.group("atx"):
            label = _CLOSING_HASHES.sub("", m.group("rest") or "").strip()
            if label:
                headings.append((m.start(), label, len(m.group("atx"))))
        else:
            found = _is_setext(text, m.start(), top)
            if found is not None and found[1]:
                level = 1 if m.group("under")[0] == "=" else 2
                if headings and headings[-1][0] == found[0]:
                    continue
                headings.append((found[0], found[1], level))
    if title is None:
        title = next((label for _, label, level in headings if level == 1), None)
    return headings, title


def decode_markdown(data: bytes, *, name: str) -> DecodedDocument:
    """Decode UTF-8 Markdown into its source text and heading sections.

    Raises :class:`~provgraph.errors.DecodeError` like :func:`~provgraph.ingest.text_decoder.decode_utf8`.
    """
    text = decode_utf8(data, name)
    headings, title = markdown_headings(text)
    parts = sections_from_headings(text, [(offset, label) for offset, label, _ in headings])
    return DecodedDocument(text=text, mime_type=MARKDOWN_MIME, title=title, parts=parts)
