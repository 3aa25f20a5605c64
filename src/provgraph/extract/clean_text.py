"""Markup-free text of the same length: what extractors and answers read, offsets unchanged.

Markdown emphasis (``_Le Monde_``, ``**bold**``), inline code ticks, link syntax
(``[text](url)`` keeps ``text``) and footnote markers (``[8]``, ``[8][9]``, ``[a]``,
``[citation needed]``) are replaced by spaces, character for character. The result has the
input's length, so an offset into it is the same offset into the original text (the offset
map is the identity), and a footnote marker glued to a full stop (``1898.[8] The``) no
longer hides the sentence boundary.

>>> blank_markup("_Le Monde_ said so.[8][9] Then")
' Le Monde  said so.       Then'
>>> strip_markers("It glows [3] in the dark.[4]")
'It glows in the dark.'
"""

from __future__ import annotations

import re

__all__ = ["blank_markup", "strip_markers", "FOOTNOTE"]

FOOTNOTE = re.compile(r"\[(?:\d{1,3}|[a-z]|note \d{1,3}|citation needed|nb \d{1,3})\](?!\()", re.IGNORECASE)
"""A footnote marker of the source text, e.g. ``[8]`` (never a Markdown link's text)."""

_LINK = re.compile(r"(!?\[)([^\[\]\n]{1,300})(\]\([^()\s]{0,800}(?:\s+\"[^\"\n]*\")?\))")
_EMPHASIS = re.compile(r"(?<![\w*_])([*_]{1,3})(?=[^\s*_])([^\n]{1,300}?)(?<=[^\s*_])\1(?![\w*_])")
_TICKS = re.compile(r"`+")


def _spaces(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _keep_middle(match: re.Match[str]) -> str:
    return " " * len(match.group(1)) + match.group(2) + " " * len(match.group(3))


def _emphasis(match: re.Match[str]) -> str:
    marks = " " * len(match.group(1))
    return marks + match.group(2) + marks


def blank_markup(text: str) -> str:
    """``text`` with markup and footnote markers replaced by spaces (same length)."""
    out = _LINK.sub(_keep_middle, text)
    out = FOOTNOTE.sub(_spaces, out)
    out = _EMPHASIS.sub(_emphasis, out)
    out = _TICKS.sub(_spaces, out)
    assert len(out) == len(text)
    return out


def strip_markers(sentence: str) -> str:
    """A sentence for quoting: markup and footnote markers removed, one space between words."""
    flat = " ".join(blank_markup(sentence).split())
    return re.sub(r"\s+([.,;:!?])", r"\1", flat)
