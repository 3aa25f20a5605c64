"""One turn of a conversation: rewrite the question with the history, ask it, link its trace to the last turn.

:func:`converse` wraps any engine's event stream (GraphRAG, Document RAG, the agent): the engine
answers the rewritten question; the turn's statements (docs/trace-format.md, "Conversations") are
written with the engine's question step and carried in its ``explain`` event; the final message
names the conversation and the turn. With traces off nothing is written: the history is read, the
question rewritten, but the turn is not kept.

Example::

    async for event in converse(store, llm, settings, "c1", "When did she die?",
                                lambda q: engine.ask(q)):
        ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone

from provgraph.config import Settings
from provgraph.conversation.history import Turn, conversation_turns, next_turn_number
from provgraph.conversation.rewrite import Exchange, Rewrite, history_window, rewrite_with_entities, rewrite_with_llm
from provgraph.events import ErrorMessage, Event, Explain, Final, Usage
from provgraph.models.base import ChatModel
from provgraph.provenance.common import LlmCall
from provgraph.provenance.conversation import TurnLink, conversation_quads, rewrite_quads, turn_quads
from provgraph.rdf.ids import check_conversation_id, conversation_iri
from provgraph.rdf.terms import Iri, Quad
from provgraph.store.base import QuadStore

__all__ = ["converse", "ask_in", "ask_with_history", "Starter"]

Starter = Callable[[str], AsyncIterator[Event]]


def _usage(total: Usage, rewrite: Rewrite) -> Usage:
    if rewrite.usage is None:
        return total
    u = rewrite.usage
    models = total.models if u.model in total.models else (*total.models, u.model)
    return Usage(input_tokens=total.input_tokens + u.input_tokens, output_tokens=total.output_tokens + u.output_tokens,
                 llm_calls=total.llm_calls + 1, models=models)


async def _rewrite(llm: ChatModel | None, settings: Settings, question: str,
                   history: Sequence[Exchange]) -> Rewrite:
    window = history_window(history, turns=settings.conversation_turns, tokens=settings.conversation_tokens)
    if llm is not None and window:
        return await rewrite_with_llm(llm, question, window)
    return rewrite_with_entities(question, list(history)[-1:])


async def converse(store: QuadStore, llm: ChatModel | None, settings: Settings, cid: str | None, question: str,
                   start: Starter, *, history: Sequence[Exchange] | None = None,
                   clock: Callable[[], datetime] | None = None) -> AsyncIterator[Event]:
    """The events of ``start(rewritten question)``, as turn N+1 of conversation ``cid`` (see the module docstring).

    With ``history`` and no ``cid`` (a client's own message history), the question is rewritten with
    it and the trace records the rewrite, but no conversation is stored.
    """
    previous: Turn | None = None
    try:
        if cid is not None:
            check_conversation_id(cid)
            stored = conversation_turns(store, cid, last=max(settings.conversation_turns, 1), missing_ok=True)
            previous = stored[-1] if stored else None
            history = stored
        rewrite = await _rewrite(llm, settings, question, history or [])
        number = next_turn_number(store, cid) if cid is not None else 0
    except Exception as exc:  # a failure before the engine starts is the stream's one error
        yield ErrorMessage(type=type(exc).__name__, message=str(exc) or type(exc).__name__)
        return
    u = rewrite.usage
    link = TurnLink(
        asked=question, method=rewrite.method,
        previous=previous.question if previous else None,
        previous_answer=previous.answer_step if previous else None,
        entities=rewrite.entities, history_turns=rewrite.history_turns,
        llm=LlmCall(u.model, u.input_tokens, u.output_tokens, u.estimated) if u is not None else None,
    )
    linked = False
    async for event in start(rewrite.question):
        if isinstance(event, Explain) and event.step == "question" and not linked:
            linked = True
            quads = _turn_quads(Iri(event.explain_id), cid, number, rewrite.question, link, clock)
            if settings.traces:
                store.add(quads)
            event = replace(event, triples=event.triples + tuple(quads))
        elif isinstance(event, Final):
            warnings = event.warnings + ((rewrite.warning,) if rewrite.warning else ())
            event = replace(event, conversation=cid, turn=number if cid is not None else None, warnings=warnings,
                            usage=_usage(event.usage, rewrite))
        yield event


def _turn_quads(question: Iri, cid: str | None, number: int, query: str, link: TurnLink,
                clock: Callable[[], datetime] | None) -> list[Quad]:
    if cid is None:
        return rewrite_quads(question, query=query, link=link)
    conversation = conversation_iri(cid)
    quads = turn_quads(question, conversation=conversation, turn=number, query=query, link=link)
    if number == 1:
        moment = (clock or (lambda: datetime.now(timezone.utc)))()
        quads = conversation_quads(conversation, cid=cid, started=moment) + quads
    return quads


def ask_in(store: QuadStore, llm: ChatModel | None, settings: Settings, cid: str | None, question: str,
           start: Starter) -> AsyncIterator[Event]:
    """``start(question)`` on its own, or as a turn of conversation ``cid`` when one is given."""
    return start(question) if cid is None else converse(store, llm, settings, cid, question, start)


def ask_with_history(store: QuadStore, llm: ChatModel | None, settings: Settings, history: Sequence[Exchange],
                     question: str, start: Starter) -> AsyncIterator[Event]:
    """``start(question)`` after the client's own history (no stored conversation), the rewrite in the trace."""
    return start(question) if not history else converse(store, llm, settings, None, question, start,
                                                         history=history)
