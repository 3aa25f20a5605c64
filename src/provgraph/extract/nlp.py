"""Offline co-occurrence analysis: sentences, entities, definitions and relations of a text.

Pure functions over one string (a chunk): regular expressions and a built-in English
lexicon, no model and no I/O, so the same text always gives the same analysis.

- entities: capitalised names always count; a lowercase noun phrase counts when it occurs
  at least ``min_phrase_frequency`` times, or when it sits in a definition or next to a
  name in a sentence (see :mod:`provgraph.extract.nlp_entities`); code is no entity (code
  blocks are in no sentence, and inline code spans give no candidate);
- definitions: "X is a Y…", "X were Y…", "X, a Y, …" give ``Definition(X, "a Y…")``;
- relations: pairs of entities of one sentence, adjacent pairs first; the predicate is the
  1-5 connecting words when they are function words holding a verb or a preposition
  ("worked with", "was awarded", "at"), else ``"related to"``. Connecting words without a
  content word or a preposition (only auxiliaries, modals, pronouns: "will", "is", "we can")
  make no predicate: two names are then ``"related to"``, anything else no relation.
  Sentences without final punctuation (headings) give none.

>>> analyse("Marie Curie discovered polonium in 1898.").relations
(Relation(subject='Marie Curie', predicate='discovered', object='polonium', sentence_index=0),)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from provgraph.errors import InputError
from provgraph.extract.nlp_code import inline_code
from provgraph.extract.nlp_entities import TOKEN, Candidate, candidates, lowercase_words
from provgraph.extract.nlp_lexicon import (
    GENERIC_NOUNS,
    NOUN_PREPOSITIONS,
    PREPOSITIONS,
    is_content_word,
    is_delimiter,
    is_verbish,
)
from provgraph.extract.nlp_sentences import Sentence, is_terminated, split_sentences

__all__ = [
    "RELATED_TO",
    "Sentence",
    "EntityMention",
    "Definition",
    "Relation",
    "TextAnalysis",
    "analyse",
    "split_sentences",
]

RELATED_TO = "related to"
"""Predicate of two entities of one sentence whose connecting words say nothing usable."""

_MAX_PREDICATE_WORDS = 5
_ARTICLES = frozenset({"a", "an", "the"})
_LEADING = frozenset("and or but who which that whose where when while then also so".split())
_TRAILING = frozenset("and or but that which who whose".split())
_BAD_GAP = re.compile(r"[^\w\s,'’\"“”‘-]")
_PREFIX = re.compile(r"[\"'“‘(\[]*(?:(?:the|The|a|A|an|An)\s+)?")
_COPULA = re.compile(r"\s+(?P<verb>is|was|are|were)\s+(?P<clause>\S.*)", re.DOTALL)
_APPOSITION = re.compile(r"\s*,\s*(?P<clause>(?:a|an)\s[^,;:()]+?)\s*,")
_CLAUSE_END = " \t\r\n.!?…;:"


@dataclass(frozen=True, slots=True)
class EntityMention:
    """One occurrence of an entity; ``offset``/``length`` index the input text."""

    label: str
    sentence_index: int
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class Definition:
    """``text`` defines ``label``: "Becquerel was a French physicist." → "a French physicist"."""

    label: str
    text: str
    sentence_index: int


@dataclass(frozen=True, slots=True)
class Relation:
    """Two entities of one sentence and the words that connect them."""

    subject: str
    predicate: str
    object: str
    sentence_index: int


@dataclass(frozen=True, slots=True)
class TextAnalysis:
    """Everything :func:`analyse` found in one text, in order of appearance."""

    sentences: tuple[Sentence, ...]
    entities: tuple[EntityMention, ...]
    definitions: tuple[Definition, ...]
    relations: tuple[Relation, ...]


@dataclass(frozen=True, slots=True)
class _Found:
    """A definition before filtering: subject candidate, clause text and its span."""

    subject: Candidate
    text: str
    start: int

    def covers(self, candidate: Candidate) -> bool:
        """True when ``candidate`` lies inside the defining clause."""
        return self.start <= candidate.start < self.start + len(self.text)


def analyse(
    text: str, *, max_relations_per_sentence: int = 6, min_phrase_frequency: int = 2
) -> TextAnalysis:
    """Split ``text`` into sentences and find its entities, definitions and relations.

    :raises InputError: ``text`` is not a string, or an option is out of range.
    """
    if not isinstance(text, str):
        raise InputError(f"analyse() needs text as str, got {type(text).__name__}")
    if max_relations_per_sentence < 0:
        raise InputError("max_relations_per_sentence must be 0 or more")
    if min_phrase_frequency < 1:
        raise InputError("min_phrase_frequency must be 1 or more")
    sentences = split_sentences(text)
    lowercase = lowercase_words(" ".join(s.text for s in sentences))  # words of the prose, not of its code
    code = inline_code(text)
    per_sentence = [
        [c for c in candidates(text, s.offset, s.offset + s.length, lowercase) if not _in_code(c, code)]
        for s in sentences
    ]
    counts = Counter(c.label for found in per_sentence for c in found if not c.named)
    entities: list[EntityMention] = []
    definitions: list[Definition] = []
    relations: list[Relation] = []
    for index, (sentence, found) in enumerate(zip(sentences, per_sentence, strict=True)):
        prose = is_terminated(sentence.text)
        definition = _definition(text, sentence, found) if prose else None
        kept = [
            c
            for position, c in enumerate(found)
            if c.named
            or counts[c.label] >= min_phrase_frequency
            or (prose and _exempt(found, position, definition))
        ]
        entities.extend(EntityMention(c.label, index, c.start, c.end - c.start) for c in kept)
        if definition is not None:
            definitions.append(Definition(definition.subject.label, definition.text, index))
        if prose:
            relations.extend(_relations(text, kept, index, max_relations_per_sentence))
    return TextAnalysis(sentences, tuple(entities), tuple(definitions), tuple(relations))


def _in_code(candidate: Candidate, code: Sequence[tuple[int, int]]) -> bool:
    return any(lo < candidate.end and candidate.start < hi for lo, hi in code)


def _exempt(found: Sequence[Candidate], position: int, definition: _Found | None) -> bool:
    """A rare noun phrase still counts in a definition or next to a name."""
    candidate = found[position]
    if definition is not None:
        if candidate == definition.subject:
            return True
        if definition.subject.named and definition.covers(candidate):
            return True
    if candidate.label in GENERIC_NOUNS:
        return False  # "evening", "person": vague unless repeated or defined
    neighbours = found[max(position - 1, 0) : position + 2]
    return any(other.named for other in neighbours if other is not candidate)


def _definition(text: str, sentence: Sentence, found: Sequence[Candidate]) -> _Found | None:
    """Find "X is a Y…", "X are Y…" or "X, a Y, …" with X the sentence's first entity."""
    if not found:
        return None
    subject = found[0]
    if not _PREFIX.fullmatch(text, sentence.offset, subject.start):
        return None
    end = sentence.offset + sentence.length
    copula = _COPULA.match(text, subject.end, end)
    if copula is not None and _defines(copula.group("verb"), copula.group("clause")):
        clause = copula.group("clause").rstrip(_CLAUSE_END)
        return _Found(subject, clause, copula.start("clause")) if clause else None
    apposition = _APPOSITION.match(text, subject.end, end)
    if apposition is not None:
        return _Found(subject, apposition.group("clause"), apposition.start("clause"))
    return None


