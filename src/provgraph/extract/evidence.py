"""Aligning a supporting quote to exact offsets in a chunk's text.

Matching ignores case, runs of whitespace, Unicode composition and typographic quotes and dashes
(each character is compared in its NFKD, case-folded form), so an LLM's ``"marie  curie discovered"`` finds ``Marie Curie
discovered`` and the span returned is the exact one in the original text.

>>> align("marie  CURIE discovered", "In 1898 Marie Curie\\ndiscovered polonium.")
(8, 22)
>>> align("not there", "In 1898 Marie Curie discovered polonium.") is None
True
"""

from __future__ import annotations

import unicodedata
from typing import Any

from provgraph.rdf.terms import TripleTerm

# typographic quotes and dashes compare as their plain forms (models often straighten them)
_TYPOGRAPHIC = {**dict.fromkeys("‘’‚‛′", "'"), **dict.fromkeys("“”„‟″«»", '"'), **dict.fromkeys("‐‑‒–—―", "-")}

__all__ = ["align", "folded", "narrow", "MAX_EVIDENCE", "Quotes", "QUOTE_SCHEMA", "QUOTE_LIMIT", "with_quote"]


def folded(text: str) -> tuple[str, list[int]]:
    """``text`` compared form (folded, whitespace runs as one space) and each folded char's source index."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            space = bool(out)
            continue
        if space:
            out.append(" ")
            where.append(i - 1)
            space = False
        for part in unicodedata.normalize("NFKD", _TYPOGRAPHIC.get(ch, ch)).casefold():
            out.append(part)
            where.append(i)
    return "".join(out), where


def align(quote: str, text: str, *, start: int = 0) -> tuple[int, int] | None:
    """``(offset, length)`` of ``quote`` in ``text`` (first match at or after ``start``), or None."""
    needle, _ = folded(quote.strip().strip("\"'“”‘’"))
    if not needle:
        return None
    hay, where = folded(text)
    found = hay.find(needle)
    while found >= 0 and where[found] < start:
        found = hay.find(needle, found + 1)
    if found < 0:
        return None
    first, last = where[found], where[found + len(needle) - 1]
    return first, last + 1 - first


MAX_EVIDENCE = 400
"""Evidence spans longer than this are narrowed when they can be (:func:`narrow`)."""
_BREAKS = ("\n", "; ", ", ", ": ")


def narrow(text: str, span: tuple[int, int], labels: tuple[str, str], *, limit: int = MAX_EVIDENCE) -> tuple[int, int]:
    """``span`` itself when short enough; else the line or clause of it that holds both labels.

    An overlong "sentence" is usually a list or table the splitter could not cut. The result
    runs from the nearest break (line, then ``;``, ``,`` or ``:``) before the first label to the
    nearest one after the last, within ``limit`` characters; the span is kept when the labels
    are not both found or lie further apart than ``limit``.

    >>> text = "Missions: " + ", ".join(f"probe {i} visited moon {i}" for i in range(30)) + "."
    >>> o, n = narrow(text, (0, len(text)), ("probe 7", "moon 7"))
    >>> text[o:o + n]
    'probe 7 visited moon 7'
    """
    start, length = span
    if length <= limit:
        return span
    sentence = text[start:start + length]
    found = [align(label, sentence) for label in labels]
    if any(f is None for f in found):
        return span
    lo = min(f[0] for f in found)  # type: ignore[index]
    hi = max(f[0] + f[1] for f in found)  # type: ignore[index]
    if hi - lo > limit:
        return span
    for mark in _BREAKS:
        left = sentence.rfind(mark, 0, lo)
        left = 0 if left < 0 else left + len(mark)
        right = sentence.find(mark, hi)
        right = len(sentence) if right < 0 else right
        if right - left <= limit:
            lo, hi = left, right
            break
    piece = sentence[lo:hi]
    lead = len(piece) - len(piece.lstrip())
    return start + lo + lead, len(piece.strip())


QUOTE_LIMIT = 250  # within the grammar budget of every extractor schema (models/bounds.py)
QUOTE_SCHEMA = {"type": "string", "minLength": 1, "maxLength": QUOTE_LIMIT}
"""The optional ``quote`` an LLM extractor gives for each item: the sentence(s) stating it."""


def with_quote(schema: dict[str, Any]) -> dict[str, Any]:
    """An item schema with an optional ``quote``: the sentence(s) of the text that state the item."""
    return {**schema, "properties": {**schema["properties"], "quote": QUOTE_SCHEMA}}


class Quotes:
    """Collects each fact's evidence span by aligning the LLM's quote to the chunk's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: dict[TripleTerm, tuple[int, int]] = {}

    def note(self, fact: TripleTerm, item: object) -> None:
        """Record ``item["quote"]``'s span for ``fact`` (first one kept; an unalignable quote is ignored)."""
        quote = item.get("quote") if isinstance(item, dict) else None
        if isinstance(quote, str) and fact not in self.spans:
            span = align(quote, self.text)
            if span is not None:
                self.spans[fact] = span
