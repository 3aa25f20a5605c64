"""Result types of ingestion: a decoded document, its parts (pages or sections) and chunk spans.

Every offset and length counts Unicode code points (Python ``str`` indices), so slicing always
gives back the text: ``doc.text[p.offset:p.offset + p.length]`` is part ``p``'s text, and
``parent[c.offset:c.offset + c.length] == c.text`` for a chunk ``c`` of ``parent``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["PartKind", "Part", "DecodedDocument", "ChunkSpan"]

PartKind = Literal["page", "section"]


@dataclass(frozen=True, slots=True)
class Part:
    """A page (paged formats) or a section (headed formats) of a decoded document.

    Attributes:
        kind: ``"page"`` or ``"section"``.
        number: 1-based page number, or 1-based section index.
        label: ``"Page 2"`` for pages, the heading text for sections.
        offset: where the part starts in the document text.
        length: how many characters it spans (0 for a page without text).
    """

    kind: PartKind
    number: int
    label: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class DecodedDocument:
    """The text of one document and how it divides into parts.

    Attributes:
        text: the full document text (for Markdown, the source itself with LF line ends).
        mime_type: ``text/plain``, ``text/markdown``, ``application/pdf`` or ``text/html``.
        title: the document's own title when it has one.
        parts: pages or sections in order; empty when chunks derive from the whole text.
        warnings: non-fatal problems (e.g. a PDF page without text).
    """

    text: str
    mime_type: str
    title: str | None
    parts: tuple[Part, ...] = ()
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        size = len(self.text)
        for part in self.parts:
            if part.offset < 0 or part.length < 0 or part.offset + part.length > size:
                raise ValueError(f"{part.kind} {part.number} lies outside the document text")

    def part_text(self, part: Part) -> str:
        """The text of ``part`` (a slice of :attr:`text`)."""
        return self.text[part.offset : part.offset + part.length]


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk of a parent text.

    Attributes:
        index: 0-based position among the parent's chunks.
        offset: where the chunk starts in the parent text.
        length: its length in characters.
        text: the chunk text, equal to ``parent[offset:offset + length]``.
    """

    index: int
    offset: int
    length: int
    text: str
