"""Markup-free text of the same length: what extractors and answers read, offsets unchanged.

Markdown emphasis (``_Le Monde_``, ``**bold**``), link syntax (``[text](url)`` and
``[text][ref]`` keep ``text``), block-quote marks at line starts, HTML comments, footnote
markers (``[8]``, ``[8][9]``, ``[a]``, ``[citation needed]``) and stray backticks are replaced
by spaces, character for character (line breaks kept, and no-break spaces where spaces at a
line start would indent it into a code block); inline markup may be wrapped over lines. The result has the input's length,
so an offset into it is the same offset into the original text (the offset map is the
identity), and a footnote marker glued to a full stop (``1898.[8] The``) no longer hides the
sentence boundary. Code is verbatim: inline code spans (backticks included) and code blocks
(:mod:`provgraph.extract.nlp_code`) are left as they are, and nothing inside them is taken
for markup (``__init__``, ``a[1]``).

>>> blank_markup("_Le Monde_ said so.[8][9] Then")
' Le Monde  said so.       Then'
>>> strip_markers("It glows [3] in the dark.[4]")
'It glows in the dark.'
>>> strip_markers("if the `.rc` file holds `__init__`")
'if the `.rc` file holds `__init__`'
"""

from __future__ import annotations

import re

from provgraph.extract.nlp_code import CODE_INDENT, code_blocks, indent_columns, inline_code

__all__ = ["blank_markup", "strip_markers", "FOOTNOTE"]

FOOTNOTE = re.compile(r"\[(?:\d{1,3}|[a-z]|note \d{1,3}|citation needed|nb \d{1,3})\](?!\()", re.IGNORECASE)
"""A footnote marker of the source text, e.g. ``[8]`` (never a Markdown link's text)."""

_LINE = r"(?:[^\n]|\n(?![ \t]*\n))"  # any character but a paragraph break: inline markup may be wrapped
_LINK = re.compile(rf"(!?\[)((?:(?![\[\]]){_LINE}){{1,300}})(\]\([^()\s]{{0,800}}(?:\s+\"[^\"\n]*\")?\))")
_REFERENCE_LINK = re.compile(rf"(!?\[)((?:(?![\[\]]){_LINE}){{1,300}})(\]\[[^\[\]\n]{{0,100}}\])")
_EMPHASIS = re.compile(rf"(?<![\w*_])([*_]{{1,3}})(?=[^\s*_])({_LINE}{{1,300}}?)(?<=[^\s*_])\1(?![\w*_])")
_COMMENT = re.compile(r"<!--.{0,2000}?-->", re.DOTALL)
_QUOTE_MARKS = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+", re.MULTILINE)
_TICKS = re.compile(r"`+")
_CODE = "\ue000"
_NO_BREAK = "\u00a0"
_LEADING_BLANKS = re.compile(r"^[ \t]+", re.MULTILINE)
_SPACES = re.compile(r"\s+")
_LINE_END = re.compile(r"[ \t]*\n[ \t]*")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?]+)(?=[\s\"'”’»)\]]|$)")


def _spaces(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _spaces_but_lines(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def _keep_middle(match: re.Match[str]) -> str:
    return " " * len(match.group(1)) + match.group(2) + " " * len(match.group(3))


def _emphasis(match: re.Match[str]) -> str:
    marks = " " * len(match.group(1))
    return marks + match.group(2) + marks


def _code_spans(text: str) -> list[tuple[int, int]]:
    blocks = code_blocks(text)
    return sorted([(b.offset, b.offset + b.length) for b in blocks] + list(inline_code(text, blocks)))


def blank_markup(text: str) -> str:
    """``text`` with markup and footnote markers replaced by spaces (same length); code kept verbatim."""
    code = _code_spans(text)
    if not code:
        return _blank(text)
    masked = list(text)
    for start, end in code:  # a stand-in that no markup pattern takes for markup, line ends kept
        masked[start:end] = ["\n" if char == "\n" else _CODE for char in text[start:end]]
    out = _blank("".join(masked))
    pieces, pos = [], 0
    for start, end in code:
        pieces += [out[pos:start], text[start:end]]
        pos = end
    pieces.append(out[pos:])
    return "".join(pieces)


def _blank(text: str) -> str:
    out = _markup_to_spaces(text)
    # markup blanked at a line start that would indent it into a code block becomes no-break spaces
    pieces, pos = [], 0
    for lead in _LEADING_BLANKS.finditer(out):
        start, end = lead.span()
        if indent_columns(out[start:end]) < CODE_INDENT or indent_columns(text[start:end]) >= CODE_INDENT:
            continue
        pieces += [out[pos:start], "".join(b if b == c else _NO_BREAK for b, c in zip(out[start:end], text[start:end]))]
        pos = end
    pieces.append(out[pos:])
    return "".join(pieces)


def _markup_to_spaces(text: str) -> str:
    out = _COMMENT.sub(_spaces_but_lines, text)
    out = _QUOTE_MARKS.sub(_spaces, out)
    out = _LINK.sub(_keep_middle, out)
    out = FOOTNOTE.sub(_spaces, out)
    out = _REFERENCE_LINK.sub(_keep_middle, out)
    out = _EMPHASIS.sub(_emphasis, out)
    out = _TICKS.sub(_spaces, out)
    assert len(out) == len(text)
    return out


def strip_markers(sentence: str, blanked: str | None = None) -> str:
    """A sentence for quoting: markup and footnote markers removed, one space between words, code verbatim
    (an inline span wrapped over two lines on one line).

    ``blanked``: the same span of :func:`blank_markup` over the whole text, which also knows the markup
    that opens before the sentence (``_Le Monde_ said`` quoted from ``Le Monde``).
    """
    blanked = blank_markup(sentence) if blanked is None else blanked
    clean = "".join(c for c, b in zip(sentence, blanked, strict=True) if c == b or c.isspace())  # markup out
    pieces, pos = [], 0
    for start, end in _code_spans(clean):
        pieces += [_flat_prose(clean[pos:start]), _LINE_END.sub(" ", clean[start:end])]
        pos = end
    pieces.append(_flat_prose(clean[pos:]))
    return "".join(pieces).strip()


def _flat_prose(text: str) -> str:
    # a space left before punctuation by a removed marker goes ("dark [4]." -> "dark."), not one before ".rc"
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", text))
