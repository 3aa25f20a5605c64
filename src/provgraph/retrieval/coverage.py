"""A comparison gets a passage about each thing it compares: "Which is higher, Nanda Devi or Broad Peak?" needs
the passage about Broad Peak too, not the best few about Nanda Devi.

:func:`question_names` finds the named entities a question says in full — an entity linked exactly (its label or
an alias, as whole words) whose every word the question writes with a capital or is a number ("Manaslu", not
"peak" in "which peak is higher"); a name inside a longer one the question also says is dropped ("Nanda" inside
"Nanda Devi"), and entities said with the same words are one name. :func:`compared` keeps the names the question
puts side by side ("X or Y", "X and Y", "X, Y"). When there are two or more, :func:`cover` moves one passage for
each to the front of the ranking — the best-ranked passage whose title (a short first line) is the name, else one
whose title says it, else the best-ranked passage mentioning the entity — and the others keep their order. Each
moved passage records the name it was moved for (``PassageScore.covers``, ``tg:covers`` in the trace). Other
questions are left alone: on the real-text sets (bench/quality.py) moving passages for every pair of names a
question says changed answers for the worse.

    said = question_names(question, entities, retriever.names)
    first = cover(question, first, said, graph.chunks_of)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from provgraph.librarian.lexical import query_terms

if TYPE_CHECKING:
    from provgraph.retrieval.graph_rank import PassageScore
    from provgraph.retrieval.hybrid import Ranked

__all__ = ["QuestionName", "question_names", "compared", "cover", "MAX_NAMES"]

MAX_NAMES = 3
"""At most this many names get a passage moved forward (the longest first)."""
_MAX_NGRAM = 6
_TITLE_WORDS = 12
_JOINED = re.compile(r"\s*,?\s*(?:or|and|&|vs\.?|versus|,)\s*", re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class QuestionName:
    """A name the question says (as the entity's label or alias has it) and the entities linked by those words."""

    name: str
    entities: tuple[str, ...]


def _spans(words: Sequence[str]) -> set[str]:
    return {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + _MAX_NGRAM) + 1)}


def question_names(question: str, entities: Sequence[Ranked], names: Callable[[str], list[str]]) -> list[QuestionName]:
    """The named entities ``question`` says in full, longest name first, one per span of the question's words."""
    spans = _spans([t for w in _WORD.findall(question) for t in query_terms(w)])  # a word said twice stays twice
    capitalised = {w.lower() for w in _WORD.findall(question) if w[0].isupper() or w[0].isdigit()}
    said: dict[tuple[str, ...], tuple[str, list[str]]] = {}  # the name's words -> (name, entities)
    for r in entities:
        if not r.exact:
            continue
        best: tuple[str, tuple[str, ...]] | None = None
        for name in names(r.id):
            words = tuple(query_terms(name))
            if (words and " ".join(words) in spans and set(words) <= capitalised
                    and (best is None or len(words) > len(best[1]))):
                best = (name, words)
        if best is not None:
            said.setdefault(best[1], (best[0], []))[1].append(r.id)
    out: list[QuestionName] = []
    kept: list[set[str]] = []
    for words in sorted(said, key=lambda w: -len(w)):  # stable: ties keep the linking order
        if any(set(words) <= k for k in kept):
            continue
        kept.append(set(words))
        out.append(QuestionName(said[words][0], tuple(said[words][1])))
    return out[:MAX_NAMES]


def compared(question: str, said: Sequence[QuestionName]) -> list[QuestionName]:
    """The names the question puts side by side — next to each other, joined by "or", "and", "vs" or a comma
    ("Nanda Devi or Broad Peak", "Sutera and Rhodotypos"), in the question's order; empty when none are."""
    placed = []
    for q in said:
        words = _WORD.findall(q.name)
        found = re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b", question, re.IGNORECASE) if words else None
        if found is not None:
            placed.append((found.start(), found.end(), q))
    placed.sort(key=lambda t: t[0])
    joined: dict[str, QuestionName] = {}
    for (_, end, a), (start, _, b) in zip(placed, placed[1:]):
        if start >= end and _JOINED.fullmatch(question[end:start]):
            joined.setdefault(a.name, a)
            joined.setdefault(b.name, b)
    return list(joined.values())


def _title_match(passage: PassageScore, words: tuple[str, ...]) -> int:
    """How well the passage's title (a short first line before a line break, not a sentence) names the entity:
    2 when it is the name (a bracketed qualifier aside: "Dracula (plant)"), 1 when it says the name as whole
    words, 0 otherwise (or no title)."""
    head, sep, _ = (passage.text or "").lstrip().partition("\n")
    title = query_terms(head)
    if not sep or not title or len(head.split()) > _TITLE_WORDS or head.rstrip()[-1:] in ".!?:;":
        return 0
    if tuple(query_terms(head.split("(", 1)[0])) == words:
        return 2
    n = len(words)
    return int(any(tuple(title[i : i + n]) == words for i in range(len(title))))


def cover(question: str, passages: Sequence[PassageScore], said: Sequence[QuestionName],
          chunks_of: Callable[[str], set[str]]) -> list[PassageScore]:
    """``passages`` with one passage for each name moved to the front (in their own order), when the question says
    two names or more; unchanged otherwise."""
    said = compared(question, said)
    if len(said) < 2:
        return list(passages)
    moved: dict[str, str] = {}  # chunk -> the name it was moved for
    for q in said:
        words = tuple(query_terms(q.name))
        scored = [(m, -i, p) for i, p in enumerate(passages) if p.chunk not in moved and (m := _title_match(p, words))]
        best = max(scored, key=lambda t: t[:2])[2] if scored else None
        if best is None:
            mentions = set().union(*(chunks_of(e) for e in q.entities))
            best = next((p for p in passages if p.chunk not in moved and p.chunk in mentions), None)
        if best is not None:
            moved[best.chunk] = q.name
    front = [replace(p, covers=moved[p.chunk]) for p in passages if p.chunk in moved]
    return front + [p for p in passages if p.chunk not in moved]
