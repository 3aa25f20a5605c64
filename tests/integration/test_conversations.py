"""Conversations: three turns with pronouns (no LLM and a scripted LLM), turn links in the trace, the thread,
deletion, --no-trace, and one-line errors."""

from __future__ import annotations

import asyncio
import json

from provgraph.config import Settings
from provgraph.conversation.history import conversation_turns
from provgraph.conversation.turn import converse
from provgraph.events import Final
from provgraph.rdf.ids import conversation_iri
from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, TG
from provgraph.runtime import Runtime
from provgraph.session import collect_answer
from tests.cli_runner import run
from tests.fakes.scripted_llm import Call, ScriptedChatModel

TURNS = ("Who discovered polonium?", "Where was she born?", "Which laboratory did she direct?")
# the section or document each turn's first citation must come from
EXPECTED = ('section "The discovery of polonium"', 'section "Marie Curie and Pierre Curie"', "radium_institute.txt")


def _final(out: str) -> dict[str, object]:
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["message_type"] == "final"
    return events[-1]


def _one(store: object, s: Iri, p: Iri) -> object:
    found = [q.o for q in store.match(s, p, None, g=GRAPH_RETRIEVAL)]  # type: ignore[attr-defined]
    assert len(found) == 1, (s, p, found)
    return found[0]


def test_three_turns_without_an_llm(corpus_settings: Settings) -> None:
    finals = []
    for question in TURNS:
        r = run("graph-rag", "-C", "corpus", "-q", question, "--conversation", "c1", "--format", "json")
        assert r.code == 0, r.err
        finals.append(_final(r.out))
    assert [f["conversation"] for f in finals] == [{"id": "c1", "turn": n} for n in (1, 2, 3)]
    with Runtime(corpus_settings) as rt:
        turns = conversation_turns(rt.store, "c1")
        store = rt.store
        assert [t.asked for t in turns] == list(TURNS)
        assert [t.query for t in turns] == [TURNS[0], "Where was Marie Curie born?",
                                            "Which laboratory did Marie Curie direct?"]
        assert [t.method for t in turns] == ["none", "entities", "entities"]
        assert [t.entities for t in turns] == [(), ("Marie Curie",), ("Marie Curie",)]
        for before, after in zip(turns, turns[1:]):  # each turn's trace links to the one before
            assert _one(store, after.question, TG.previousTurn) == before.question
            assert _one(store, after.question, PROV.used) == before.answer_step
            assert _one(store, after.question, TG.conversation) == conversation_iri("c1")
        assert _one(store, turns[1].question, TG.originalQuery) == Literal(TURNS[1])
        assert not list(store.match(turns[0].question, TG.previousTurn, None, g=GRAPH_RETRIEVAL))
    show = run("conversations", "show", "c1", "-C", "corpus")
    assert show.code == 0
    blocks = show.out.split("\n\n")
    assert blocks[0] == "Conversation c1 (3 turn(s))"
    for n, (block, expected) in enumerate(zip(blocks[1:], EXPECTED), start=1):
        lines = block.splitlines()
        assert lines[0].startswith(f"Turn {n} · graph-rag · ") and lines[0].endswith(turns[n - 1].session_id)
        assert lines[1] == f"  Q: {TURNS[n - 1]}"
        marker = next(line for line in lines if line.startswith("     [1] "))
        assert expected in marker, (n, marker)
    assert "  Answered as: Where was Marie Curie born? [entities (from turn 1: Marie Curie)]" in blocks[2]
    assert "She was born Maria Skłodowska in Warsaw" in blocks[2]
    listed = run("conversations", "list", "-C", "corpus", "--format", "json")
    assert [(c["conversation"], c["turns"]) for c in json.loads(listed.out)] == [("c1", 3)]
    second = run("traces", "show", turns[1].session_id, "-C", "corpus").out
    assert "    Query: Where was Marie Curie born?\n" in second
    assert "    Asked: Where was she born? (rewritten: entities)\n" in second
    assert f"    Turn: 2 (after {turns[0].question.value})\n" in second
    shown = json.loads(run("traces", "show", turns[1].session_id, "-C", "corpus", "--format", "json").out)["question"]
    assert {k: shown[k] for k in ("query", "asked", "rewrite_method", "turn", "previous_turn")} == {
        "query": "Where was Marie Curie born?", "asked": TURNS[1], "rewrite_method": "entities", "turn": 2,
        "previous_turn": turns[0].question.value}
    first = json.loads(run("traces", "show", turns[0].session_id, "-C", "corpus", "--format", "json").out)["question"]
    assert (first["asked"], first["turn"], first["previous_turn"]) == (TURNS[0], 1, None)


def _scripted() -> ScriptedChatModel:
    rewrites = ["Where was Marie Curie born?", "Which laboratory did Marie Curie direct?"]

    def script(call: Call) -> str:
        if call.schema_name == "question_rewrite":
            return json.dumps({"question": rewrites.pop(0)})
        return "From the documents [1]."

    return ScriptedChatModel(script)


