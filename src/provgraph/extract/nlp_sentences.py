"""Sentence splitting with exact offsets, for the offline text analysis.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (plus any closing quotes or brackets) when
whitespace and a non-lowercase character follow; a full stop after an abbreviation
("Dr.", "e.g."), an initial ("M. Curie"), inside brackets or inside inline code does not end
one. A line break is no sentence end: a sentence hard-wrapped over several lines (a quoted
one too, ``>`` on every line) is one sentence. Blank lines, Markdown headings, list items,
table rows, HTML tag lines and thematic breaks end a sentence, and so does a title: a short
line without final punctuation that starts a unit (after a blank line or a sentence end) and
is followed by a capitalised line, when a wrapper would not have broken it there (it is
shorter than the line before it by more than the next line's first word). Code blocks
(:mod:`provgraph.extract.nlp_code`) are never part of a sentence.

>>> [s.text for s in split_sentences("# Radium\\nDr. M. Curie found it. It glows (e.g. at night).")]
['Radium', 'Dr. M. Curie found it.', 'It glows (e.g. at night).']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from provgraph.extract.nlp_code import code_blocks, inline_code, line_spans
from provgraph.extract.nlp_lexicon import ABBREVIATIONS, CONNECTORS, STOP_WORDS

__all__ = ["Sentence", "split_sentences", "is_terminated"]

_CLOSERS = "\"'”’»)]"
_TERMINAL = re.compile(r"[.!?…]+[\"'”’»)\]]*")
_WORD_BEFORE = re.compile(r"[\w.'’-]*$")
_INITIALS = re.compile(r"[A-Z](?:\.[A-Z])*")
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")
_MARKER = re.compile(r"[^\S\n]*(?:#{1,6}|[-*+•>]|\d{1,3}[.)])[ \t]+")
_HEADING = re.compile(r"[^\S\n]*#{1,6}[ \t]+")
_QUOTE = re.compile(r"[^\S\n]*>[ \t]?")
_OWN_LINE = re.compile(r"[^\S\n]{0,3}(?:\||</?[A-Za-z][^\n]*>[ \t]*$)")  # a table row, an HTML tag line
_RULE = re.compile(r"[^\S\n]{0,3}(?:=+|-{3,}|\*{3,}|_{3,}|(?:[-*_][ \t]+){2,}[-*_])[ \t]*")
_TITLE_MAX = 60
_PAIRS = {")": "(", "]": "["}


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of the input: ``text == input[offset:offset + length]``."""

    offset: int
    length: int
    text: str


def is_terminated(sentence: str) -> bool:
    """True when the sentence ends with final punctuation (so it is prose, not a heading)."""
    core = sentence.rstrip().rstrip(_CLOSERS)
    return bool(core) and core[-1] in ".!?…"


def split_sentences(text: str) -> tuple[Sentence, ...]:
    """Split ``text`` into sentences whose offsets are indices into ``text``."""
    blocks = code_blocks(text)
    code = [(b.offset, b.offset + b.length) for b in blocks]
    spans = [(lo, hi - 1) for lo, hi in inline_code(text, blocks)]  # like brackets: no sentence end inside
    out: list[Sentence] = []
    for start, end in _blocks(text, code):
        out.extend(_split_block(text, start, end, spans))
    return tuple(out)


def _is_title(line: str, following: str, previous: str) -> bool:
    """A short unpunctuated line followed by a capitalised line stands alone, unless it is wrapped prose."""
    stripped = line.strip()
    if not stripped or len(stripped) > _TITLE_MAX or not following[:1].isupper():
        return False
    if not (stripped[-1].isalnum() or stripped[-1] in _CLOSERS):
        return False
    if previous and len(line) + 1 + len(following.split(maxsplit=1)[0]) > len(previous):
        return False  # the next word would not have fitted: a wrapper broke the line here
    last = stripped.split()[-1].lower()
    return last not in STOP_WORDS and last not in CONNECTORS


def _blocks(text: str, code: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` of runs of lines that no heading, list item, blank line or code splits."""
    start: int | None = None
    end = 0
    previous = ""  # the line before, when it is in the current run
    lines = line_spans(text)
    block = 0
    for index, (lo, hi) in enumerate(lines):
        while block < len(code) and code[block][1] <= lo:
            block += 1
        line = text[lo:hi]
        in_code = block < len(code) and code[block][0] < hi and lo < code[block][1]
        quote = _QUOTE.match(line)
        if in_code or not line.strip() or _RULE.fullmatch(line) or (quote and not line[quote.end():].strip()):
            if start is not None:
                yield start, end
            start, previous = None, ""
            continue
        marker = _MARKER.match(line)
        if marker is not None and quote is not None and previous.lstrip().startswith(">"):
            if not _MARKER.match(line, quote.end()):
                marker = None  # the quoted paragraph goes on
        own = _OWN_LINE.match(line) is not None
        if (marker is not None or own) and start is not None:
            yield start, end
            start, previous = None, ""
        begins = start is None or is_terminated(previous)
        if start is None:
            start = lo + (marker.end() if marker else 0)
        end = hi
        following = text[slice(*lines[index + 1])].lstrip() if index + 1 < len(lines) else ""
        if own or _HEADING.match(line) or (begins and _is_title(line, following, previous)):
            yield start, end
            start, line = None, ""
        previous = line
    if start is not None:
        yield start, end


def _bracket_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for index in range(start, end):
        char = text[index]
        if char in "([":
            stack.append((char, index))
        elif char in _PAIRS and stack and stack[-1][0] == _PAIRS[char]:
            spans.append((stack.pop()[1], index))
    return spans


def _is_boundary(text: str, match: re.Match[str], start: int, end: int) -> bool:
    after = match.end()
    if after < end and not text[after].isspace():
        return False
    rest = text[after:end].lstrip()
    if rest[:1].islower():
        return False
    if match.group().rstrip(_CLOSERS) != ".":
        return True
    before = _WORD_BEFORE.search(text, start, match.start())
    word = before.group() if before else ""
    if word.lower().strip(".'’-") in ABBREVIATIONS:
        return False
    return not (_INITIALS.fullmatch(word) or _DOTTED.fullmatch(word.lower()))


def _split_block(text: str, start: int, end: int, code: list[tuple[int, int]]) -> Iterator[Sentence]:
    spans = _bracket_spans(text, start, end) + [(lo, hi) for lo, hi in code if start <= lo < end]
    begin = start
    for match in _TERMINAL.finditer(text, start, end):
        stop = match.end()
        if any(lo < match.start() and stop <= hi for lo, hi in spans):
            continue
        if _is_boundary(text, match, start, end):
            yield from _sentence(text, begin, stop)
            begin = stop
    yield from _sentence(text, begin, end)


def _sentence(text: str, start: int, end: int) -> Iterator[Sentence]:
    piece = text[start:end]
    lo = start + len(piece) - len(piece.lstrip())
    hi = end - len(piece) + len(piece.rstrip())
    if lo < hi and any(char.isalnum() for char in text[lo:hi]):
        yield Sentence(lo, hi - lo, text[lo:hi])
