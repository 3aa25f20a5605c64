"""Conversation turns in ``urn:graph:retrieval`` (docs/trace-format.md, "Conversations").

A conversation is a ``tg:Conversation`` node; each turn is the question activity of one trace
(GraphRAG, Document RAG or agent), numbered by ``tg:turn``. A later turn links to the turn before
it (``tg:previousTurn``, a sub-property of ``prov:wasInformedBy``) and ``prov:used`` that turn's
answer; when the question was rewritten with the history, ``tg:originalQuery`` keeps what was asked
(``tg:query`` is what was answered), ``tg:rewriteMethod`` says how, and ``tg:contextEntity`` names
what the rewrite carried over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from provgraph.provenance.common import LlmCall, Quads, llm_call_quads
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG

__all__ = ["TurnLink", "conversation_quads", "turn_quads", "rewrite_quads", "allowed_tool_quads", "REWRITE_METHODS"]

G = GRAPH_RETRIEVAL
REWRITE_METHODS = ("none", "llm", "entities")


@dataclass(frozen=True, slots=True)
class TurnLink:
    """What a turn came from: the previous turn's question and answer, and how the question was rewritten."""

    asked: str
    method: str = "none"  # none | llm | entities
    previous: Iri | None = None
    previous_answer: Iri | None = None
    entities: tuple[str, ...] = ()
    history_turns: int = 0
    llm: LlmCall | None = None


def conversation_quads(conversation: Iri, *, cid: str, started: datetime) -> list[Quad]:
    """The conversation node, written with its first turn (and again, unchanged, with later ones)."""
    q = Quads(G).types(conversation, TG.Conversation).text(conversation, RDFS.label, f"Conversation {cid}")
    q.text(conversation, TG.conversationId, cid)
    return q.add(conversation, PROV.startedAtTime, Literal.timestamp(started)).items


def turn_quads(question: Iri, *, conversation: Iri, turn: int, query: str, link: TurnLink) -> list[Quad]:
    """The statements that make ``question`` turn ``turn`` (1-based) of ``conversation``."""
    q = Quads(G).add(question, TG.conversation, conversation).integer(question, TG.turn, turn)
    if link.previous is not None:
        q.add(question, TG.previousTurn, link.previous)
    if link.previous_answer is not None:
        q.add(question, PROV.used, link.previous_answer)
    return q.items + rewrite_quads(question, query=query, link=link)


def rewrite_quads(question: Iri, *, query: str, link: TurnLink) -> list[Quad]:
    """How ``question`` was rewritten (also for a client's own history, with no stored conversation)."""
    if link.method not in REWRITE_METHODS:
        raise ValueError(f"unknown rewrite method {link.method!r}")
    q = Quads(G)
    if link.asked != query:
        q.text(question, TG.originalQuery, link.asked)
    q.text(question, TG.rewriteMethod, link.method)
    for entity in link.entities:
        q.text(question, TG.contextEntity, entity)
    if link.history_turns:
        q.integer(question, TG.historyTurns, link.history_turns)
    return q.items + llm_call_quads(question, link.llm, G)


def allowed_tool_quads(question: Iri, tools: Sequence[str], group: Sequence[str]) -> list[Quad]:
    """An agent question's tool groups and the tools they allowed (``tg:toolGroup``, ``tg:allowedTool``)."""
    q = Quads(G)
    for name in group:
        q.text(question, TG.toolGroup, name)
    for name in tools:
        q.text(question, TG.allowedTool, name)
    return q.items
