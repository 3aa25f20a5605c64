"""Sentence splitting with exact offsets, for the offline text analysis.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (plus any closing quotes or brackets) when
whitespace and a non-lowercase character follow; a full stop after an abbreviation
("Dr.", "e.g."), an initial ("M. Curie") or inside brackets does not end one. Blank lines,
Markdown headings and list items always end a sentence, and so does a short line without
final punctuation (a title) followed by a capitalised line.

>>> [s.text for s in split_sentences("# Radium\\nDr. M. Curie found it. It glows (e.g. at night).")]
['Radium', 'Dr. M. Curie found it.', 'It glows (e.g. at night).']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from provgraph.extract.nlp_lexicon import ABBREVIATIONS, CONNECTORS, STOP_WORDS

__all__ = ["Sentence", "split_sentences", "is_terminated"]

_CLOSERS = "\"'”’»)]"
_TERMINAL = re.compile(r"[.!?…]+[\"'”’»)\]]*")
_WORD_BEFORE = re.compile(r"[\w.'’-]*$")
_INITIALS = re.compile(r"[A-Z](?:\.[A-Z])*")
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")
_MARKER = re.compile(r"[ \t]*(?:#{1,6}|[-*+•>]|\d{1,3}[.)])[ \t]+")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]+")
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
    out: list[Sentence] = []
    for start, end in _blocks(text):
        out.extend(_split_block(text, start, end))
    return tuple(out)


def _lines(text: str) -> list[tuple[int, int]]:
    lines: list[tuple[int, int]] = []
    pos = 0
    while True:
        newline = text.find("\n", pos)
        if newline < 0:
            lines.append((pos, len(text)))
            return lines
        lines.append((pos, newline))
        pos = newline + 1


def _is_title(line: str, following: str) -> bool:
    """A short unpunctuated line followed by a capitalised line stands alone."""
    stripped = line.strip()
    if not stripped or len(stripped) > _TITLE_MAX or not following[:1].isupper():
        return False
    if not (stripped[-1].isalnum() or stripped[-1] in _CLOSERS):
        return False
    last = stripped.split()[-1].lower()
    return last not in STOP_WORDS and last not in CONNECTORS


def _blocks(text: str) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` of runs of lines that no heading, list item or blank line splits."""
    start: int | None = None
    end = 0
    lines = _lines(text)
    for index, (lo, hi) in enumerate(lines):
        line = text[lo:hi]
        if not line.strip():
            if start is not None:
                yield start, end
            start = None
            continue
        marker = _MARKER.match(line)
        if marker is not None and start is not None:
            yield start, end
            start = None
        if start is None:
            start = lo + (marker.end() if marker else 0)
        end = hi
        following = text[slice(*lines[index + 1])].lstrip() if index + 1 < len(lines) else ""
        if _HEADING.match(line) or _is_title(line, following):
            yield start, end
            start = None
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


def _split_block(text: str, start: int, end: int) -> Iterator[Sentence]:
    spans = _bracket_spans(text, start, end)
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
