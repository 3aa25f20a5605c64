"""The no-LLM answer: sentences of the retrieved passages that name the question's things and answer it.

Each sentence of each passage (split on markup-free text, so footnote markers end sentences)
is scored by how much of the question's words it holds (rarer words weigh more), its vector
similarity to the question, whether it holds the kind of thing asked for (a name for *who*, a
year for *when*, a place for *where*, a number for *how many*), and its passage's rank. Then
sentences are taken greedily, each next one rewarded for question words not yet covered (so a
two-passage question gets both halves). Duplicates (same words, any chunk or document) are
kept once; a fragment left by chunk overlap is skipped; a sentence that starts with a pronoun
is quoted together with the sentence before it, which names what the pronoun stands for.
Quotes are free of markup and footnote markers, so the answer's own ``[n]`` markers are the
only bracketed numbers in it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from provgraph.extract.clean_text import blank_markup, strip_markers
from provgraph.extract.nlp_entities import candidates as name_candidates
from provgraph.extract.nlp_sentences import is_terminated, split_sentences
from provgraph.librarian.lexical import query_terms, stem
from provgraph.models.base import Embedder

__all__ = ["Pick", "pick_sentences", "question_type", "question_parts", "question_names", "stem"]

_PRONOUN = re.compile(r"^(he|she|it|they|his|her|its|their|this|these|those|there|the latter|the former)\b",
                      re.IGNORECASE)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})s?\b|\b(january|february|march|april|may|june|july|august|september"
                   r"|october|november|december)\b|\bcentury\b", re.IGNORECASE)
_PLACE = re.compile(r"\b(in|at|near|from|to)\s+(the\s+)?[A-Z][\w-]+")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty"
                     r"|thirty|forty|fifty|hundred|thousand|million|billion|dozen)\b", re.IGNORECASE)
_MONTHS = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_FULL_DATE = re.compile(rf"\b{_MONTHS}\s+\d{{1,2}},?\s+\d{{4}}\b|\b\d{{1,2}}\s+{_MONTHS}\s+\d{{4}}\b", re.IGNORECASE)
_WIKI_RESIDUE = re.compile(r"\]\]|\[\[|\{\{|\}\}|\|")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z.]+)+")
_CITING = re.compile(r"\b(retrieved|archived|isbn|doi)\b|https?://", re.IGNORECASE)
_WH = frozenset("what which how many much long old year date".split())
_MIN_CHARS, _MAX_CHARS = 20, 600
_ANSWER_CHARS = 750


_PART_SPLIT = re.compile(
    r"\s*(?:,\s*and|;|,\s*while|\?\s*and|\band)\s+(?=(?:who|whom|whose|what|which|when|where|why|how|in|on|at|from|"
    r"to|for|by|with)\b)", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """The sub-questions of a question that asks two things ("Who commanded Apollo 13, and who …?").

    >>> question_parts("Who built it, and when did it open?")
    ['Who built it', 'when did it open?']
    """
    parts = [p.strip() for p in _PART_SPLIT.split(question) if p and p.strip()]
    return parts if len(parts) > 1 and all(len(query_terms(p)) >= 1 for p in parts) else [question]


def question_type(question: str) -> str | None:
    """``who``, ``when``, ``where``, ``number`` or ``None`` (anything else)."""
    q = question.lower()
    if re.search(r"\bhow (many|much|long|old|far|large|big|tall|high)\b|\bwhat (number|percentage|population)\b", q):
        return "number"
    if re.search(r"\b(what|which) (date|day)\b", q):
        return "date"
    if re.search(r"\bwhen\b|\bwhat (year|date|century|decade)\b|\bwhich (year|century)\b|\bin what year\b", q):
        return "when"
    if re.search(r"\bwhere\b|\bwhich (city|country|place|town)\b|\bwhat (city|country|place|town)\b", q):
        return "where"
    if re.search(r"\bwho\b|\bwhom\b|\bwhose\b|\bwhich (person|scientist|man|woman)\b", q):
        return "who"
    return None


def _answers_type(kind: str | None, sentence: str, question_words: set[str]) -> bool:
    if kind == "when":
        return bool(_YEAR.search(sentence))
    if kind == "date":
        return bool(_FULL_DATE.search(sentence))
    if kind == "number":
        return bool(_NUMBER.search(sentence))
    if kind == "where":
        return bool(_PLACE.search(sentence))
    if kind == "who":
        return any(stem(w) not in question_words for m in _NAME.finditer(sentence) for w in m.group().split())
    return False


@dataclass(frozen=True, slots=True)
class Pick:
    """A quoted sentence (markup-free, one line) and the chunk it comes from."""

    text: str
    chunk: str
    score: float


@dataclass
class _Candidate:
    text: str
    chunk: str
    stems: set[str]
    prior: float
    before: str = ""
    pronoun: bool = False
    base: float = 0.0


def question_names(question: str) -> list[str]:
    """The names the question mentions ("Apollo 13", "Dennis Ritchie"), longest first."""
    found = [c.label for c in name_candidates(question, 0, len(question), frozenset()) if c.named]
    return sorted(dict.fromkeys(found), key=lambda n: -len(n))


_LINKING = frozenset("had has have was were is are did also first later then together jointly soon".split())


def _acts(text: str, name: str, verbs: set[str]) -> bool:
    """Whether ``text`` has ``name`` do one of ``verbs`` (stems): the name, names joined to it by *and* or a
    comma ("Marie Curie and Pierre Curie"), at most two linking words ("had", "also"), then the verb."""
    for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE):
        previous, loose = name, 0
        for word in re.findall(r"[\w'-]+|,", text[m.end():])[:10]:
            if stem(word) in verbs:
                return True
            joined = word in (",", "and") or (word[:1].isupper() and (previous in (",", "and") or previous[:1].isupper()))
            loose += 0 if joined else 1
            if not joined and (word.lower() not in _LINKING or loose > 2):
                break
            previous = word
    return False


def _question_verbs(question: str, name: str) -> set[str]:
    """The stem of the verb the question asks ``name`` to do: "What did Marie Curie *discover*?" (an auxiliary,
    the name, then a lower-case word), else none."""
    found = re.search(rf"\b(?:did|does|do|has|have|had|will|would|could|can)\s+{re.escape(name)}\s+([a-z]+)\b",
                      question, re.IGNORECASE)
    if found is None or not found.group(1).islower() or found.group(1) in _WH:
        return set()
    return {stem(found.group(1))}


def _has(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, re.IGNORECASE) is not None


def _after_residue(quote: str) -> str:
    """The part of a sentence after leftover wiki/table syntax (``]]``, ``{{``, ``|``), else the sentence."""
    if quote.startswith("File:"):
        return ""
    parts = _WIKI_RESIDUE.split(quote)
    return parts[-1].strip() if len(parts) > 1 else quote


def _candidates(passages: Sequence[tuple[str, str, int]]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for chunk, text, rank in passages:
        clean = blank_markup(text)
        sentences = [s for s in split_sentences(clean)]
        previous = ""
        for i, s in enumerate(sentences):
            quote = _after_residue(strip_markers(text[s.offset : s.offset + s.length], s.text))
            first = i == 0 and s.offset > 0 or (i == 0 and quote[:1].islower())
            first = first or not (quote[:1].isalnum() or quote[:1] in "\"“‘'(`")
            usable = (is_terminated(quote) and _MIN_CHARS <= len(quote) <= _MAX_CHARS and not first
                      and not _CITING.search(quote))
            if usable:
                pronoun = bool(_PRONOUN.match(quote))
                if previous and pronoun and len(previous) + len(quote) < _MAX_CHARS:
                    quote = f"{previous} {quote}"
                words = {stem(w) for w in re.findall(r"\w+", quote)}
                out.append(_Candidate(quote, chunk, words, 0.15 / rank, clean[: s.offset], pronoun))
            previous = quote if is_terminated(quote) else ""
    return out


def _score(question: str, vector: np.ndarray, sims: np.ndarray, cands: Sequence[_Candidate]) -> tuple[
        list[float], dict[str, float], float]:
    """Base scores of the candidates for one (sub-)question, with its term weights and their total."""
    n = len(cands)
    marks = [set(c.stems) for c in cands]
    terms = list(dict.fromkeys(stem(t) for t in query_terms(question) if t not in _WH))
    weight = {t: math.log(1.0 + n / (1.0 + sum(t in m for m in marks))) for t in terms}
    # a name of the question counts whole ("Apollo 13", not any "13"); its last word alone half
    for name in question_names(question):
        key = "\x00" + name
        last = name.split()[-1]
        for c, m in zip(cands, marks):
            if _has(c.text, name) or (c.pronoun and _has(c.before, name)):
                m.add(key)  # a pronoun after the name in the same passage stands for it
            elif _has(c.before, name) or (
                    len(name.split()) > 1 and len(last) > 3 and not last.isdigit() and _has(c.text, last)):
                m.add(key + "\x00half")  # the passage is about it, or the surname alone
        weight[key] = math.log(1.0 + n / (1.0 + sum(key in m for m in marks)))
        weight[key + "\x00half"] = 0.5 * weight[key]
    total = sum(w for t, w in weight.items() if not t.endswith("\x00half")) or 1.0
    kind = question_type(question)
    qwords = set(weight)
    actors = [(name, verbs) for name in question_names(question) if (verbs := _question_verbs(question, name))]
    scores = []
    for c, m, sim in zip(cands, marks, sims.tolist()):
        coverage = sum(w for t, w in weight.items() if t in m) / total
        typed = 0.25 if _answers_type(kind, c.text, qwords) else 0.0
        if any(_acts(c.text, name, verbs) for name, verbs in actors):
            typed += 0.25  # the sentence has the question's name do what the question asks about
        if kind in ("when", "date") and _FULL_DATE.search(c.text):
            typed += 0.1
        scores.append(coverage + 0.35 * float(sim) + typed + c.prior)
    for c, m in zip(cands, marks):
        c.stems = m
    return scores, weight, total


def pick_sentences(
    question: str,
    vector: np.ndarray,
    embedder: Embedder,
    passages: Sequence[tuple[str, str, int]],
    *,
    limit: int = 3,
) -> list[Pick]:
    """Up to ``limit`` quotes answering ``question`` from ``(chunk, text, rank)`` passages, best first.

    A question of two parts gets the best quote for each part first.
    """
    found = _candidates(passages)
    unique: dict[str, _Candidate] = {}
    for c in found:
        unique.setdefault(" ".join(re.findall(r"\w+", c.text.casefold())), c)
    cands = list(unique.values())
    if not cands:
        return []
    matrix = embedder.embed([c.text for c in cands])
    base, weight, total = _score(question, vector, matrix @ vector, cands)
    for c, score in zip(cands, base):
        c.base = score
    chosen: list[_Candidate] = []
    parts = question_parts(question)
    if len(parts) > 1:
        part_vectors = embedder.embed(parts)
        for part, part_vector in zip(parts, part_vectors):
            scores, _, _ = _score(part, part_vector, matrix @ part_vector, cands)
            order = sorted(range(len(cands)), key=lambda i: -scores[i])
            best = next((cands[i] for i in order if cands[i] not in chosen), None)
            if best is not None and len(chosen) < limit:
                chosen.append(best)
    covered = {t for c in chosen for t in weight if t in c.stems}
    used = sum(len(c.text) for c in chosen)
    while len(chosen) < limit:
        best, best_score = None, -math.inf
        for c in cands:
            if c in chosen or any(c.text in o.text or o.text in c.text for o in chosen):
                continue
            fresh = sum(w for t, w in weight.items() if t in c.stems and t not in covered) / total
            score = c.base + (0.5 * fresh if chosen else 0.0)
            if score > best_score:
                best, best_score = c, score
        if best is None or (chosen and used + len(best.text) > _ANSWER_CHARS):
            break
        chosen.append(best)
        used += len(best.text)
        covered |= {t for t in weight if t in best.stems}
    return [Pick(c.text, c.chunk, c.base) for c in chosen]
