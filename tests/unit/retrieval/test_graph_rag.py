"""The GraphRAG engine: event order, the stored trace, sources, and every way a model can misbehave."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence

from provgraph.errors import ModelUnavailable
from provgraph.events import AnswerPiece, ErrorMessage, Event, Explain, Final
from provgraph.extract.nlp import split_sentences
from provgraph.models.base import ChatModel
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG
from provgraph.retrieval.edge_select import edge_id
from provgraph.retrieval.graph_rag import GraphRag, GraphRagParams
from provgraph.retrieval.synthesis import EMPTY_ANSWER, NOTHING_RELEVANT
from tests.fakes.scripted_llm import Call, ScriptedChatModel, by_schema, failing
from tests.unit.retrieval.graph_world import WHEN, World, add_noise, world  # noqa: F401

SID = "s1"
Q = "Who discovered polonium?"


def ask(w: World, llm: ChatModel | None, question: str = Q, *, sid: str = SID, **params: object) -> list[Event]:
    rag = GraphRag(w.store, w.librarian, w.embedder, w.index, llm, GraphRagParams(**params),  # type: ignore[arg-type]
                   clock=lambda: WHEN)

    async def collect() -> list[Event]:
        return [ev async for ev in rag.ask(question, session_id=sid)]

    return asyncio.run(collect())


def norm(q: Quad) -> tuple[object, ...]:
    """A quad with literal values compared as values (the store canonicalises xsd:dateTime)."""
    return (q.s, q.p, q.o.to_python() if isinstance(q.o, Literal) else q.o, q.g)


def kinds(events: Sequence[Event]) -> list[str]:
    out = []
    for ev in events:
        name = ev.step if isinstance(ev, Explain) else type(ev).__name__
        if not out or out[-1] != name or name != "AnswerPiece":
            out.append(name)
    return out


def step(events: Sequence[Event], name: str) -> Explain:
    return next(ev for ev in events if isinstance(ev, Explain) and ev.step == name)


def final(events: Sequence[Event]) -> Final:
    assert isinstance(events[-1], Final)
    return events[-1]


def jsonl(*edges: tuple[str, str, str], reasoning: str = "it answers the question") -> str:
    return "\n".join(json.dumps({"id": edge_id(*e), "reasoning": reasoning}) for e in edges)


DISCOVERED = ("Marie Curie", "discovered", "polonium")
YEAR = ("polonium", "discovered in", "July 1898")


def scripted(selection: str, answer: str = "Marie Curie discovered polonium [1].", **more: str) -> ScriptedChatModel:
    return ScriptedChatModel(by_schema({"complete": selection, "stream": answer, **more}))


def test_events_come_in_order_and_each_step_is_stored_as_streamed(world: World) -> None:
    events = ask(world, scripted(jsonl(DISCOVERED, YEAR)))
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    pieces = [ev for ev in events if isinstance(ev, AnswerPiece)]
    assert "".join(p.text for p in pieces) == "Marie Curie discovered polonium [1]."
    assert [p.end_of_stream for p in pieces] == [False] * (len(pieces) - 1) + [True]
    written = {q for ev in events if isinstance(ev, Explain) for q in ev.triples}
    assert {norm(q) for q in world.store.match(g=GRAPH_RETRIEVAL)} == {norm(q) for q in written}
    assert all(q.g == GRAPH_RETRIEVAL for q in written)


def test_grounding_is_a_step_and_the_exploration_derives_from_it(world: World) -> None:
    llm = scripted(jsonl(DISCOVERED), grounding='{"concepts": ["polonium", " Marie  Curie "]}')
    events = ask(world, llm, grounding=True)
    assert kinds(events) == ["question", "grounding", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    g, x = ids.grounding_iri(SID), ids.exploration_iri(SID)
    assert {q.o for q in step(events, "grounding").triples if q.p == TG.concept} == {
        Literal("polonium"), Literal("Marie Curie")}
    assert Quad(x, PROV.wasDerivedFrom, g, GRAPH_RETRIEVAL) in step(events, "exploration").triples
    assert len(llm.calls) == 3 and [c.kind for c in llm.calls] == ["json", "complete", "stream"]
    usage = final(events).usage
    assert (usage.llm_calls, usage.input_tokens, usage.output_tokens, usage.models) == (3, 30, 15, ("scripted:test",))


def test_prov_chain_links_every_step_to_the_question_and_its_predecessor(world: World) -> None:
    events = ask(world, scripted(jsonl(DISCOVERED)))
    q = ids.question_iri(SID)
    chain = [(ids.exploration_iri(SID), None), (ids.focus_iri(SID), ids.exploration_iri(SID)),
             (ids.synthesis_iri(SID), ids.focus_iri(SID))]
    stored = set(world.store.match(g=GRAPH_RETRIEVAL))
    for node, before in chain:
        assert Quad(node, PROV.wasGeneratedBy, q, GRAPH_RETRIEVAL) in stored
        derived = {x.o for x in world.store.match(node, PROV.wasDerivedFrom, None, g=GRAPH_RETRIEVAL)}
        assert derived == ({before} if before else set())
    assert Quad(q, TG.query, Literal(Q), GRAPH_RETRIEVAL) in stored
    synthesis = step(events, "synthesis").triples
    assert Quad(ids.synthesis_iri(SID), TG.llmModel, Literal("scripted:test"), GRAPH_RETRIEVAL) in synthesis
    assert Quad(ids.focus_iri(SID), TG.inToken, Literal.integer(10), GRAPH_RETRIEVAL) in step(events, "focus").triples


def test_selected_edges_keep_their_original_terms(world: World) -> None:
    events = ask(world, scripted(jsonl(YEAR, DISCOVERED)))
    focus = step(events, "focus").triples
    edges = {q.s: q.o for q in focus if q.p == TG.edge}
    assert edges == {ids.edge_selection_iri(SID, 0): world.facts["year"],
                     ids.edge_selection_iri(SID, 1): world.facts["discovered"]}
    year = edges[ids.edge_selection_iri(SID, 0)]
    assert isinstance(year, TripleTerm) and year.o == Literal("July 1898")
    assert isinstance(year.s, Iri) and year.s.value.startswith("urn:provgraph:entity:")
    assert Quad(ids.edge_selection_iri(SID, 0), TG.reasoning, Literal("it answers the question"),
                GRAPH_RETRIEVAL) in focus


def test_sources_list_every_cited_document_with_offsets_that_slice_back(world: World) -> None:
    events = ask(world, scripted(jsonl(DISCOVERED), answer="Marie Curie discovered polonium [1][2]."))
    sources = final(events).sources
    assert {s.document for s in sources} == {world.docs["curie"].value, world.docs["radium"].value}
    assert {s.marker for s in sources} == {"[1]", "[2]"}
    assert all(s.edge == world.facts["discovered"] for s in sources)
    for s in sources:
        chunk_text = world.librarian.text(s.chunk)
        parent = world.librarian.get(s.chunk).parent_id
        assert world.librarian.text(parent)[s.offset : s.offset + s.length] == chunk_text  # type: ignore[arg-type]
        assert "marie curie" in chunk_text.lower() and "polonium" in chunk_text.lower()


def test_sources_not_cited_by_the_answer_are_not_listed(world: World) -> None:
    sources = final(ask(world, scripted(jsonl(DISCOVERED)))).sources  # the answer cites [1] only
    assert [s.marker for s in sources] == ["[1]"]


def test_synthesis_sees_only_the_selected_edges_with_their_markers(world: World) -> None:
    llm = scripted(jsonl(DISCOVERED))
    ask(world, llm)
    stream_call = next(c for c in llm.calls if c.kind == "stream")
    facts = stream_call.messages[1].content
    assert facts == f"Facts:\n- Marie Curie | discovered | polonium [1][2]\n\nQuestion: {Q}"


def test_a_store_full_of_old_traces_explores_the_same(world: World) -> None:
    def exploration(events: Sequence[Event]) -> set[object]:
        return {(q.p, q.o) for q in step(events, "exploration").triples if q.p in (TG.edgeCount, TG.entity)}

    first = exploration(ask(world, None, sid="a"))
    add_noise(world.store, world.e)
    for i in range(3):
        ask(world, scripted(jsonl(DISCOVERED)), sid=f"b{i}")
    assert exploration(ask(world, None, sid="c")) == first
    assert (TG.edgeCount, Literal.integer(7)) in first


def test_garbage_selection_falls_back_to_similarity_and_the_trace_says_why(world: World) -> None:
    llm = scripted("Sure! The relevant edges are the ones about Curie.\nHope that helps")
    events = ask(world, llm)
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    why = "the LLM's edge selection was unusable (2 malformed line(s), 0 unknown id(s))"
    assert final(events).warnings == ("2 malformed selection line(s) dropped",
                                      f"edge selection fell back to similarity: {why}")
    assert [c.kind for c in llm.calls] == ["complete", "stream"]
    focus = step(events, "focus").triples
    reasons = [q.o.value for q in focus if q.p == TG.reasoning and isinstance(q.o, Literal)]
    assert reasons and all(r.startswith("Selected by embedding similarity ") and r.endswith(f"(fallback: {why})")
                           for r in reasons)
    assert final(events).answer == "Marie Curie discovered polonium [1]."


def test_an_empty_synthesis_gives_a_complete_trace_with_a_clear_message(world: World) -> None:
    events = ask(world, scripted(jsonl(DISCOVERED), answer="   "))
    assert kinds(events)[-2:] == ["synthesis", "Final"]
    assert final(events).answer == EMPTY_ANSWER
    assert final(events).warnings == ("synthesis: the model returned an empty answer",)
    assert Quad(ids.synthesis_iri(SID), TG.content, Literal(EMPTY_ANSWER), GRAPH_RETRIEVAL) in step(
        events, "synthesis").triples
    assert world.librarian.text(ids.graph_rag_answer_iri(SID).value) == EMPTY_ANSWER


def test_an_unreachable_model_falls_back_to_the_no_llm_steps_and_says_so(world: World) -> None:
    events = ask(world, ScriptedChatModel(failing()))
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    assert final(events).warnings == (
        "edge selection fell back to similarity: the LLM's edge selection failed: scripted: endpoint unreachable",
        "synthesis fell back to an extractive answer: the LLM's answer failed: scripted: endpoint unreachable",
    )
    synthesis = step(events, "synthesis").triples
    assert Quad(ids.synthesis_iri(SID), TG.reasoning, Literal(
        "Extractive answer (fallback: the LLM's answer failed: scripted: endpoint unreachable)"),
        GRAPH_RETRIEVAL) in synthesis
    assert "[1]" in final(events).answer and final(events).sources


def test_a_failure_mid_stream_before_any_piece_falls_back_to_an_extractive_answer(world: World) -> None:
    def script(call: Call) -> str | Exception:
        return ModelUnavailable("gone") if call.kind == "stream" else jsonl(DISCOVERED)

    events = ask(world, ScriptedChatModel(script))
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    assert final(events).warnings == ("synthesis fell back to an extractive answer: the LLM's answer failed: gone",)
    assert "polonium" in final(events).answer


def test_a_spent_deadline_skips_the_llm_steps_and_the_trace_says_so(world: World) -> None:
    llm = scripted(jsonl(DISCOVERED))
    events = ask(world, llm, question_deadline=1e-9)
    assert llm.calls == []
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    assert final(events).warnings == (
        "edge selection fell back to similarity: the LLM's edge selection ran past the question deadline",
        "synthesis fell back to an extractive answer: the question deadline passed before synthesis",
    )
    reasons = [q.o.value for q in step(events, "focus").triples if q.p == TG.reasoning]
    assert reasons and all("ran past the question deadline" in r for r in reasons)


def test_a_slow_selection_is_cut_at_the_deadline(world: World) -> None:
    class Slow(ScriptedChatModel):
        async def complete(self, messages, **kwargs):  # type: ignore[no-untyped-def,override]
            await asyncio.sleep(30)
            raise AssertionError("not reached")

    events = ask(world, Slow(by_schema({"stream": "x"})), question_deadline=0.3)
    assert final(events).warnings[0] == (
        "edge selection fell back to similarity: the LLM's edge selection ran past the question deadline")


def test_no_llm_mode_selects_by_similarity_and_answers_with_cited_sentences(world: World) -> None:
    events = ask(world, None)
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    focus = step(events, "focus").triples
    reasons = [q.o.value for q in focus if q.p == TG.reasoning and isinstance(q.o, Literal)]
    assert reasons and all(r.startswith("Selected by embedding similarity ") for r in reasons)
    assert all(r.endswith("(no LLM configured)") for r in reasons)
    assert not [q for ev in events if isinstance(ev, Explain) for q in ev.triples if q.p == TG.llmModel]
    done = final(events)
    markers = {s.marker for s in done.sources}
    sentences = split_sentences(done.answer)
    assert sentences
    for sentence in sentences:
        found = re.findall(r"\[\d+\]", sentence.text)
        assert found and set(found) <= markers
    assert "Marie Curie discovered polonium in July 1898 [1]." in done.answer
    assert done.usage.llm_calls == 0 and done.warnings == ()


def test_a_relabelled_entity_is_shown_by_its_new_label_at_once(world: World) -> None:
    llm = scripted(jsonl(DISCOVERED))
    rag = GraphRag(world.store, world.librarian, world.embedder, world.index, llm, clock=lambda: WHEN)

    def prompt(sid: str) -> str:
        async def collect() -> list[Event]:
            return [ev async for ev in rag.ask(Q, session_id=sid)]

        asyncio.run(collect())
        return [c for c in llm.calls if c.kind == "complete"][-1].messages[-1].content

    assert "Marie Curie | discovered | polonium" in prompt("a")
    curie = next(q.s for q in world.store.match(p=RDFS.label, o=Literal("Marie Curie"), g=None))
    world.store.apply(remove=[Quad(curie, RDFS.label, Literal("Marie Curie"))],
                      add=[Quad(curie, RDFS.label, Literal("Maria Sklodowska"))])
    shown = prompt("b")
    assert "Maria Sklodowska | discovered | polonium" in shown and "Marie Curie |" not in shown


def test_grounding_without_an_llm_is_skipped_with_a_warning(world: World) -> None:
    events = ask(world, None, grounding=True)
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    assert final(events).warnings == ("grounding skipped: no LLM configured",)


def test_nothing_relevant_still_writes_a_complete_trace(world: World) -> None:
    events = ask(world, None, "What is the airspeed of an unladen swallow?", min_similarity=0.95)
    assert kinds(events) == ["question", "exploration", "focus", "AnswerPiece", "synthesis", "Final"]
    assert final(events).answer == NOTHING_RELEVANT


def test_an_empty_question_is_an_error_and_writes_nothing(world: World) -> None:
    events = ask(world, None, "   ")
    assert events == [ErrorMessage(type="InputError", message="the question is empty", session_id=SID)]
    assert world.store.count(g=GRAPH_RETRIEVAL) == 0


def test_informed_by_links_a_sub_trace_and_the_answer_is_in_the_librarian(world: World) -> None:
    rag = GraphRag(world.store, world.librarian, world.embedder, world.index, None, clock=lambda: WHEN)
    agent_q = ids.agent_question_iri("agent1")

    async def run() -> list[Event]:
        return [ev async for ev in rag.ask(Q, session_id=SID, informed_by=agent_q)]

    events = asyncio.run(run())
    assert Quad(ids.question_iri(SID), PROV.wasInformedBy, agent_q, GRAPH_RETRIEVAL) in step(events, "question").triples
    record = world.librarian.get(ids.graph_rag_answer_iri(SID).value)
    assert (record.kind, record.title) == ("answer", Q)
    assert world.librarian.text(record.id) == final(events).answer


def test_params_default_to_settings_and_reject_nonsense() -> None:
    from provgraph.config import load_settings

    p = GraphRagParams()
    assert (p.entity_limit, p.triple_limit, p.max_subgraph_size, p.max_path_length, p.edge_score_limit,
            p.edge_limit) == (50, 30, 150, 2, 30, 25)
    s = load_settings(edge_limit=7)
    assert GraphRagParams.from_settings(s, entity_limit=3, grounding=None).edge_limit == 7
    try:
        GraphRagParams(edge_limit=0)
    except Exception as exc:
        assert str(exc) == "GraphRAG edge-limit must be a positive integer, got 0"
    else:
        raise AssertionError("edge_limit=0 accepted")


def test_each_step_reaches_the_consumer_before_the_next_model_call(world: World) -> None:
    """Streamed as it happens: checked by order, not by time. At each LLM call the consumer must
    already hold every step that precedes it, and each step was in the store when it arrived."""
    received: list[str] = []
    seen_at_call: dict[str, list[str]] = {}
    answers = {"complete": jsonl(DISCOVERED), "stream": "Marie Curie discovered polonium [1]."}

    def script(call: Call) -> str:
        seen_at_call[call.kind] = list(received)
        return answers[call.kind]

    rag = GraphRag(world.store, world.librarian, world.embedder, world.index, ScriptedChatModel(script),
                   GraphRagParams(), clock=lambda: WHEN)

    async def consume() -> None:
        async for ev in rag.ask(Q, session_id=SID):
            if isinstance(ev, Explain):
                assert set(ev.triples) <= set(world.store.match(g=GRAPH_RETRIEVAL)), ev.step  # stored first
                received.append(ev.step)
            else:
                received.append(type(ev).__name__)

    asyncio.run(consume())
    assert seen_at_call == {"complete": ["question", "exploration"],
                            "stream": ["question", "exploration", "focus"]}


def test_the_synthesis_stores_each_marker_of_an_llm_answer_with_its_span_chunk_and_edges(world: World) -> None:
    answer = "Marie Curie discovered polonium [2]. It was in July 1898 [1][3]. See also [9]."
    events = ask(world, scripted(jsonl(DISCOVERED, YEAR), answer=answer))
    chunk_of = {s.marker: s.chunk for s in final(events).sources}
    edges_of: dict[str, set[Iri]] = {}
    for s in final(events).sources:
        index = [world.facts["discovered"], world.facts["year"]].index(s.edge)
        edges_of.setdefault(s.marker, set()).add(ids.edge_selection_iri(SID, index))
    synthesis = ids.synthesis_iri(SID)
    written = step(events, "synthesis").triples
    citations = sorted((q.o for q in written if q.s == synthesis and q.p == TG.citation), key=str)
    assert [c.value for c in citations] == [f"{synthesis.value}/citation/{n}" for n in (1, 2, 3, 4)]

    def about(c: Iri, p: Iri) -> list:
        return sorted((q.o for q in written if q.s == c and q.p == p), key=str)

    spans = [("[2]", "Marie Curie discovered polonium"), ("[1]", "It was in July 1898"),
             ("[3]", "It was in July 1898"), ("[9]", "See also")]
    for c, (marker, span) in zip(citations, spans):
        assert about(c, TG.marker) == [Literal(marker)]
        assert about(c, TG.charOffset) == [Literal.integer(answer.index(span))]
        assert about(c, TG.charLength) == [Literal.integer(len(span))]
        assert about(c, TG.selectedChunk) == ([Iri(chunk_of[marker])] if marker in chunk_of else [])
        assert set(about(c, TG.selectedEdge)) == edges_of.get(marker, set())
