"""Reference lists, link lists and boilerplate: chunks that hold no prose to answer from.

A chunk is boilerplate when little of it is prose: most of its lines are citations
("Retrieved …", "ISBN …", "doi:", URLs, ``[3]`` markers, "pp. 12–14"), or it has almost
no words outside brackets and markers, or it is too short to state a fact.

>>> is_boilerplate("[3] Smith, J. Radium. p. 4 [4] [5]")
True
>>> is_boilerplate("Marie Curie discovered polonium in 1898 with her husband Pierre.")
False
"""

from __future__ import annotations

import re

__all__ = ["is_boilerplate", "prose_ratio"]

_CITATION_LINE = re.compile(
    r"(retrieved|archived|isbn|issn|doi|https?://|www\.|\bpp?\.\s*\d|\bvol\.|\bed\.|accessed|ibid|op\. cit"
    r"|external links|see also|references|further reading|bibliography|citation)",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[[^\]]{0,80}\]|\([^)]{0,80}\)|https?://\S+")
_WORD = re.compile(r"[A-Za-zÀ-ÿ]{3,}")
_MIN_WORDS = 8


def prose_ratio(text: str) -> float:
    """Share of the text's lines that are not citation-like (0..1)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return 0.0
    citing = sum(1 for line in lines if _CITATION_LINE.search(line) or line.strip().startswith(("[", "^")))
    return 1.0 - citing / len(lines)


def is_boilerplate(text: str) -> bool:
    """True for reference/link-list/boilerplate chunks (see the module docstring)."""
    bare = _BRACKETED.sub(" ", text)
    words = _WORD.findall(bare)
    if len(words) < _MIN_WORDS:
        return True
    markers = len(re.findall(r"\[\d{1,3}\]", text))
    if markers >= 3 and markers * 6 > len(words):
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) >= 3 and prose_ratio(text) < 0.4
