"""Entity candidates of one sentence: capitalised names and stop-word-delimited noun phrases.

A name is a run of capitalised words ("Marie Curie", "M. Curie"), which may hold lowercase
connectors when a capitalised word follows ("University of Paris"; "in" only after words
such as "Prize": "Nobel Prize in Physics", never "Curie in Paris"). Leading titles ("Dr")
are dropped; months, nationality adjectives and titles alone are not names. A noun phrase
is a run of 1-4 lowercase content words between stop words, verbs, numbers and punctuation.
A capitalised stop word inside a sentence starts a name when a name follows ("New Zealand").
A capitalised first word that the text mostly writes in lowercase counts as lowercase.
A short number right after a name is part of it ("Boeing 747", "Terminal 5"), and so are
roman numerals and codes, which are capitalised words ("Louis XIV", "Airbus A320").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from provgraph.extract.nlp_lexicon import (
    BE_FORMS,
    CONNECTORS,
    IN_HEADS,
    MODALS,
    NAME_ABBREVIATIONS,
    NON_ENTITIES,
    STOP_WORDS,
    TITLES,
    VERBS,
    is_delimiter,
)

__all__ = ["TOKEN", "Candidate", "lowercase_words", "candidates"]

TOKEN = re.compile(r"\w+(?:['’\-.]\w+)*")
"""A word: letters or digits, with inner apostrophes, hyphens and dots ("Joliot-Curie", "3.5")."""

_MIN_LABEL, _MAX_LABEL = 2, 60
_MAX_PHRASE_WORDS = 4
_MAX_CHAIN = 2
_ARTICLES = frozenset({"the", "a", "an"})
_ADVERBS = frozenset("not also just still never always often only even already soon then now usually".split())
_MAX_ADVERBS = 2
_PLURAL = re.compile(r"[^su]s$")


class _Kind(Enum):
    NAME = "name"
    WORD = "word"
    STOP = "stop"
    NUMBER = "number"


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: int
    end: int
    kind: _Kind


@dataclass(frozen=True, slots=True)
class Candidate:
    """An entity candidate: normalised label and its span ``[start, end)`` in the input."""

    label: str
    start: int
    end: int
    named: bool


def lowercase_words(text: str) -> frozenset[str]:
    """Words of ``text`` written in lowercase at least as often as capitalised.

    A sentence-initial capitalised word in this set is read as a common word ("Radium is…"
    when the text mostly says "radium"), not as a name ("Becquerel wrapped…").
    """
    counts = Counter(TOKEN.findall(text))
    return frozenset(
        word
        for word, count in counts.items()
        if word.islower() and count >= counts[word[:1].upper() + word[1:]]
    )


def _kind(word: str) -> _Kind:
    if word[0].isdigit():
        return _Kind.NUMBER
    low = word.lower().replace("’", "'")
    if word[0].isupper():
        title_case = len(word) == 1 or word[1:].islower()
        if title_case and (low in STOP_WORDS or low in VERBS):
            return _Kind.STOP
        return _Kind.NAME
    return _Kind.STOP if is_delimiter(word) else _Kind.WORD


def _possessive(word: str) -> bool:
    return word.endswith(("'s", "’s"))


def _joined(text: str, left: _Token, right: _Token) -> bool:
    """True when only plain whitespace separates two tokens."""
    gap = text[left.end : right.start]
    return bool(gap) and gap.isspace()


def _initial(text: str, left: _Token, right: _Token) -> bool:
    """True for an initial and the next name part: "M. Curie", "J. J. Thomson", "St. Louis"."""
    gap = text[left.end : right.start]
    single = len(left.text) == 1 and left.text.isupper()
    short = single or left.text.lower() in NAME_ABBREVIATIONS
    return short and len(gap) > 1 and gap[0] == "." and gap[1:].isspace()


def _chain_end(text: str, tokens: list[_Token], index: int) -> int | None:
    """Index of the capitalised token after a connector chain starting at ``index``."""
    head = tokens[index - 1].text.lower()
    for size in range(1, _MAX_CHAIN + 1):
        last = index + size
        if last >= len(tokens):
            return None
        chain = tokens[index:last]
        words = [token.text for token in chain]
        if words[0] == "the" or any(word not in CONNECTORS for word in words):
            return None
        if "in" in words and head not in IN_HEADS:
            return None
        steps = zip([tokens[index - 1], *chain], [*chain, tokens[last]], strict=True)
        if all(_joined(text, left, right) for left, right in steps):
            if tokens[last].kind is _Kind.NAME:
                return last
    return None


_YEAR = re.compile(r"(1[0-9]|20)[0-9]{2}")
_QUANTITY = frozenset(
    "years year days day months month weeks week hours hours minutes times people men women km miles metres "
    "meters feet percent per million billion thousand hundred kg tons tonnes".split()
)
_DESIGNATOR = re.compile(r"[0-9]{1,4}(?:-[0-9A-Za-z]{1,4})?[A-Za-z]{0,2}(?:['’]s)?")


def _designator(text: str, tokens: list[_Token], index: int) -> bool:
    """True when token ``index`` is a number that is part of the name before it.

    "Boeing 747", "Terminal 5", "Windows 11", "Apollo 11": a short number right after a
    name, not a year, not a quantity ("5 km", "3 years") and not the start of "1,000" or "3.5".
    """
    token = tokens[index]
    number = token.text[:-2] if _possessive(token.text) else token.text
    if token.kind is not _Kind.NUMBER or not _DESIGNATOR.fullmatch(token.text) or _YEAR.fullmatch(number):
        return False
    if not _joined(text, tokens[index - 1], token) or _possessive(tokens[index - 1].text):
        return False
    if text[token.end : token.end + 2][:1] in {",", "."} and text[token.end + 1 : token.end + 2].isdigit():
        return False
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if following is None or number != token.text or not _joined(text, token, following):
        return True
    return following.kind is not _Kind.WORD and following.text.lower() not in _QUANTITY


def _name_runs(text: str, tokens: list[_Token]) -> Iterator[tuple[int, int]]:
    index = 0
    while index < len(tokens):
        if tokens[index].kind is not _Kind.NAME:
            index += 1
            continue
        end = index + 1
        while end < len(tokens) and not _possessive(tokens[end - 1].text):
            left, right = tokens[end - 1], tokens[end]
            touching = _joined(text, left, right) or _initial(text, left, right)
            if right.kind is _Kind.NAME and touching:
                end += 1
                continue
            if _designator(text, tokens, end):
                end += 1
                continue
            after = _chain_end(text, tokens, end)
            if after is None:
                break
            end = after + 1
        yield index, end
        index = end


def _word_runs(text: str, tokens: list[_Token]) -> Iterator[tuple[int, int]]:
    index = 0
    while index < len(tokens):
        if tokens[index].kind is not _Kind.WORD:
            index += 1
            continue
        end = index + 1
        while (
            end < len(tokens)
            and tokens[end].kind is _Kind.WORD
            and not _possessive(tokens[end - 1].text)
            and _joined(text, tokens[end - 1], tokens[end])
        ):
            end += 1
        if end - index <= _MAX_PHRASE_WORDS:
            yield index, end
        index = end


def _candidate(text: str, tokens: list[_Token], named: bool) -> Candidate | None:
    start, end = tokens[0].start, tokens[-1].end
    if _possessive(tokens[-1].text):
        end -= 2
    label = " ".join(text[start:end].split())
    if not named:
        label = label.lower()
    if not _MIN_LABEL <= len(label) <= _MAX_LABEL:
        return None
    return Candidate(label, start, end, named)


def _modified_head(text: str, tokens: list[_Token], lo: int, hi: int) -> int:
    """End of the lowercase noun a name modifies ("the Curie laboratory", "Becquerel rays"), else ``hi``.

    Only a name after an article, or a one-word name, is read as a modifier, and only
    when its last word is not possessive and a lowercase content word follows directly.
    """
    after_article = lo > 0 and tokens[lo - 1].text.lower() in _ARTICLES
    if not (after_article or hi - lo == 1) or _possessive(tokens[hi - 1].text):
        return hi
    end = hi
    while (
        end < len(tokens)
        and end - hi < _MAX_PHRASE_WORDS
        and tokens[end].kind is _Kind.WORD
        and not _possessive(tokens[end - 1].text)
        and _joined(text, tokens[end - 1], tokens[end])
    ):
        end += 1
    return end


def _verb_phrase(text: str, tokens: list[_Token], lo: int, hi: int) -> bool:
    """True when the lowercase run ``tokens[lo:hi]`` follows an auxiliary, so it is no noun phrase.

    After a modal or "do" it is a verb ("will attempt", "can't compile"); after a form of "be" a
    participle ("is working") or, a single word that is not plural, an adjective ("is ideal").
    Adverbs in between ("will not always work") are skipped.
    """
    before = lo - 1
    while before >= 0 and tokens[before].text.lower() in _ADVERBS and lo - before <= _MAX_ADVERBS:
        before -= 1
    if before < 0 or not _joined(text, tokens[before], tokens[before + 1]):
        return False
    word = tokens[before].text.lower().replace("’", "'")
    if word in MODALS:
        return True
    if word not in BE_FORMS:
        return False
    first = tokens[lo].text.lower()
    return first.endswith(("ing", "ed")) or (hi - lo == 1 and not _PLURAL.search(first))


def candidates(text: str, start: int, end: int, lowercase: frozenset[str]) -> list[Candidate]:
    """Entity candidates of the sentence ``text[start:end]``, in order of appearance."""
    tokens = [
        _Token(m.group(), m.start(), m.end(), _kind(m.group()))
        for m in TOKEN.finditer(text, start, end)
    ]
    for index in range(1, len(tokens) - 1):
        token, following = tokens[index], tokens[index + 1]
        if token.kind is _Kind.STOP and token.text[0].isupper() and len(token.text) > 1:
            if following.kind is _Kind.NAME and _joined(text, token, following):
                tokens[index] = _Token(token.text, token.start, token.end, _Kind.NAME)
    runs = list(_name_runs(text, tokens))
    if runs and runs[0] == (0, 1) and tokens[0].text.lower() in lowercase:
        first = tokens[0]
        kind = _kind(first.text.lower())
        tokens[0] = _Token(first.text, first.start, first.end, kind)
        runs.pop(0)
    found: list[Candidate] = []
    absorbed: set[int] = set()
    for lo, hi in runs:
        while hi - lo > 1 and tokens[lo].text.lower() in TITLES:
            lo += 1
        if hi - lo == 1 and tokens[lo].text.lower() in NON_ENTITIES:
            continue
        head = _modified_head(text, tokens, lo, hi)
        absorbed.update(range(hi, head))
        hi = head
        named = _candidate(text, tokens[lo:hi], named=True)
        if named is not None:
            found.append(named)
    for lo, hi in _word_runs(text, tokens):
        if lo in absorbed or _verb_phrase(text, tokens, lo, hi):
            continue
        phrase = _candidate(text, tokens[lo:hi], named=False)
        if phrase is not None:
            found.append(phrase)
    return sorted(found, key=lambda candidate: candidate.start)
