"""Code in text: fenced and indented code blocks and inline code spans, with exact offsets.

Code is not prose. Sentences never cover a code block (:mod:`provgraph.extract.nlp_sentences`),
so neither answers nor the offline extraction read code as prose; a code block is a unit of its
own (:class:`CodeBlock`, its code without fences or info string). Inline code keeps its
characters verbatim (:mod:`provgraph.extract.clean_text`). The rules are CommonMark's, as far as
one piece of text (often a chunk cut out of a longer document) can tell:

* a fenced block opens at a line of three or more backticks or tildes (indented at most three
  spaces; a backtick fence's info string holds no backtick) and closes at a line of the same
  character, at least as long, with nothing after it, else at the end of the text. A text cut
  out inside a block shows that block's closing fence first: when the first fence line is bare
  and the fences pair up better that way (the openers carry info strings), or the text before
  it reads as code and the text after it does not, the text starts inside a block;
* an indented block is a run of lines indented four columns or more beyond the current list
  item's content, after a blank line or at the start of the text, with the blank lines between
  them; an indented list item is a list, not code (plain-text lists are often indented), and
  an indented block with sentence ends, few code symbols and no columns is a quotation, not code;
* an inline span is a run of n backticks up to the next run of exactly n in the same paragraph.

>>> [(b.info, b.text) for b in code_blocks("Run it:\\n\\n```python\\nclient = Client()\\n```\\nDone.")]
[('python', 'client = Client()')]
>>> inline_code("the `.rc` file")
((4, 9),)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CODE_INDENT", "CodeBlock", "code_blocks", "indent_columns", "inline_code", "line_spans"]

_MAYBE = re.compile(r"^(?:[ ]{0,3}(?:`{3}|~{3})|[ ]{4}|[ ]{0,3}\t)", re.MULTILINE)  # a fence or an indent
_FENCE = re.compile(r"[ ]{0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•]|\d{1,9}[.)]|[A-Za-z][.)]|[ivxIVX]{1,5}[.)])(?:[ \t]+|$)")
_TICKS = re.compile(r"`+")
_ALIGNED = re.compile(r"\S[ \t]{2,}\S")  # columns lined up with spaces: preformatted, not prose
_SENTENCE_END = re.compile(r"\w[.!?…][\"'”’)\]]*(?:\s|$)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SYMBOLS = frozenset("{}()[];=<>|&$#\\/*+_")
_CODE_DENSITY = 0.06  # symbols per non-space character above which a run of lines reads as code
CODE_INDENT = 4
"""Columns of indentation that make a line after a blank line code."""


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A code block of the input: ``input[offset:offset + length]`` is the whole block (fences
    included), ``text == input[body_offset:body_offset + body_length]`` its code."""

    offset: int
    length: int
    body_offset: int
    body_length: int
    text: str
    info: str  # a fenced block's info string ("python"), "" for none or an indented block


@dataclass(frozen=True, slots=True)
class _Fence:
    char: str
    size: int
    info: str


