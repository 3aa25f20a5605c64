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
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CODE_INDENT", "CodeBlock", "code_blocks", "indent_columns", "inline_code", "line_spans"]

_FENCE = re.compile(r"[ ]{0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)")
_INDENTED = r"(?:[ ]{4}|[ ]{0,3}\t)[ \t]*\S"  # a line indented into code, after a blank line or at the start
_INDENTED_AFTER_BLANK = re.compile(r"\n[ \t]*\n" + _INDENTED)
_INDENTED_FIRST = re.compile(_INDENTED)
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•]|\d{1,9}[.)]|[A-Za-z][.)]|[ivxIVX]{1,5}[.)])(?:[ \t]+|$)")
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
    return found is not None and _matches(fence, found)


def _matches(fence: _Fence, found: _Fence) -> bool:
    """Whether the fence line ``found`` closes the block ``fence`` opened."""
    return found.char == fence.char and found.size >= fence.size and not found.info


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
    if not ("```" in text or "~~~" in text or "\n    " in text or "\t" in text or text.startswith("    ")):
        return ()  # no fence and no indentation: no code (substring tests, fast)
    fences = _fence_lines(text)
    start_in = _opening(text, fences)
    pairs = _pairs(fences, start_in, len(text))
    indented = [m.end() - 1 for m in _INDENTED_AFTER_BLANK.finditer(text)] + ([0] if _INDENTED_FIRST.match(text) else [])
    if not any(_outside(pairs, pos) for pos in indented):
        return tuple(_block(text, lo, hi, body_lo, body_hi, info) for lo, hi, body_lo, body_hi, info in pairs)
    return tuple(_scan(text, line_spans(text), start_in))  # indented code too: read line by line


def _fence_lines(text: str) -> list[tuple[int, int, _Fence]]:
    """``(line start, line end, fence)`` of every fence line (found by substring search: fast)."""
    found: list[tuple[int, int, _Fence]] = []
    for mark in ("```", "~~~"):
        pos, done = text.find(mark), -1
        while pos >= 0:
            start = text.rfind("\n", 0, pos) + 1
            if start > done and pos - start <= 3 and not text[start:pos].strip(" "):
                end = text.find("\n", pos)
                end = len(text) if end < 0 else end
                fence = _fence(text[start:end])
                if fence is not None:
                    found.append((start, end, fence))
                done = end
            pos = text.find(mark, max(pos + 3, done))
    return sorted(found, key=lambda line: line[0])


def _pairs(fences: list[tuple[int, int, _Fence]], inside: _Fence | None,
           size: int) -> list[tuple[int, int, int, int, str]]:
    """``(start, end, body start, body end, info)`` of the fenced blocks made by the fence lines."""
    out: list[tuple[int, int, int, int, str]] = []
    fence, start, body = inside, 0, 0
    for lo, hi, found in fences:
        if fence is None:
            fence, start, body = found, lo, min(hi + 1, size)
        elif _matches(fence, found):
            out.append((start, hi, body, lo, fence.info))
            fence = None
    if fence is not None:
        out.append((start, size, body, size, fence.info))
    return out


def _outside(pairs: list[tuple[int, int, int, int, str]], pos: int) -> bool:
    return not any(lo <= pos < hi for lo, hi, *_ in pairs)


def _opening(text: str, fences: list[tuple[int, int, _Fence]]) -> _Fence | None:
    """The fence ``text`` starts inside of (a text cut out of a longer one), else ``None``.

    Only a bare first fence line can close a block the text starts in: it does when the fence
    lines pair up better that way (their openers carry info strings), or, when it is the only
    fence line, when the text before it reads as code (or is empty) and the text after it does not.
    """
    if not fences or fences[0][2].info:
        return None
    first = fences[0][2]
    score = {start: sum(1 if f.info else -1 for f in _openers(fences, start)) for start in (None, first)}
    inside = _openers(fences, first)
    if any(f.info for f in inside) and score[first] > score[None]:
        return first
    if len(fences) > 1:
        return None
    before = text[: fences[0][0]]
    after = text[fences[0][1]:]
    return first if (not before.strip() or _reads_as_code(before)) and not _reads_as_code(after) else None


def _openers(fences: list[tuple[int, int, _Fence]], inside: _Fence | None) -> list[_Fence]:
    found: list[_Fence] = []
    fence = inside
    for _, _, line in fences:
        if fence is None:
            fence = line
            found.append(line)
        elif _matches(fence, line):
            fence = None
    return found


def _reads_as_code(segment: str) -> bool:
    chars = [c for c in segment if not c.isspace()]
    if not chars:
        return False
    return sum(c in _SYMBOLS for c in chars) / len(chars) > _CODE_DENSITY


def _scan(text: str, lines: list[tuple[int, int]], inside: _Fence | None) -> list[CodeBlock]:
    """The blocks of ``text``, line by line; ``inside``: the text starts inside that fence."""
    blocks: list[CodeBlock] = []
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
    return blocks


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
    block_ends = [b.offset + b.length for b in found]
    runs = [run for run in _tick_runs(text) if not _in_block(found, block_ends, run[0])]
    if len(runs) < 2:
        return ()
    # a span stays in its paragraph and outside code blocks: group the runs by what separates them
    breaks = sorted([m.start() for m in _PARAGRAPH_BREAK.finditer(text)] + [b.offset for b in found])
    spans: list[tuple[int, int]] = []
    group: list[tuple[int, int]] = []
    area = -1
    for run in runs:
        here = bisect_right(breaks, run[0])
        if here != area:
            spans += _paired_runs(group)
            group, area = [], here
        group.append(run)
    return tuple(spans + _paired_runs(group))


def _tick_runs(text: str) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    pos = text.find("`")
    while pos >= 0:
        end = pos + 1
        while end < len(text) and text[end] == "`":
            end += 1
        runs.append((pos, end))
        pos = text.find("`", end)
    return runs


def _in_block(blocks: Sequence[CodeBlock], ends: list[int], pos: int) -> bool:
    index = bisect_right(ends, pos)
    return index < len(blocks) and blocks[index].offset <= pos


def _paired_runs(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of one paragraph's backtick runs: each up to the next run of the same length (linear time)."""
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
