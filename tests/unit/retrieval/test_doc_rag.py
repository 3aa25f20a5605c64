"""Document RAG on the sample corpus: event order, the exact trace, citations and sources."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import numpy as np
import pytest

from provgraph.config import Settings
from provgraph.events import AnswerPiece, ErrorMessage, Event, Explain, Final
from provgraph.errors import ModelUnavailable, StoreError
from provgraph.models.base import ChatModel
from provgraph.rdf.ids import docrag_answer_iri, docrag_exploration_iri, docrag_question_iri, docrag_synthesis_iri
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, TG
from provgraph.retrieval.document_rag import EMPTY_ANSWER, NO_PASSAGES, DocumentRag, cited_markers
from provgraph.runtime import Runtime
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema, failing
from tests.unit.agent.conftest import canon
from tests.unit.provenance.helpers import nq

T = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T_LIT = '"2026-01-02T03:04:05Z"^^dt'
R = "@urn:graph:retrieval"
QUESTION = "Who discovered polonium?"
SID = "s1"


@pytest.fixture
def rt(corpus_settings: Settings) -> Iterator[Runtime]:
    with Runtime(corpus_settings, create=False, llm=None) as runtime:
        yield runtime


def engine(rt: Runtime, llm: ChatModel | None, doc_limit: int = 5) -> DocumentRag:
    return DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index, llm, doc_limit=doc_limit, clock=lambda: T)


def collect(stream: AsyncIterator[Event]) -> list[Event]:
    async def run() -> list[Event]:
        return [ev async for ev in stream]

    return asyncio.run(run())


def top_chunks(rt: Runtime, k: int = 5) -> list[Iri]:
    return [c for c, _ in top_hits(rt, k)]


def top_hits(rt: Runtime, k: int = 5) -> list[tuple[Iri, float]]:
    """The oracle: every chunk text from the librarian ranked by brute-force cosine, not by the vector index."""
    ids = [r.id for r in rt.librarian.list(kind="chunk")]
    texts = rt.librarian.texts(ids)
    scores = rt.embedder.embed([texts[i] for i in ids]) @ rt.embedder.embed([QUESTION])[0]
    return [(Iri(ids[i]), float(scores[i])) for i in np.argsort(-scores, kind="stable")[:k]]


def stored(rt: Runtime, iri: Iri) -> set[str]:
    return nq(rt.store.match(iri, None, None, g=GRAPH_RETRIEVAL))


def test_cited_markers_keeps_first_citation_order_and_reports_invented_ids() -> None:
    assert cited_markers("a [3]. b [1, 3] [2][3] c [12] [0]", 3) == ([3, 1, 2], [12, 0])
    assert cited_markers("no citations", 3) == ([], [])


def test_with_llm_events_trace_and_citations(rt: Runtime) -> None:
    answer = "Marie and Pierre Curie discovered polonium in 1898 [2]. They named it after Poland [1][9]."
    llm = ScriptedChatModel(by_schema({"stream": answer}))
    events = collect(engine(rt, llm).ask(QUESTION, session_id=SID))

    kinds = [type(e).__name__ if not isinstance(e, Explain) else e.step for e in events]
    pieces = [e for e in events if isinstance(e, AnswerPiece)]
    assert kinds == ["question", "exploration", *["AnswerPiece"] * len(pieces), "synthesis", "Final"]
    assert "".join(p.text for p in pieces) == answer and pieces[-1].end_of_stream and not pieces[0].end_of_stream

    q, x, a = docrag_question_iri(SID), docrag_exploration_iri(SID), docrag_synthesis_iri(SID)
    chunks = top_chunks(rt)
    assert [e.explain_id for e in events if isinstance(e, Explain)] == [q.value, x.value, a.value]
    assert stored(rt, q) == {
        f"<{q.value}> <rdf:type> <prov:Activity> {R}", f"<{q.value}> <rdf:type> <tg:Question> {R}",
        f"<{q.value}> <rdf:type> <tg:DocRagQuestion> {R}", f'<{q.value}> <rdfs:label> "Document RAG Question" {R}',
        f'<{q.value}> <tg:query> "{QUESTION}" {R}', f"<{q.value}> <prov:startedAtTime> {T_LIT} {R}",
    }
    assert stored(rt, x) == {
        f"<{x.value}> <rdf:type> <prov:Entity> {R}", f"<{x.value}> <rdf:type> <tg:Exploration> {R}",
        f'<{x.value}> <rdfs:label> "Exploration" {R}', f"<{x.value}> <prov:wasGeneratedBy> <{q.value}> {R}",
        f'<{x.value}> <tg:chunkCount> "5"^^int {R}',
        *(f"<{x.value}> <tg:selectedChunk> <{c.value}> {R}" for c in chunks),
        f'<{x.value}> <tg:embeddingModel> "{rt.embedder.name}" {R}',
        *(f"<{x.value}> <tg:chunkSelection> <{x.value}/chunk/{i}> {R}" for i in range(1, 6)),
    }
    # one ranked selection per retrieved chunk: rank, score and retriever
    for rank, (chunk, score) in enumerate(top_hits(rt), start=1):
        sel = Iri(f"{x.value}/chunk/{rank}")
        lines = stored(rt, sel)
        [stored_score] = [q.o.to_python() for q in rt.store.match(sel, TG.score, None, g=GRAPH_RETRIEVAL)]
        assert stored_score == pytest.approx(score, abs=1e-5)
        assert lines - {line for line in lines if "<tg:score>" in line} == {
            f"<{sel.value}> <rdf:type> <tg:ChunkSelection> {R}", f'<{sel.value}> <rdfs:label> "Rank {rank}" {R}',
            f"<{sel.value}> <tg:chunk> <{chunk.value}> {R}", f'<{sel.value}> <tg:rank> "{rank}"^^int {R}',
            f'<{sel.value}> <tg:retriever> "dense" {R}',
        }
    doc = docrag_answer_iri(SID)
    assert stored(rt, a) == {
        f"<{a.value}> <rdf:type> <prov:Entity> {R}", f"<{a.value}> <rdf:type> <tg:Synthesis> {R}",
        f"<{a.value}> <rdf:type> <tg:Answer> {R}", f'<{a.value}> <rdfs:label> "Synthesis" {R}',
        f"<{a.value}> <prov:wasGeneratedBy> <{q.value}> {R}", f"<{a.value}> <prov:wasDerivedFrom> <{x.value}> {R}",
        f"<{a.value}> <tg:document> <{doc.value}> {R}", f'<{a.value}> <tg:content> "{answer}" {R}',
        f"<{a.value}> <tg:selectedChunk> <{chunks[1].value}> {R}",
        f"<{a.value}> <tg:selectedChunk> <{chunks[0].value}> {R}",
        f'<{a.value}> <tg:inToken> "10"^^int {R}', f'<{a.value}> <tg:outToken> "5"^^int {R}',
        f'<{a.value}> <tg:llmModel> "scripted:test" {R}',
        *(f"<{a.value}> <tg:citation> <{a.value}/citation/{n}> {R}" for n in (1, 2, 3)),
    }
    # each marker as written, the answer span it ends, and the chunk(s) it names
    second = answer.index("They named")
    expected = {
        1: ("[2]", 0, len("Marie and Pierre Curie discovered polonium in 1898"), [chunks[1]]),
        2: ("[1]", second, len("They named it after Poland"), [chunks[0]]),
        3: ("[9]", second, len("They named it after Poland"), []),
    }
    for n, (marker, offset, length, cited) in expected.items():
        c = f"{a.value}/citation/{n}"
        assert stored(rt, Iri(c)) == {
            f"<{c}> <rdf:type> <tg:Citation> {R}", f'<{c}> <tg:marker> "{marker}" {R}',
            f'<{c}> <tg:charOffset> "{offset}"^^int {R}', f'<{c}> <tg:charLength> "{length}"^^int {R}',
            *(f"<{c}> <tg:selectedChunk> <{chunk.value}> {R}" for chunk in cited),
        }
    # the streamed triples are the stored ones (the step's own, and its parts')
    for e in events:
        if isinstance(e, Explain):
            subjects = {q.s for q in e.triples}
            assert canon(e.triples) == canon(
                [q for s in subjects for q in rt.store.match(s, None, None, g=GRAPH_RETRIEVAL)])
    assert rt.librarian.text(doc.value) == answer and rt.librarian.get(doc.value).kind == "answer"

    final = events[-1]
    assert isinstance(final, Final) and final.session_id == SID and final.answer == answer
    assert [(s.chunk, s.marker) for s in final.sources] == [(chunks[1].value, "[2]"), (chunks[0].value, "[1]")]
    assert final.warnings == ("ignored citation(s) of unknown passage(s): [9]",)
    assert (final.usage.llm_calls, final.usage.input_tokens, final.usage.output_tokens) == (1, 10, 5)

    # one LLM call; every passage shown with its id and its exact text
    assert [c.kind for c in llm.calls] == ["stream"]
    prompt = llm.calls[0].messages[-1].content
    texts = rt.librarian.texts([c.value for c in chunks])
    for i, c in enumerate(chunks, start=1):
        assert f"[{i}] {texts[c.value].strip()}" in prompt
    assert prompt.endswith(f"Question: {QUESTION}")


def test_sources_slice_back_to_the_chunk_text(rt: Runtime) -> None:
    llm = ScriptedChatModel(by_schema({"stream": "See [1] [2] [3] [4] [5]."}))
    final = collect(engine(rt, llm).ask(QUESTION))[-1]
    assert isinstance(final, Final) and [s.marker for s in final.sources] == ["[1]", "[2]", "[3]", "[4]", "[5]"]
    for s in final.sources:
        parent = s.page or s.section or s.document
        chunk_text = rt.librarian.text(s.chunk)
        assert rt.librarian.text(parent)[s.offset:s.offset + s.length] == chunk_text
        assert s.title and s.chunk_index >= 1


def test_all_trace_quads_are_in_the_retrieval_graph(rt: Runtime) -> None:
    events = collect(engine(rt, None).ask(QUESTION, session_id=SID))
    quads = [q for e in events if isinstance(e, Explain) for q in e.triples]
    assert quads and all(q.g == GRAPH_RETRIEVAL for q in quads)


def test_without_llm_the_answer_is_extractive_with_resolving_markers(rt: Runtime) -> None:
    events = collect(engine(rt, None).ask(QUESTION, session_id=SID))
    assert [e.step if isinstance(e, Explain) else type(e).__name__ for e in events] == [
        "question", "exploration", "AnswerPiece", "synthesis", "Final"]
    final = events[-1]
    assert isinstance(final, Final) and final.usage.llm_calls == 0 and final.warnings == ()
    parts = re.findall(r"(.+?) (\[\d\])([.!?])(?: |$)", final.answer)
    # up to 3 quotes, each a sentence or a sentence with the one before it (which resolves a pronoun)
    assert 1 <= len(parts) <= 6 and " ".join(f"{s} {m}{end}" for s, m, end in parts) == final.answer
    by_marker = {s.marker: s for s in final.sources}
    for sentence, marker, end in parts:
        assert sentence + end in " ".join(rt.librarian.text(by_marker[marker].chunk).split())
    assert any("polonium" in s.lower() for s, _, _ in parts)
    # the synthesis cites exactly the chunks the markers name, and carries no token counts
    a = docrag_synthesis_iri(SID)
    cited = {q.o for q in rt.store.match(a, TG.selectedChunk, None, g=GRAPH_RETRIEVAL)}
    assert cited == {Iri(s.chunk) for s in final.sources}
    assert not list(rt.store.match(a, TG.inToken, None, g=GRAPH_RETRIEVAL))
    assert rt.librarian.text(docrag_answer_iri(SID).value) == final.answer


def test_doc_limit_and_informed_by(rt: Runtime) -> None:
    agent_q = Iri("urn:trustgraph:agent:a1")
    events = collect(engine(rt, None, doc_limit=2).ask(QUESTION, session_id=SID, informed_by=agent_q))
    q = docrag_question_iri(SID)
    assert f"<{q.value}> <prov:wasInformedBy> <{agent_q.value}> {R}" in stored(rt, q)
    x = docrag_exploration_iri(SID)
    assert len(list(rt.store.match(x, TG.selectedChunk, None, g=GRAPH_RETRIEVAL))) == 2
    assert isinstance(events[-1], Final)


def test_llm_failure_falls_back_to_the_extractive_answer_and_says_why(rt: Runtime) -> None:
    llm = ScriptedChatModel(failing(ModelUnavailable("scripted: endpoint unreachable")))
    events = collect(engine(rt, llm).ask(QUESTION, session_id=SID))
    assert [e.step if isinstance(e, Explain) else type(e).__name__ for e in events] == [
        "question", "exploration", "AnswerPiece", "synthesis", "Final"]
    final = events[-1]
    assert isinstance(final, Final) and final.warnings == (
        "synthesis fell back to an extractive answer: the LLM's answer failed: scripted: endpoint unreachable",)
    assert final.answer == collect(engine(rt, None).ask(QUESTION, session_id="other"))[-1].answer  # type: ignore[union-attr]
    reasoning = [q.o.value for q in rt.store.match(docrag_synthesis_iri(SID), TG.reasoning, None, g=GRAPH_RETRIEVAL)]
    assert reasoning == ["Extractive answer (fallback: the LLM's answer failed: scripted: endpoint unreachable)"]


def test_a_spent_deadline_gives_the_extractive_answer(rt: Runtime) -> None:
    llm = ScriptedChatModel(by_schema({"stream": "never read [1]."}))
    rag = DocumentRag(rt.store, rt.librarian, rt.embedder, rt.chunk_index, llm, clock=lambda: T,
                      question_deadline=1e-9)
    final = collect(rag.ask(QUESTION, session_id=SID))[-1]
    assert isinstance(final, Final)
    assert final.warnings == ("synthesis fell back to an extractive answer: "
                              "the question deadline passed before synthesis",)
    assert llm.calls == []
    assert "never read" not in final.answer and re.search(r"\[\d\]", final.answer)


def test_empty_index_answers_without_asking_the_llm(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings.model_copy(update={"collection": "empty"}), llm=None) as rt:
        llm = ScriptedChatModel(by_schema({"stream": "never"}))
        events = collect(engine(rt, llm).ask(QUESTION, session_id=SID))
        final = events[-1]
        assert isinstance(final, Final) and final.answer == NO_PASSAGES and final.sources == ()
        assert final.warnings == ("no chunk matched the question",) and llm.calls == []
        assert f'<{docrag_exploration_iri(SID).value}> <tg:chunkCount> "0"^^int {R}' in stored(
            rt, docrag_exploration_iri(SID))


def test_empty_question_and_empty_llm_answer(rt: Runtime) -> None:
    events = collect(engine(rt, None).ask("  ", session_id=SID))
    assert events == [ErrorMessage(type="InputError", message="the question is empty", session_id=SID)]
    events = collect(engine(rt, ScriptedChatModel(by_schema({"stream": "  "}))).ask(QUESTION, session_id="s2"))
    final = events[-1]
    assert isinstance(final, Final) and final.answer == EMPTY_ANSWER
    assert final.warnings == ("synthesis: the model returned an empty answer", "the answer cites no passage")
    assert [e.text for e in events if isinstance(e, AnswerPiece)][-2:] == [EMPTY_ANSWER, ""]


def test_steps_reach_the_consumer_before_the_model_is_called(rt: Runtime) -> None:
    """Streamed as it happens, checked by order: when synthesis calls the LLM, the consumer already holds
    the question and exploration steps, and each was in the store when it arrived."""
    received: list[str] = []
    seen_at_call: list[list[str]] = []

    def script(call: object) -> str:
        seen_at_call.append(list(received))
        return "Polonium was found in 1898 [1]."

    async def consume() -> None:
        async for ev in engine(rt, ScriptedChatModel(script)).ask(QUESTION, session_id=SID):
            if isinstance(ev, Explain):
                assert set(ev.triples) <= set(rt.store.match(g=GRAPH_RETRIEVAL)), ev.step
                received.append(ev.step)

    asyncio.run(consume())
    assert seen_at_call == [["question", "exploration"]]
    assert received == ["question", "exploration", "synthesis"]


class FailingAnswers:
    """The corpus librarian, except that adding a record fails (as on a full disk)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def add(self, records: object) -> None:
        raise StoreError("librarian: add failed: database or disk is full")

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_the_synthesis_step_is_written_only_after_its_answer_record(rt: Runtime) -> None:
    """The answer record commits beside the synthesis step's building: when it fails, no synthesis step is written."""
    rag = DocumentRag(rt.store, FailingAnswers(rt.librarian), rt.embedder, rt.chunk_index, None,  # type: ignore[arg-type]
                      clock=lambda: T)
    events = collect(rag.ask(QUESTION, session_id=SID))
    assert [e.step if isinstance(e, Explain) else type(e).__name__ for e in events] == [
        "question", "exploration", "AnswerPiece", "ErrorMessage"]
    error = events[-1]
    assert isinstance(error, ErrorMessage) and error.type == "StoreError"
    assert error.message == "librarian: add failed: database or disk is full"
    assert stored(rt, docrag_synthesis_iri(SID)) == set()
    assert stored(rt, docrag_exploration_iri(SID)) and stored(rt, docrag_question_iri(SID))
    assert not rt.librarian.exists(docrag_answer_iri(SID).value)