def line_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line of ``text`` (``end`` is the line's newline or the text's end)."""
    lines: list[tuple[int, int]] = []
    pos = 0
    while True:
        newline = text.find("\n", pos)
        if newline < 0:
            lines.append((pos, len(text)))
            return lines
        lines.append((pos, newline))
        pos = newline + 1


def _fence(line: str) -> _Fence | None:
    match = _FENCE.fullmatch(line)
    if match is None:
        return None
    marks, info = match.group("fence"), match.group("info").strip()
    if marks[0] == "`" and "`" in info:
        return None  # inline code at a line start, not a fence
    return _Fence(marks[0], len(marks), info)


def _closes(fence: _Fence, line: str) -> bool:
    found = _fence(line)
    return found is not None and found.char == fence.char and found.size >= fence.size and not found.info


def indent_columns(line: str) -> int:
    """The indentation of ``line`` in columns (a tab goes to the next multiple of four)."""
    col = 0
    for char in line:
        if char == " ":
            col += 1
        elif char == "\t":
            col += CODE_INDENT - col % CODE_INDENT
        else:
            break
    return col


def code_blocks(text: str) -> tuple[CodeBlock, ...]:
    """The code blocks of ``text``, in order."""
    if _MAYBE.search(text) is None:
        return ()
    lines = line_spans(text)
    first = next((i for i, (lo, hi) in enumerate(lines) if _fence(text[lo:hi])), None)
    blocks, openers = _scan(text, lines, None)
    if first is not None:
        fence = _fence(text[slice(*lines[first])])
        assert fence is not None
        if not fence.info:
            inside, inside_openers = _scan(text, lines, fence)
            if _starts_inside(text, lines[first], openers, inside_openers):
                return tuple(inside)
    return tuple(blocks)


def _score(openers: Sequence[_Fence]) -> int:
    return sum(1 if f.info else -1 for f in openers)


def _starts_inside(text: str, first: tuple[int, int], out: list[_Fence], inside: list[_Fence]) -> bool:
    """Whether a text whose first fence line (``first``) is bare starts inside a code block."""
    if any(f.info for f in inside) and _score(inside) > _score(out):
        return True
    if inside:
        return False
    # the only fence: it closes when the text before it is code (or nothing) and the text after it prose
    before = text[: first[0]]
    return (not before.strip() or _reads_as_code(before)) and not _reads_as_code(text[first[1]:])


def _reads_as_code(segment: str) -> bool:
    chars = [c for c in segment if not c.isspace()]
    if not chars:
        return False
    return sum(c in _SYMBOLS for c in chars) / len(chars) > _CODE_DENSITY


def _scan(text: str, lines: list[tuple[int, int]], inside: _Fence | None) -> tuple[list[CodeBlock], list[_Fence]]:
    """Blocks and fenced-block openers of ``text``; ``inside``: the text starts inside that fence."""
    blocks: list[CodeBlock] = []
    openers: list[_Fence] = []
    fence = inside
    fence_start = body_start = 0
    indented: tuple[int, int] | None = None  # (start, end) of the open indented block
    after_blank = True
    list_indent = 0
    for lo, hi in lines:
        line = text[lo:hi]
        blank = not line.strip()
        if fence is not None:
            if _closes(fence, line):
                blocks.append(_block(text, fence_start, hi, body_start, lo, fence.info))
                fence = None
                after_blank = False
            continue
        cols = indent_columns(line)
        if indented is not None:
            if blank:
                continue
            if cols >= list_indent + CODE_INDENT:
                indented = (indented[0], hi)
                continue
            blocks.extend(_indented(text, *indented))
            indented = None
        opened = _fence(line)
        if opened is not None:
            fence, fence_start, body_start = opened, lo, min(hi + 1, len(text))
            openers.append(opened)
            continue
        if blank:
            after_blank = True
            continue
        item = _LIST_ITEM.match(line)
        if after_blank and cols >= list_indent + CODE_INDENT and item is None:
            indented = (lo + len(line) - len(line.lstrip()), hi)
            continue
        if item is not None:
            list_indent = indent_columns(line[: item.end()]) if item.end() < len(line) else cols + 2
        elif after_blank and cols < list_indent:
            list_indent = 0
        after_blank = False
    if fence is not None:
        blocks.append(_block(text, fence_start, len(text), body_start, len(text), fence.info))
    elif indented is not None:
        blocks.extend(_indented(text, *indented))
    return blocks, openers


def _indented(text: str, start: int, end: int) -> list[CodeBlock]:
    """The indented block ``[start, end)``, unless it reads as prose (an indented quotation or verse)."""
    body = text[start:end]
    if not _reads_as_code(body) and _SENTENCE_END.search(body) and not _ALIGNED.search(body):
        return []
    return [_block(text, start, end, start, end, "")]


def _block(text: str, start: int, end: int, body_start: int, body_end: int, info: str) -> CodeBlock:
    if body_end > body_start and text[body_end - 1] == "\n":
        body_end -= 1  # the line end before the closing fence
    body = text[body_start:body_end]
    return CodeBlock(start, end - start, body_start, len(body), body, info)


def inline_code(text: str, blocks: Sequence[CodeBlock] | None = None) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of every inline code span of ``text`` outside its code blocks, ticks included."""
    if "`" not in text:
        return ()
    found = code_blocks(text) if blocks is None else blocks
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in [*((b.offset, b.offset + b.length) for b in found), (len(text), len(text))]:
        lo = pos
        for brk in [*_PARAGRAPH_BREAK.finditer(text, pos, start), None]:
            hi = start if brk is None else brk.start()
            spans.extend(_paired_runs(text, lo, hi))
            lo = start if brk is None else brk.end()
        pos = end
    return tuple(spans)


def _paired_runs(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Spans of one paragraph: each backtick run up to the next run of the same length (linear time)."""
    runs = [m.span() for m in _TICKS.finditer(text, lo, hi)]
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        size = runs[index][1] - runs[index][0]
        following[index], last[size] = last.get(size), index
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        close = following[index]
        if close is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[close][1]))
        index = close + 1
    return spans
