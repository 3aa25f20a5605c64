"""Scoring rules of the quality harness (bench/quality.py): evaluation sets, answer matching, evidence overlap.

An evaluation set is a folder ``bench/eval/<set>/`` (or ``bench/eval/heldout/<set>/``) holding ``docs/`` and
``questions.jsonl``; each line of the latter is one question::

    {"id": "q01", "type": "single", "question": "…",
     "gold": [["1898"], ["Pierre Curie", "Pierre"]],              # every item required, any alternative of it
     "evidence": [{"document": "curie.md", "quote": "…"}]}        # verbatim in the document's decoded text

Rules, exactly:

* **Correct answer** — take the first :data:`ANSWER_WINDOW` characters of the answer. Normalise it and every
  gold alternative with :func:`normalize` (Unicode NFKD, accents dropped, case-folded, ``_``/``*`` and every
  run of white space made one space). The answer is correct when, for EVERY gold item, at least one of its
  alternatives occurs in the normalised window as a whole-word match: not preceded or followed by a letter
  or digit.
* **Evidence hit** — a gold quote is located (every occurrence) in its document's decoded text; a returned
  chunk covers it when the two character spans share at least ``min(40, ceil(len(quote) / 2))`` characters.
  ``recall@k`` counts a question as found when at least one of its quotes is covered by one of the first ``k``
  distinct chunks the system returned (in the order it returned them); ``all@k`` when every quote is.
* **A valid question** — no gold alternative occurs in the question itself, and every gold item has an
  alternative that occurs in one of the evidence quotes (same matching as for answers).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ANSWER_WINDOW", "TYPES", "Question", "Evidence", "EvalSet", "EvalSetError", "normalize", "is_correct",
           "quote_spans", "covers", "evidence_found", "load_set", "find_sets"]

ANSWER_WINDOW = 800
TYPES = ("single", "relation", "two-passage")
"""Question kinds: one fact; a relation between two named things; a fact needing two passages."""

_SPACE = re.compile(r"[\s_*]+")


class EvalSetError(ValueError):
    """An evaluation set that breaks the format (a missing document, a quote not in its document, …)."""


@dataclass(frozen=True)
class Evidence:
    document: str  # path relative to the set's docs/ folder
    quote: str


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    question: str
    gold: tuple[tuple[str, ...], ...]
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class EvalSet:
    name: str
    root: Path
    questions: tuple[Question, ...]

    @property
    def docs(self) -> Path:
        return self.root / "docs"


def normalize(text: str) -> str:
    """Accent-folded, case-folded text with ``_``, ``*`` and white-space runs as single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", bare.casefold()).strip()


def _occurs(needle: str, haystack: str) -> bool:
    pattern = r"(?<![^\W_])" + re.escape(needle) + r"(?![^\W_])"
    return re.search(pattern, haystack) is not None


def is_correct(answer: str, gold: Sequence[Sequence[str]], window: int = ANSWER_WINDOW) -> bool:
    """Whether every gold item has an alternative in the answer's first ``window`` characters (see module doc)."""
    text = normalize(answer[:window])
    return all(any(_occurs(normalize(alt), text) for alt in item if normalize(alt)) for item in gold)


def quote_spans(text: str, quote: str) -> list[tuple[int, int]]:
    """Every (start, end) where ``quote`` occurs in ``text`` (overlapping occurrences included)."""
    spans, start = [], text.find(quote)
    while start >= 0:
        spans.append((start, start + len(quote)))
        start = text.find(quote, start + 1)
    return spans


def covers(chunk: tuple[int, int], quote: tuple[int, int]) -> bool:
    """Whether a chunk span shares at least ``min(40, ceil(len(quote) / 2))`` characters with a quote span."""
    shared = min(chunk[1], quote[1]) - max(chunk[0], quote[0])
    need = min(40, -(-(quote[1] - quote[0]) // 2))
    return shared >= max(need, 1)


def evidence_found(chunks: Iterable[tuple[str, int, int]], quotes: Sequence[tuple[str, Sequence[tuple[int, int]]]]
                   ) -> list[bool]:
    """For each quote (document, its spans), whether some chunk (document, start, end) covers one of its spans."""
    chunk_list = list(chunks)
    return [any(doc == cdoc and covers((s, e), span) for cdoc, s, e in chunk_list for span in spans)
            for doc, spans in quotes]


def _question(raw: dict, where: str) -> Question:
    missing = [k for k in ("id", "type", "question", "gold", "evidence") if k not in raw]
    if missing:
        raise EvalSetError(f"{where}: missing {', '.join(missing)}")
    if raw["type"] not in TYPES:
        raise EvalSetError(f"{where}: type {raw['type']!r} is not one of {', '.join(TYPES)}")
    gold = raw["gold"]
    if not gold or not all(isinstance(i, list) and i and all(isinstance(a, str) and a.strip() for a in i)
                           for i in gold):
        raise EvalSetError(f"{where}: gold must be a non-empty list of non-empty lists of strings")
    evidence = raw["evidence"]
    if not evidence or not all(isinstance(e, dict) and e.get("document") and e.get("quote") for e in evidence):
        raise EvalSetError(f"{where}: evidence must be a non-empty list of {{document, quote}}")
    question = normalize(raw["question"])
    quotes = normalize(" ".join(e["quote"] for e in evidence))
    for item in gold:
        if any(_occurs(normalize(alt), question) for alt in item):
            raise EvalSetError(f"{where}: gold {item} occurs in the question itself")
        if not any(_occurs(normalize(alt), quotes) for alt in item):
            raise EvalSetError(f"{where}: gold {item} occurs in none of the evidence quotes")
    return Question(str(raw["id"]), raw["type"], raw["question"], tuple(tuple(i) for i in gold),
                    tuple(Evidence(e["document"], e["quote"]) for e in evidence))


def load_set(root: Path, texts: dict[str, str] | None = None) -> EvalSet:
    """Read and validate ``root/questions.jsonl``. ``texts`` maps each document (relative to docs/) to its
    decoded text; when given, every quote must occur in its document's text verbatim. Raises EvalSetError."""
    path = root / "questions.jsonl"
    if not path.is_file():
        raise EvalSetError(f"{path}: no questions.jsonl")
    questions, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalSetError(f"{where}: not JSON ({exc.msg})") from None
        q = _question(raw, where)
        if q.id in seen:
            raise EvalSetError(f"{where}: duplicate id {q.id}")
        seen.add(q.id)
        for ev in q.evidence:
            if texts is not None and ev.document not in texts:
                raise EvalSetError(f"{where} ({q.id}): evidence document {ev.document!r} is not in {root / 'docs'}")
            if texts is not None and ev.quote not in texts[ev.document]:
                raise EvalSetError(f"{where} ({q.id}): quote not verbatim in {ev.document}: {ev.quote[:80]!r}")
        questions.append(q)
    if not questions:
        raise EvalSetError(f"{path}: no questions")
    return EvalSet(root.name, root, tuple(questions))


def find_sets(eval_root: Path) -> dict[str, Path]:
    """Every set folder under ``eval_root`` (one level, and under heldout/), by name."""
    found = {}
    for qfile in sorted(eval_root.glob("*/questions.jsonl")) + sorted(eval_root.glob("*/*/questions.jsonl")):
        found[qfile.parent.name] = qfile.parent
    return found
