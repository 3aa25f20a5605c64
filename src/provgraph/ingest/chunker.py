"""Recursive character chunking with exact offsets.

Each chunk ends at the strongest boundary found in the last three quarters of its window of
``size`` characters: a paragraph break (``"\\n\\n"``), else a line break, else a sentence end,
else a space, else a hard split (never inside a combining sequence or emoji ZWJ sequence
when avoidable). This is the recursive paragraph → line → sentence → word → character split,
done on positions so each chunk is a slice of the parent and the cost stays linear. A code
block (:mod:`provgraph.extract.nlp_code`) is cut only when it does not fit: its edges count as
paragraph breaks, boundaries inside it are not used, and a next chunk whose overlap would start
inside one (or inside an inline code span) starts after it, so a chunk's text tells where its code is.

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
from bisect import bisect_right
from collections.abc import Iterator

from provgraph.errors import InputError
from provgraph.extract.nlp_code import code_blocks, inline_code
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


def _split_point(text: str, lo: int, hi: int, code: list[tuple[int, int]]) -> int:
    """Where a chunk ends: the strongest boundary in ``[lo, hi]`` outside code blocks, else a cut at ``hi``."""
    spans = list(_blocks_in(code, lo, hi))
    if not spans:
        return _plain_split_point(text, lo, hi)
    free: list[tuple[int, int]] = []  # the stretches of [lo, hi] where a cut leaves every block whole
    pos = lo
    for s, e in spans:
        if s >= pos:
            free.append((pos, s))
        pos = max(pos, e)
    if pos <= hi:
        free.append((pos, hi))
    if not free:  # one block fills the window: cut it like any text
        return _plain_split_point(text, lo, hi)
    edges = [p for s, e in spans for p in (s, e) if lo <= p <= hi]  # a block's edges are paragraph breaks
    return max([p for a, b in free if (p := text.rfind("\n\n", a, b + 2)) >= a] + edges)


def _plain_split_point(text: str, lo: int, hi: int) -> int:
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
    blocks = code_blocks(text)
    code = [(b.offset, b.offset + b.length) for b in blocks]
    starts_out = sorted(code + list(inline_code(text, blocks)))  # where a chunk may not start
    chunks: list[ChunkSpan] = []
    start = fresh = first.start()  # fresh: the first non-space character not yet in a chunk
    while True:
        if stop - start <= size:
            end = stop
        else:
            end = _split_point(text, max(start + min_fill, fresh + 1), start + size, code)
            end = start + len(text[start:end].rstrip())
        chunks.append(ChunkSpan(index=len(chunks), offset=start, length=end - start, text=text[start:end]))
        if end >= stop:
            return tuple(chunks)
        fresh = _non_space_from(text, end)
        start = _non_space_from(text, _out_of_code(starts_out, _next_start(text, start, end, overlap), end))
        if fresh - start >= size:  # only whitespace would follow the overlap in the window
            start = fresh


def _out_of_code(code: list[tuple[int, int]], pos: int, end: int) -> int:
    """``pos``, or the end of the code block it falls inside when that block ends by ``end``."""
    for s, e in _blocks_in(code, pos, pos):
        if s < pos < e <= end:
            return e
    return pos


def _blocks_in(code: list[tuple[int, int]], lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The code blocks (sorted, disjoint ``(start, end)``) that reach into ``[lo, hi]``."""
    for index in range(bisect_right(code, lo, key=lambda block: block[1]), len(code)):
        if code[index][0] > hi:
            return
        yield code[index]


def _non_space_from(text: str, pos: int) -> int:
    """The index of the first non-whitespace character at or after ``pos`` (one must exist)."""
    found = _NON_SPACE.search(text, pos)
    assert found is not None
    return found.start()
