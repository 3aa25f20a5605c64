"""HTML decoding: the visible text, with sections from ``<h1>``–``<h6>``.

Only what a reader sees is kept: the contents of ``<head>`` (except the ``<title>``, which
becomes the document title), ``<script>``, ``<style>``, ``<template>``, ``<noscript>``,
``<svg>``, ``<iframe>``, ``<object>`` and elements with a ``hidden`` attribute are dropped.
Whitespace collapses as a browser does (except inside ``<pre>``). Paragraph-like blocks
(``p``, headings, lists, tables, ``pre``, ``blockquote``, sectioning elements) are separated
by a blank line, other blocks (``div``, ``li``, ``tr``, ``br``…) by a line break, table cells
by a space. Sections follow :mod:`provgraph.ingest.sections`, one per non-empty heading.
Without a ``<title>``, the first ``<h1>`` is the title.

Encoding: a byte-order mark, else ``<meta charset>`` (or ``http-equiv`` content type) in the
first 2 KiB, else UTF-8.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser

from provgraph.errors import DecodeError
from provgraph.ingest.sections import sections_from_headings
from provgraph.ingest.text_decoder import decode_utf8, normalize_newlines
from provgraph.ingest.types import DecodedDocument

__all__ = ["HTML_MIME", "decode_html", "html_to_text"]

HTML_MIME = "text/html"

_SKIP = frozenset({"script", "style", "template", "noscript", "svg", "iframe", "object"})
_HEAD_ONLY = frozenset({"title", "meta", "link", "base", "script", "style", "noscript", "template"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
_PARAGRAPH = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "ul", "ol", "dl", "table", "hr",
        "figure", "section", "article", "header", "footer", "nav", "aside", "main", "form", "fieldset",
        "address", "details",
    }
)  # fmt: skip
_LINE = frozenset({"div", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "legend", "option"})
_CELL = frozenset({"td", "th"})
_HEADING = {f"h{n}": n for n in range(1, 7)}
_SPACES = re.compile(r"[ \t\n\r\f]+")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class _VisibleText(HTMLParser):
    """Collects visible text and heading positions while parsing."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.size = 0
        self.pending = 0  # line breaks owed before the next text
        self.skip: list[str] = []  # stack of open dropped elements
        self.in_head = False
        self.title: list[str] | None = None
        self.titles: list[str] = []
        self.pre = 0
        self.heading: tuple[int, list[str]] | None = None  # (level, label pieces)
        self.heading_start = -1
        self.headings: list[tuple[int, str, int]] = []

    # -- output -------------------------------------------------------------------------
    def _ends_blank(self) -> bool:
        return not self.out or self.out[-1][-1] in " \n"

    def _emit(self, text: str) -> None:
        if self.pending:
            while self.out:  # no trailing spaces before a line break
                last = self.out[-1]
                trimmed = last.rstrip(" ")
                if trimmed == last:
                    break
                self.size -= len(last) - len(trimmed)
                if trimmed:
                    self.out[-1] = trimmed
                    break
                self.out.pop()
            if self.out:
                text = "\n" * self.pending + text
        self.pending = 0
        if self.heading is not None and self.heading_start < 0:
            self.heading_start = self.size + len(text) - len(text.lstrip("\n"))
        self.out.append(text)
        self.size += len(text)

    def _break(self, lines: int) -> None:
        if self.out:
            self.pending = min(2, max(self.pending, lines))

    # -- parser callbacks -----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.append(tag)
            return
        if self.in_head and tag not in _HEAD_ONLY:
            self.in_head = False
        if tag == "head":
            self.in_head = True
        elif tag == "body":
            self.in_head = False
        if tag in _SKIP or (tag not in _VOID and any(name == "hidden" for name, _ in attrs)):
            self.skip.append(tag)
        elif tag == "title":
            self.title = []
        elif tag == "br":
            if self.out:
                self.pending = min(2, self.pending + 1)
        elif tag in _CELL:
            if not self._ends_blank() and not self.pending:
                self._emit(" ")
        elif tag in _PARAGRAPH or tag in _LINE:
            self._break(2 if tag in _PARAGRAPH else 1)
            if tag == "pre":
                self.pre += 1
            if tag in _HEADING:
                self.heading = (_HEADING[tag], [])
                self.heading_start = -1

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            return
        if tag == "head":
            self.in_head = False
        elif tag == "title" and self.title is not None:
            self.titles.append(_SPACES.sub(" ", "".join(self.title)).strip())
            self.title = None
        elif tag in _PARAGRAPH or tag in _LINE:
            if tag == "pre" and self.pre:
                self.pre -= 1
            if tag in _HEADING and self.heading is not None:
                level, pieces = self.heading
                label = _SPACES.sub(" ", "".join(pieces)).strip()
                if label and self.heading_start >= 0:
                    self.headings.append((self.heading_start, label, level))
                self.heading = None
            self._break(2 if tag in _PARAGRAPH else 1)

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.title is not None:
            self.title.append(data)
            return
        if self.in_head:
            return
        if self.pre:
            text = normalize_newlines(data)
        else:
            text = _SPACES.sub(" ", data)
            if text.startswith(" ") and (self.pending or self._ends_blank()):
                text = text[1:]
        if not text:
            return
        if self.heading is not None:
            self.heading[1].append(text)
        self._emit(text)

    def text(self) -> str:
        """The collected text, trailing spaces removed."""
        return "".join(self.out).rstrip()


def _sniff_encoding(data: bytes) -> str:
    for bom, codec in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return codec
    found = _META_CHARSET.search(data[:2048])
    if found:
        try:
            return codecs.lookup(found.group(1).decode("ascii")).name
        except LookupError:
            pass
    return "utf-8"


def html_to_text(markup: str) -> tuple[str, str | None, list[tuple[int, str, int]]]:
    """Visible text of ``markup``, its ``<title>``, and its headings as ``(offset, label, level)``."""
    parser = _VisibleText()
    parser.feed(markup)
    parser.close()
    text = parser.text()
    headings = [h for h in parser.headings if h[0] < len(text)]
    title = next((t for t in parser.titles if t), None)
    return text, title, headings


def decode_html(data: bytes, *, name: str) -> DecodedDocument:
    """Decode an HTML page into its visible text, title and heading sections.

    Raises :class:`DecodeError` for empty, binary or undecodable data, and for a page with no
    visible text.
    """
    encoding = _sniff_encoding(data)
    if encoding == "utf-8":
        markup = decode_utf8(data, name)
    else:
        try:
            markup = normalize_newlines(data.decode(encoding))
        except UnicodeDecodeError as exc:
            raise DecodeError(f"{name}: not valid {encoding} at byte {exc.start} ({exc.reason})") from exc
    text, title, headings = html_to_text(markup)
    if not text.strip():
        raise DecodeError(f"{name}: the HTML page has no visible text")
    if title is None:
        title = next((label for _, label, level in headings if level == 1), None)
    parts = sections_from_headings(text, [(offset, label) for offset, label, _ in headings])
    return DecodedDocument(text=text, mime_type=HTML_MIME, title=title, parts=parts)