def _defines(verb: str, clause: str) -> bool:
    """"is/was" need an article ("is a", "was the"); "are/were" a noun ("are helium nuclei")."""
    words = clause.split()
    if words[0] in _ARTICLES or words[:2] == ["one", "of"]:
        return True
    if verb not in ("are", "were"):
        return False
    phrase: list[str] = []
    for word in words:
        core = word.rstrip(_CLAUSE_END + ",\"'”’)")
        if not core.islower() or is_delimiter(core):
            break
        phrase.append(core)
        if core != word:
            break
    return len(phrase) >= 2 or (len(phrase) == 1 and _plural(phrase[0]))


def _plural(word: str) -> bool:
    """A plural noun, as far as a suffix tells: "electrons", not "dangerous" or "glass"."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _relations(text: str, kept: Sequence[Candidate], index: int, limit: int) -> list[Relation]:
    """Pairs in order of appearance, adjacent pairs first, at most ``limit``."""
    out: list[Relation] = []
    seen: set[tuple[str, str, str]] = set()
    for distance in range(1, len(kept)):
        for position in range(len(kept) - distance):
            if len(out) >= limit:
                return out
            left, right = kept[position], kept[position + distance]
            if left.label == right.label:
                continue
            both_named = left.named and right.named
            if distance > 1 and not both_named:
                continue  # a loose pair is worth keeping only between two names
            predicate = _predicate(text[left.end : right.start]) if distance == 1 else RELATED_TO
            if not predicate:
                if not both_named:
                    continue
                predicate = RELATED_TO  # two names of one sentence still go together
            if not _attaches(predicate, left, right):
                continue
            key = (left.label, predicate, right.label)
            if key not in seen:
                seen.add(key)
                out.append(Relation(left.label, predicate, right.label, index))
    return out


def _attaches(predicate: str, left: Candidate, right: Candidate) -> bool:
    """False for a verbless predicate ("to", "for his") that does not link its two entities.

    It links two names ("Rutherford at Manchester"), anything by "of" ("SI unit of
    radioactivity"), or a common noun and what follows by "in/at/on"; otherwise it belongs to an earlier verb
    ("gave the prize to Marie Curie").
    """
    words = predicate.split()
    if predicate == RELATED_TO or any(map(is_verbish, words)):
        return True
    if left.named and right.named or words == ["of"]:
        return True
    return not left.named and len(words) == 1 and words[0] in NOUN_PREPOSITIONS


def _predicate(gap: str) -> str:
    """The connecting words, lowercased and trimmed, when they hold a verb or preposition."""
    if gap.startswith(("'s", "’s")):
        gap = gap[2:]
    if _BAD_GAP.search(gap):
        return RELATED_TO
    tokens = TOKEN.findall(gap)
    if any(token[0].isdigit() for token in tokens):
        return RELATED_TO
    if gap.lstrip().startswith(",") and tokens and is_verbish(tokens[0]):
        return RELATED_TO  # "X, a physicist, moved to Y": the subject is further back
    words = [t.lower() for t in tokens if not t[0].isupper() and t.lower() not in _ARTICLES]
    while words and words[0] in _LEADING:
        words.pop(0)
    while words and words[-1] in _TRAILING:
        words.pop()
    usable = any(is_verbish(word) or word in PREPOSITIONS for word in words)
    if usable and len(words) <= _MAX_PREDICATE_WORDS and all(map(is_delimiter, words)):
        # only auxiliaries, modals, pronouns ("will", "is", "we can"): no predicate
        return " ".join(words) if any(is_content_word(w) or w in PREPOSITIONS for w in words) else ""
    return RELATED_TO
