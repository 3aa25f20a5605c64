"""A stand-in GraphRAG engine for agent tests: writes a real mini trace with the provenance builders.

It has the engine's shape (``ask(question, *, session_id=None, informed_by=None)`` streaming
events) and records what it was asked. ``fail=True`` makes it stop after the question step
with an ``ErrorMessage``, as the real engine does when a step fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

from provgraph.events import AnswerPiece, ErrorMessage, Event, Final, Source, Usage
from provgraph.provenance.graph_rag import (
    EdgeChoice,
    exploration_quads,
    focus_quads,
    question_quads,
    synthesis_quads,
)
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.retrieval.trace import TraceWriter
from provgraph.store.oxigraph import OxigraphStore

EDGE = TripleTerm(Iri("urn:provgraph:entity:marie_curie"), Iri("urn:provgraph:entity:rel/discovered"),
                  Iri("urn:provgraph:entity:polonium"))
SOURCE = Source(document="urn:doc:polonium", title="Polonium and radium", chunk="urn:chunk:c1", chunk_index=1,
                offset=0, length=120, edge=EDGE, marker="[1]")
USAGE = Usage(input_tokens=7, output_tokens=3, llm_calls=1, models=("stub:graph",))


class StubGraphRag:
    """Answers every question with ``answer`` and a one-edge trace."""

    def __init__(self, store: OxigraphStore, answer: str, *, fail: bool = False, sid: str = "sub1") -> None:
        self.writer = TraceWriter(store)
        self.answer = answer
        self.fail = fail
        self.sid = sid
        self.asked: list[tuple[str, Iri | None]] = []

    async def ask(self, question: str, *, session_id: str | None = None,
                  informed_by: Iri | None = None) -> AsyncIterator[Event]:
        sid = session_id or self.sid
        self.asked.append((question, informed_by))
        q = ids.question_iri(sid)
        started = datetime(2026, 1, 2, tzinfo=UTC)
        yield self.writer.step("question", q, question_quads(q, query=question, started=started,
                                                             informed_by=informed_by))
        if self.fail:
            yield ErrorMessage(type="StoreError", message="stub: the store went away", session_id=sid)
            return
        x = ids.exploration_iri(sid)
        yield self.writer.step("exploration", x, exploration_quads(x, question=q, edge_count=1, entities=[EDGE.s]))
        f = ids.focus_iri(sid)
        choice = EdgeChoice(ids.edge_selection_iri(sid, 0), EDGE, "it names the discoverer", 0.9)
        yield self.writer.step("focus", f, focus_quads(f, question=q, exploration=x, selections=[choice], llm=None))
        yield AnswerPiece(text=self.answer)
        yield AnswerPiece(text="", end_of_stream=True)
        a = ids.synthesis_iri(sid)
        yield self.writer.step("synthesis", a, synthesis_quads(
            a, question=q, derived_from=f, document=ids.graph_rag_answer_iri(sid), content=self.answer, llm=None))
        yield Final(session_id=sid, answer=self.answer, sources=(SOURCE,), usage=USAGE)


__all__ = ["StubGraphRag", "EDGE", "SOURCE", "USAGE"]
