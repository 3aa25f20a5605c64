"""Recursive character chunking with exact offsets.

Each chunk ends at the strongest boundary found in the last three quarters of its window of
``size`` characters: a paragraph break (``"\\n\\n"``), else a line break, else a sentence end,
else a space, else a hard split (never inside a combining sequence or emoji ZWJ sequence
when avoidable). This is the recursive paragraph → line → sentence → word → character split,
done on positions so each chunk is a slice of the parent and the cost stays linear.

Chunks never start or end with whitespace, never exceed ``size`` characters, and together
hold every non-whitespace character. The next chunk starts about ``overlap`` characters
before the previous one ended, at the first word start in that stretch (chunks shorter than
the overlap are not overlapped).

>>> [(c.offset, c.text) for c in chunk_text("One two. Three four.\\n\\nFive six.", size=22, overlap=5)]
[(0, 'One two. Three four.'), (15, 'four.\\n\\nFive six.')]
"""

from __future__ import annotations

import re
import unicodedata

from provgraph.errors import InputError
from provgraph.ingest.types import ChunkSpan

__all__ = ["DEFAULT_CHUNK_SIZE", "DEFAULT_CHUNK_OVERLAP", "check_chunking", "chunk_text"]

DEFAULT_CHUNK_SIZE = 2000
DEFAULT_CHUNK_OVERLAP = 100

# Greedy ".*" anchored at the window start finds the LAST match in the window, in C.
_LAST_SENTENCE_END = re.compile(r"(?s:.*)(?:[.!?…؟۔][\"'”’»)\]]*(?=\s)|[。！？](?=.))", re.DOTALL)
_LAST_SPACE = re.compile(r"(?s:.*)\s")
_WORD_START = re.compile(r"\s(?=\S)")
_NON_SPACE = re.compile(r"\S")
_JOINERS = frozenset("\u200d\u20e3\ufe0e\ufe0f")
_MAX_GRAPHEME_STEPS = 32


def check_chunking(size: int, overlap: int) -> None:
    """Raise :class:`InputError` unless ``size > 0`` and ``0 <= overlap < size``."""
    if size <= 0:
        raise InputError(f"chunk size must be greater than 0, got {size}")
    if overlap < 0 or overlap >= size:
        raise InputError(f"chunk overlap must be at least 0 and less than the chunk size ({size}), got {overlap}")


def _extends(ch: str) -> bool:
    """Whether ``ch`` continues the grapheme before it (mark, joiner, emoji modifier or tag)."""
    code = ord(ch)
    return (
        ch in _JOINERS
        or unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
    )


def _grapheme_cut(text: str, cut: int, limit: int, step: int) -> int:
    """``cut`` moved by ``step`` (-1 or +1, never reaching ``limit``) off a grapheme's inside.

    Returns ``cut`` unchanged when no grapheme boundary is close enough.
    """
    pos = cut
    for _ in range(_MAX_GRAPHEME_STEPS):
        if not (_extends(text[pos]) or text[pos - 1] == "\u200d"):
            return pos
        pos += step
        if pos == limit:
            break
    return cut


def _split_point(text: str, lo: int, hi: int) -> int:
    """Where a chunk ends: the strongest boundary in ``[lo, hi]``, else a cut at ``hi``."""
    pos = text.rfind("\n\n", lo, hi + 2)
    if pos >= lo:
        return pos
    pos = text.rfind("\n", lo, hi + 1)
    if pos >= lo:
        return pos
    found = _LAST_SENTENCE_END.match(text, lo, hi + 1)
    if found is not None:
        return found.end()
    found = _LAST_SPACE.match(text, lo, hi + 1)
    if found is not None:
        return found.end() - 1
    return _grapheme_cut(text, hi, lo - 1, -1)


def _next_start(text: str, start: int, end: int, overlap: int) -> int:
    """Where the chunk after ``[start, end)`` starts (before skipping whitespace)."""
    begin = end - overlap
    if overlap == 0 or begin <= start:
        return end
    found = _WORD_START.search(text, begin - 1, end)
    if found is not None:
        return found.end()
    return _grapheme_cut(text, begin, end, +1)


def chunk_text(
    text: str, *, size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_CHUNK_OVERLAP
) -> tuple[ChunkSpan, ...]:
    """Split ``text`` into overlapping chunks of at most ``size`` characters.

    Offsets are into ``text``: ``text[c.offset:c.offset + c.length] == c.text`` for every
    chunk. A text of only whitespace has no chunks. Raises :class:`InputError` for a bad
    ``size`` or ``overlap`` (see :func:`check_chunking`).
    """
    check_chunking(size, overlap)
    first = _NON_SPACE.search(text)
    if first is None:
        return ()
    stop = len(text.rstrip())
    min_fill = max(1, size // 4)
    chunks: list[ChunkSpan] = []
    start = fresh = first.start()  # fresh: the first non-space character not yet in a chunk
    while True:
        if stop - start <= size:
            end = stop
        else:
            end = _split_point(text, max(start + min_fill, fresh + 1), start + size)
            end = start + len(text[start:end].rstrip())
        chunks.append(ChunkSpan(index=len(chunks), offset=start, length=end - start, text=text[start:end]))
        if end >= stop:
            return tuple(chunks)
        fresh = _non_space_from(text, end)
        start = _non_space_from(text, _next_start(text, start, end, overlap))
        if fresh - start >= size:  # only whitespace would follow the overlap in the window
            start = fresh


def _non_space_from(text: str, pos: int) -> int:
    """The index of the first non-whitespace character at or after ``pos`` (one must exist)."""
    found = _NON_SPACE.search(text, pos)
    assert found is not None
    return found.start()
