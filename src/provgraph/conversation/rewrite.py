"""A follow-up question made standalone: with the history (LLM), or with the previous turn's names (no LLM).

With an LLM, the last turns (bounded by ``conversation_turns`` and ``conversation_tokens``) and
the question go to one JSON call that returns the question rewritten to stand alone. Without one
(or when that call fails), pronouns are replaced by a name the previous turn carried: the name its
own rewrite used (the conversation keeps its topic), else the first name of its answer that its
question did not hold (the answer to "who …?"), else the first name of its question. A question
without a pronoun is answered as asked. Either way the trace records what was asked, what was
answered and what the rewrite came from (:class:`~provgraph.provenance.conversation.TurnLink`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from provgraph.errors import ModelError
from provgraph.extract.nlp_entities import candidates, lowercase_words
from provgraph.models.base import ChatModel, Usage, assistant, system, user

__all__ = ["Exchange", "Said", "Rewrite", "rewrite_with_entities", "rewrite_with_llm", "history_window", "REWRITE_SCHEMA"]

REWRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 1000}},
    "required": ["question"],
    "additionalProperties": False,
}
_PRONOUN = re.compile(r"\b(she|he|her|him|his|hers|it|its|they|them|their)\b", re.IGNORECASE)
_POSSESSIVE = {"his", "its", "their", "hers"}
_MARKER = re.compile(r"\s*\[\d+\]")
_CHARS_PER_TOKEN = 4


class Exchange(Protocol):
    """One earlier turn as the rewrite reads it: a stored :class:`~provgraph.conversation.history.Turn`,
    or a :class:`Said` from a client's message history."""

    @property
    def query(self) -> str: ...

    @property
    def answer(self) -> str: ...

    @property
    def entities(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class Said:
    """A question and its answer from a client's message history (e.g. an OpenAI chat request)."""

    query: str
    answer: str
    entities: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The question to answer, how it was made, and what it came from."""

    question: str
    method: str  # none | llm | entities
    entities: tuple[str, ...] = ()
    history_turns: int = 0
    usage: Usage | None = None
    warning: str | None = None


def _names(text: str) -> list[str]:
    clean = _MARKER.sub("", text)
    found = candidates(clean, 0, len(clean), lowercase_words(clean))
    return list(dict.fromkeys(c.label for c in found if c.named))


def _referent(previous: Exchange) -> str | None:
    if previous.entities:
        return previous.entities[0]
    asked = previous.query.casefold()
    fresh = [n for n in _names(previous.answer) if n.casefold() not in asked]
    names = fresh or _names(previous.query)
    return names[0] if names else None


def rewrite_with_entities(question: str, history: Sequence[Exchange]) -> Rewrite:
    """Pronouns replaced by the previous turn's name (see the module docstring); no pronoun, no rewrite."""
    if not history or not _PRONOUN.search(question):
        return Rewrite(question, "none")
    name = _referent(history[-1])
    if name is None:
        return Rewrite(question, "none", warning="the previous turn names nothing a pronoun could stand for")

    def replace(match: re.Match[str]) -> str:
        word = match.group(1).lower()
        rest = question[match.end():]
        possessive = word in _POSSESSIVE or (word == "her" and re.match(r"\s+[a-z]", rest) is not None)
        return f"{name}'s" if possessive else name

    return Rewrite(_PRONOUN.sub(replace, question), "entities", (name,))


def history_window(history: Sequence[Exchange], *, turns: int, tokens: int) -> list[Exchange]:
    """The last turns that fit: at most ``turns``, newest kept first, at most ``tokens`` (estimated) in all."""
    kept: list[Exchange] = []
    budget = tokens * _CHARS_PER_TOKEN
    for turn in reversed(list(history)[-turns:] if turns > 0 else []):
        size = len(turn.query) + len(turn.answer)
        if size > budget:
            break
        budget -= size
        kept.append(turn)
    return kept[::-1]


async def rewrite_with_llm(llm: ChatModel, question: str, history: Sequence[Exchange]) -> Rewrite:
    """The question rewritten by the model to stand alone; falls back to names on a model error."""
    if not history:
        return Rewrite(question, "none")
    messages = [system(
        "You rewrite the user's last question so that it can be understood without the conversation: "
        "replace pronouns and references with what they stand for, keep everything else. If it already "
        'stands alone, return it unchanged. Reply with JSON: {"question": "…"}.')]
    for turn in history:
        messages += [user(turn.query), assistant(_MARKER.sub("", turn.answer))]
    messages.append(user(question))
    try:
        reply = await llm.complete_json(messages, schema=REWRITE_SCHEMA, schema_name="question_rewrite")
    except ModelError as exc:
        fallback = rewrite_with_entities(question, history)
        return Rewrite(fallback.question, fallback.method, fallback.entities,
                       warning=f"question rewrite fell back to the previous turn's names: {exc}")
    rewritten = " ".join(str(reply.data["question"]).split()) or question
    return Rewrite(rewritten, "llm", history_turns=len(history), usage=reply.usage)
