"""Short excerpts of chunk texts, centred on what the reader is looking for.

>>> text = "In 1898 the Curies announced a new element. Marie Curie discovered polonium and named it after Poland."
>>> excerpt(text, ["polonium"], width=60)
'…Marie Curie discovered polonium and named it after Poland.'
>>> excerpt(text, [], width=60)
'In 1898 the Curies announced a new element. Marie Curie…'
>>> excerpt("short text", [])
'short text'
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["excerpt", "EXCERPT_WIDTH"]

EXCERPT_WIDTH = 160
_LEAD = 0.25  # share of the window shown before the first hint


def excerpt(text: str, hints: Sequence[str] = (), *, width: int = EXCERPT_WIDTH) -> str:
    """``text`` on one line, cut to about ``width`` characters around the first hint found.

    Ellipses mark the cuts; without a hint in the text the excerpt starts at the beginning.
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    positions = [lower.find(h.lower()) for h in hints if h and h.strip()]
    hit = min((p for p in positions if p >= 0), default=0)
    start = max(0, min(hit - int(width * _LEAD), len(flat) - width))
    if start > 0:
        space = flat.find(" ", start, hit if hit > start else start + width)
        start = space + 1 if space >= 0 else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    body = flat[start:end].strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(flat) else "")