def test_three_turns_with_a_scripted_llm(corpus_settings: Settings) -> None:
    llm = _scripted()
    with Runtime(corpus_settings, llm=llm) as rt:
        engine = rt.document_rag()

        def ask(question: str) -> Final:
            events = converse(rt.sparql_store, llm, rt.settings, "talk", question, engine.ask)
            answer = asyncio.run(collect_answer(events))
            return Final(session_id=answer.session_id, answer=answer.text, sources=answer.sources,
                         conversation=answer.conversation, turn=answer.turn)

        finals = [ask(q) for q in TURNS]
        turns = conversation_turns(rt.store, "talk")
    assert [t.method for t in turns] == ["none", "llm", "llm"]
    assert [t.query for t in turns][1:] == ["Where was Marie Curie born?", "Which laboratory did Marie Curie direct?"]
    rewrite_calls = [c for c in llm.calls if c.schema_name == "question_rewrite"]
    assert len(rewrite_calls) == 2
    # the history the second rewrite saw: both earlier turns, as asked-and-answered pairs, then the question
    assert [m.content for m in rewrite_calls[1].messages[1:]] == [
        TURNS[0], "From the documents.", "Where was Marie Curie born?", "From the documents.", TURNS[2]]
    for final, expected in zip(finals, EXPECTED):
        cited = [s for s in final.sources if s.marker == "[1]"]
        assert cited and (expected.split('"')[1] if '"' in expected else expected) in (
            cited[0].section_title or cited[0].title), (final.turn, cited)
    assert [f.turn for f in finals] == [1, 2, 3]


def test_history_is_bounded(corpus_settings: Settings) -> None:
    llm = _scripted()
    settings = corpus_settings.model_copy(update={"conversation_turns": 1})
    with Runtime(settings, llm=llm) as rt:
        for question in TURNS:
            asyncio.run(collect_answer(converse(rt.sparql_store, llm, rt.settings, "b", question,
                                                rt.document_rag().ask)))
    last = [c for c in llm.calls if c.schema_name == "question_rewrite"][-1]
    assert [m.content for m in last.messages[1:]] == ["Where was Marie Curie born?", "From the documents.", TURNS[2]]


def test_delete_removes_the_turns_traces(corpus_settings: Settings) -> None:
    for question in TURNS[:2]:
        assert run("document-rag", "-C", "corpus", "-q", question, "--conversation", "gone").code == 0
    with Runtime(corpus_settings) as rt:
        questions = [t.question for t in conversation_turns(rt.store, "gone")]
    r = run("conversations", "delete", "gone", "-C", "corpus")
    assert r.code == 0 and r.out.startswith("deleted conversation gone: 2 trace(s) (")
    with Runtime(corpus_settings) as rt:
        assert all(not list(rt.store.match(q, None, None)) for q in questions)
        assert not list(rt.store.match(conversation_iri("gone"), None, None))
    assert run("traces", "show", questions[0].value, "-C", "corpus").code == 3


def test_no_trace_writes_no_turn(corpus_settings: Settings) -> None:
    assert run("graph-rag", "-C", "corpus", "-q", TURNS[0], "--conversation", "n").code == 0
    r = run("graph-rag", "-C", "corpus", "-q", TURNS[1], "--conversation", "n", "--no-trace", "--format", "json")
    events: list[dict[str, object]] = [json.loads(line) for line in r.out.splitlines()]
    assert events[0]["explain_triples"] and _final(r.out)["conversation"] == {"id": "n", "turn": 2}
    with Runtime(corpus_settings) as rt:
        assert [t.number for t in conversation_turns(rt.store, "n")] == [1]


def test_one_line_errors(corpus_settings: Settings) -> None:
    r = run("conversations", "show", "nope", "-C", "corpus")
    assert (r.code, r.out) == (3, "")
    assert r.err == ("error: no conversation 'nope' in collection default/corpus "
                     "(list them with: provgraph conversations list)\n")
    assert run("conversations", "delete", "nope", "-C", "corpus").code == 3
    bad = run("graph-rag", "-C", "corpus", "-q", "q", "--conversation", "bad id!")
    assert bad.code == 2 and bad.err.count("\n") == 1
    assert bad.err.startswith("error: bad conversation ID 'bad id!': use 1-128 letters")



def test_a_turn_whose_source_was_removed_says_so_in_the_thread(corpus_settings: Settings) -> None:
    r = run("graph-rag", "-C", "corpus", "-q", "Which laboratory did Marie Curie direct?", "--conversation", "gone")
    assert r.code == 0, r.err
    before = run("conversations", "show", "gone", "-C", "corpus").out
    assert "     [1] " in before and "radium_institute.txt" in before
    assert run("documents", "remove", "urn:doc:radium_institute.txt", "-C", "corpus").code == 0
    after = run("conversations", "show", "gone", "-C", "corpus")
    assert after.code == 0 and "radium_institute.txt" not in after.out
    assert "(source no longer stored)" in after.out
