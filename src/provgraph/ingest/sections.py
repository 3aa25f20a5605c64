"""Sections of headed formats (Markdown, HTML).

Rule: a section starts at a heading (of any level) and runs up to the next heading of any
level, or to the end of the text. Sections are therefore flat and never overlap: they tile the
text, so chunking every section covers each character exactly once (a nested rule, where a
level-1 section contains its level-2 ones, would chunk the same text twice). Text before the
first heading, when it holds more than whitespace, is a section labelled ``"Preamble"``.
A document without headings has no sections.

>>> [(p.number, p.label, p.offset, p.length) for p in sections_from_headings("ab\\n# T\\nx", [(3, "T")])]
[(1, 'Preamble', 0, 3), (2, 'T', 3, 5)]
"""

from __future__ import annotations

from collections.abc import Sequence

from provgraph.ingest.types import Part

__all__ = ["PREAMBLE_LABEL", "sections_from_headings"]

PREAMBLE_LABEL = "Preamble"


def sections_from_headings(text: str, headings: Sequence[tuple[int, str]]) -> tuple[Part, ...]:
    """Sections of ``text`` given its headings as ``(offset, label)`` in increasing offset order."""
    if not headings:
        return ()
    starts: list[tuple[int, str]] = []
    first = headings[0][0]
    if first > 0 and text[:first].strip():
        starts.append((0, PREAMBLE_LABEL))
    starts.extend(headings)
    parts: list[Part] = []
    for i, (offset, label) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        parts.append(Part(kind="section", number=i + 1, label=label, offset=offset, length=end - offset))
    return tuple(parts)
