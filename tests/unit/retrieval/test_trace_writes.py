"""Trace steps written beside the next stage's work: stored before their event, in order, failures as before."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest

from provgraph.config import Settings
from provgraph.errors import QueryError, StoreError
from provgraph.events import ErrorMessage, Event, Explain, Final
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, RDFS
from provgraph.retrieval import graph_rag
from provgraph.retrieval.document_rag import DocumentRag
from provgraph.retrieval.graph_rag import GraphRag
from provgraph.retrieval.trace import TraceWriter
from provgraph.runtime import Runtime
from provgraph.store.base import QuadStore
from provgraph.store.oxigraph import OxigraphStore
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema
from tests.unit.retrieval.graph_world import WHEN, World, world  # noqa: F401

SID = "s1"
Q = "Who discovered polonium?"
STEP = Iri("urn:test:step")
QUADS = [Quad(STEP, RDFS.label, Literal("a step"), GRAPH_RETRIEVAL)]
FULL = "collection memory: write failed: No space left on device"


def names(events: Sequence[Event]) -> list[str]:
    return [e.step if isinstance(e, Explain) else type(e).__name__ for e in events]


def failing_add(store: QuadStore, monkeypatch: pytest.MonkeyPatch, subject: Iri) -> list[Iri]:
    """Make writing the step about ``subject`` fail as a full disk would; returns the subjects of later writes."""
    real = store.add
    later: list[Iri] = []

    def add(quads: Sequence[Quad], **kw: Any) -> int:  # the store's own options as given (PostgreSQL's add has none)
        subjects = {q.s for q in quads}
        if subject in subjects:
            raise StoreError(FULL)
        later.extend(s for s in subjects if isinstance(s, Iri))
        return real(quads, **kw)

    monkeypatch.setattr(store, "add", add)
    return later


# -- the writer ---------------------------------------------------------------------------------------------

def test_the_step_is_written_while_the_work_runs_and_is_stored_when_the_event_comes_back() -> None:
    """Neither waits for the other: the write starts before the work ends and the work before the write ends."""
    store = OxigraphStore()
    work_started, write_started = threading.Event(), threading.Event()
    real = store.add

    def add(quads: Sequence[Quad], *, atomic: bool = True) -> int:
        write_started.set()
        assert work_started.wait(timeout=30), "the write waited for the work to end"
        return real(quads, atomic=atomic)

    store.add = add  # type: ignore[method-assign]

    def work() -> str:
        work_started.set()
        assert write_started.wait(timeout=30), "the work ran before the write started"
        return "found"

    event, outcome = TraceWriter(store).beside("question", STEP, QUADS, work)
    assert event == Explain(step="question", explain_id=STEP.value, triples=tuple(QUADS))
    assert set(store.match(g=GRAPH_RETRIEVAL)) == set(QUADS)
    assert outcome.result() == "found"


def test_a_failed_write_raises_its_own_error_even_when_the_work_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    store = OxigraphStore()
    failing_add(store, monkeypatch, STEP)
    done: list[str] = []
    with pytest.raises(StoreError, match="No space left on device"):
        TraceWriter(store).beside("question", STEP, QUADS, lambda: done.append("work"))
    assert len(store) == 0


def test_a_failed_write_wins_over_a_failed_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """The write came first: its error is the one raised, as when the step was written before the work."""
    store = OxigraphStore()
    failing_add(store, monkeypatch, STEP)

    def work() -> None:
        raise QueryError("the walk failed")

    with pytest.raises(StoreError, match="No space left on device"):
        TraceWriter(store).beside("question", STEP, QUADS, work)


def test_a_failed_work_leaves_its_step_stored_and_its_error_for_after_the_event() -> None:
    store = OxigraphStore()

    def work() -> None:
        raise QueryError("the walk failed")

    event, outcome = TraceWriter(store).beside("question", STEP, QUADS, work)
    assert event.step == "question" and set(store.match(g=GRAPH_RETRIEVAL)) == set(QUADS)
    with pytest.raises(QueryError, match="the walk failed"):
        outcome.result()


def test_a_disabled_writer_does_the_work_and_stores_nothing() -> None:
    store = OxigraphStore()
    event, outcome = TraceWriter(store, enabled=False).beside("question", STEP, QUADS, lambda: 42)
    assert event.triples == tuple(QUADS) and outcome.result() == 42 and len(store) == 0


# -- GraphRAG -----------------------------------------------------------------------------------------------

def graph_rag_events(w: World, llm: ScriptedChatModel | None = None) -> list[Event]:
    """The events, each checked as it arrives: an Explain is already stored, and at Final the whole trace is."""
    rag = GraphRag(w.store, w.librarian, w.embedder, w.index, llm, clock=lambda: WHEN)  # type: ignore[arg-type]
    return consume(rag.ask(Q, session_id=SID), w.store)


def consume(stream: AsyncIterator[Event], store: OxigraphStore) -> list[Event]:
    async def run() -> list[Event]:
        events: list[Event] = []
        async for ev in stream:
            stored = set(store.match(g=GRAPH_RETRIEVAL))
            if isinstance(ev, Explain):
                assert set(ev.triples) <= stored, f"{ev.step} arrived before it was stored"
            if isinstance(ev, Final):
                streamed = {q for e in events if isinstance(e, Explain) for q in e.triples}
                assert streamed <= stored, "Final arrived before the whole trace was stored"
            events.append(ev)
        return events

    return asyncio.run(run())


def test_graph_rag_streams_each_step_once_stored_and_final_after_the_whole_trace(world: World) -> None:
    llm = ScriptedChatModel(by_schema({"complete": "", "stream": "Marie Curie discovered polonium [1]."}))
    for model in (None, llm):
        events = graph_rag_events(world, model)
        assert names(events)[:3] == ["question", "exploration", "focus"] and names(events)[-2:] == ["synthesis", "Final"]


@pytest.mark.parametrize("failing", ["question", "exploration", "focus"])
def test_graph_rag_a_step_failing_in_the_background_ends_with_its_error_and_nothing_after_it(
    world: World, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    steps = {"question": ids.question_iri(SID), "exploration": ids.exploration_iri(SID), "focus": ids.focus_iri(SID)}
    later = failing_add(world.store, monkeypatch, steps[failing])
    events = graph_rag_events(world)
    before = list(steps)[: list(steps).index(failing)]
    assert names(events) == [*before, "ErrorMessage"]
    assert events[-1] == ErrorMessage(type="StoreError", message=FULL, session_id=SID)
    assert later == [steps[s] for s in before]  # no step after the failed one was written
    assert not world.librarian.exists(ids.graph_rag_answer_iri(SID).value)


def test_graph_rag_a_failure_beside_a_write_comes_after_that_step(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sources are read while the focus is written: their failure still follows the stored focus step."""

    def broken(*args: object, **kwargs: object) -> None:
        raise QueryError("collection memory: query failed: gone")

    monkeypatch.setattr(graph_rag, "edge_sources", broken)
    events = graph_rag_events(world)
    assert names(events) == ["question", "exploration", "focus", "ErrorMessage"]
    assert events[-1] == ErrorMessage(type="QueryError", message="collection memory: query failed: gone",
                                      session_id=SID)


