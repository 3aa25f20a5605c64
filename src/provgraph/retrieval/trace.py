"""Writing a trace step: the same quads go to ``urn:graph:retrieval`` and into the stream."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from provgraph.events import Explain, Usage
from provgraph.models.base import Usage as CallUsage
from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["TraceWriter", "UsageTally", "llm_call"]


def llm_call(usage: CallUsage) -> LlmCall:
    """A model call's usage as recorded on a trace step."""
    return LlmCall(usage.model, usage.input_tokens, usage.output_tokens, usage.estimated)


class TraceWriter:
    """Writes each step in its own transaction as it completes, and returns its ``Explain`` event."""

    def __init__(self, store: OxigraphStore, *, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled

    def step(self, step: str, iri: Iri, quads: Sequence[Quad]) -> Explain:
        """Store the step's quads (all in ``urn:graph:retrieval``) and make its event."""
        assert all(q.g is GRAPH_RETRIEVAL or q.g == GRAPH_RETRIEVAL for q in quads), "trace quads belong in urn:graph:retrieval"
        if self.enabled:
            self.store.add(quads)
        return Explain(step=step, explain_id=iri.value, triples=tuple(quads))


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
