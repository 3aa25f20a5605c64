"""Writing a trace step: the same quads go to ``urn:graph:retrieval`` and into the stream.

A step is written in its own transaction, either before the engine goes on (:meth:`TraceWriter.step`)
or on a worker thread while the engine computes its next stage (:meth:`TraceWriter.beside`: RocksDB
commits without the GIL). Either way the step's ``Explain`` event is handed back only once the step is
stored, a failed write raises its own error before anything else, and a step is never started while
the one before it is still being written, so a failed write leaves no later step in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TypeVar

from provgraph.events import Explain, Usage
from provgraph.models.base import Usage as CallUsage
from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL
from provgraph.retrieval.background import running
from provgraph.store.base import QuadStore

__all__ = ["TraceWriter", "UsageTally", "llm_call"]

T = TypeVar("T")


def llm_call(usage: CallUsage) -> LlmCall:
    """A model call's usage as recorded on a trace step."""
    return LlmCall(usage.model, usage.input_tokens, usage.output_tokens, usage.estimated)


class TraceWriter:
    """Writes each step in its own transaction as it completes, and returns its ``Explain`` event."""

    def __init__(self, store: QuadStore, *, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled

    def step(self, step: str, iri: Iri, quads: Sequence[Quad]) -> Explain:
        """Store the step's quads (all in ``urn:graph:retrieval``) and make its event."""
        event = _event(step, iri, quads)
        if self.enabled:
            self.store.add(quads)
        return event

    def beside(self, step: str, iri: Iri, quads: Sequence[Quad], work: Callable[[], T]) -> tuple[Explain, Future[T]]:
        """Store the step on a worker while ``work()`` runs here; returns once both are done.

        Gives the step's event and ``work``'s outcome (its value or its exception, raised by
        ``result()``): the caller yields the event first, then reads the outcome, so the events are
        those of writing the step before doing the work. A failed write raises its error here, whatever
        ``work`` did (it came first).
        """
        event = _event(step, iri, quads)
        outcome: Future[T] = Future()
        if not self.enabled:
            _settle(outcome, work)
            return event, outcome
        with running(self.store.add, list(quads), handoff=True) as writing:
            _settle(outcome, work)
        writing.result()
        return event, outcome


def _event(step: str, iri: Iri, quads: Sequence[Quad]) -> Explain:
    assert all(q.g is GRAPH_RETRIEVAL or q.g == GRAPH_RETRIEVAL for q in quads), "trace quads belong in urn:graph:retrieval"
    return Explain(step=step, explain_id=iri.value, triples=tuple(quads))


def _settle(outcome: Future[T], work: Callable[[], T]) -> None:
    try:
        outcome.set_result(work())
    except Exception as exc:  # kept for the caller to raise once the step's event is out
        outcome.set_exception(exc)


@dataclass
class UsageTally:
    """Sums token usage over a request's LLM calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    models: list[str] = field(default_factory=list)

    def add(self, usage: CallUsage) -> LlmCall:
        """Count one call; returns it as a trace record."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.calls += 1
        if usage.model not in self.models:
            self.models.append(usage.model)
        return llm_call(usage)

    def merge(self, other: Usage) -> None:
        """Add a sub-request's totals (e.g. an agent tool's GraphRAG run)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.calls += other.llm_calls
        self.models += [m for m in other.models if m not in self.models]

    def total(self) -> Usage:
        """The totals for the final message."""
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens, llm_calls=self.calls,
                     models=tuple(self.models))