# -- Document RAG -------------------------------------------------------------------------------------------

@pytest.fixture
def rt(corpus_settings: Settings) -> Iterator[Runtime]:
    with Runtime(corpus_settings, create=False, llm=None) as runtime:
        yield runtime


def doc_rag_events(rt: Runtime, llm: ScriptedChatModel | None = None) -> list[Event]:
    rag = DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index, llm, clock=lambda: WHEN)
    return consume(rag.ask(Q, session_id=SID), rt.store)


def test_document_rag_streams_each_step_once_stored_and_final_after_the_whole_trace(rt: Runtime) -> None:
    for llm in (None, ScriptedChatModel(by_schema({"stream": "Polonium was found in 1898 [1]."}))):
        events = doc_rag_events(rt, llm)
        assert [n for n in names(events) if n != "AnswerPiece"] == ["question", "exploration", "synthesis", "Final"]


@pytest.mark.parametrize("failing", ["question", "exploration"])
def test_document_rag_a_step_failing_in_the_background_ends_with_its_error_and_nothing_after_it(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    steps = {"question": ids.docrag_question_iri(SID), "exploration": ids.docrag_exploration_iri(SID)}
    later = failing_add(rt.store, monkeypatch, steps[failing])
    events = doc_rag_events(rt)
    before = list(steps)[: list(steps).index(failing)]
    assert names(events) == [*before, "ErrorMessage"]
    assert events[-1] == ErrorMessage(type="StoreError", message=FULL, session_id=SID)
    assert [s for s in later if s in steps.values()] == [steps[s] for s in before]
    assert not rt.store.count(ids.docrag_synthesis_iri(SID), g=GRAPH_RETRIEVAL)
    assert not rt.librarian.exists(ids.docrag_answer_iri(SID).value)


def test_document_rag_a_failure_reading_the_sources_comes_after_the_stored_synthesis(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The passages' sources are read beside the steps: their failure follows the stored synthesis step."""
    from provgraph.retrieval import document_rag

    def broken(*args: object) -> None:
        raise QueryError("collection corpus: query failed: gone")

    monkeypatch.setattr(document_rag, "chunk_sources", broken)
    events = doc_rag_events(rt)
    assert [n for n in names(events) if n != "AnswerPiece"] == ["question", "exploration", "synthesis", "ErrorMessage"]
    assert events[-1] == ErrorMessage(type="QueryError", message="collection corpus: query failed: gone", session_id=SID)
    assert rt.store.count(ids.docrag_synthesis_iri(SID), g=GRAPH_RETRIEVAL)
