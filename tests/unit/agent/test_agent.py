"""The ReAct agent: exact trace shape, sub-trace links, error steps, the iteration limit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from provgraph.agent import Agent, TextCompletionTool, Tool, ToolContext, ToolOutput, ToolSpec, knowledge_query
from provgraph.agent.mcp import McpServerConfig, McpTools
from provgraph.agent.react import NO_LLM_MESSAGE
from provgraph.errors import ConfigError, InputError, ModelUnavailable
from provgraph.events import Action, AnswerPiece, ErrorMessage, Event, Explain, Final, Observation, Thought
from provgraph.models.base import ChatModel
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDF, TG
from provgraph.runtime import Runtime
from tests.fakes.mcp_server import FACTS
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema, failing
from tests.unit.agent.conftest import R, T, T_LIT, canon, collect, kinds, step, steps_llm, stored
from tests.unit.agent.stub_graph_rag import SOURCE, StubGraphRag

SID = "s1"
QUESTION = "Who discovered polonium, and what is its atomic number?"
Q = ids.agent_question_iri(SID)
I1, I2, I3 = (ids.agent_analysis_iri(SID, n) for n in (1, 2, 3))
FINAL = ids.agent_conclusion_iri(SID)
TOKENS = lambda s: {f'<{s.value}> <tg:inToken> "10"^^int {R}', f'<{s.value}> <tg:outToken> "5"^^int {R}',  # noqa: E731
                    f'<{s.value}> <tg:llmModel> "scripted:test" {R}'}


def make(rt: Runtime, llm: ChatModel | None, tools: list[Tool], **kw: Any) -> Agent:
    return Agent(rt.store, rt.librarian, llm, tools, clock=lambda: T, collection="agent", **kw)


def analysis(iri: Iri, n: int, thought: str, previous: Iri | None, *, action: str | None = None,
             arguments: str | None = None, observation: str | None = None) -> set[str]:
    """The expected quads of an analysis step (tokens and extra links added by the caller)."""
    s = iri.value
    out = {
        f"<{s}> <rdf:type> <prov:Entity> {R}", f"<{s}> <rdf:type> <tg:Analysis> {R}",
        f'<{s}> <rdfs:label> "Analysis {n}" {R}', f'<{s}> <tg:stepNumber> "{n}"^^int {R}',
        f'<{s}> <tg:thought> {json.dumps(thought)} {R}', f"<{s}> <prov:wasGeneratedBy> <{Q.value}> {R}",
    }
    if previous is not None:
        out.add(f"<{s}> <prov:wasDerivedFrom> <{previous.value}> {R}")
    if action is not None:
        out |= {f'<{s}> <tg:action> "{action}" {R}', f"<{s}> <tg:arguments> {json.dumps(arguments)} {R}",
                f"<{s}> <tg:observation> {json.dumps(observation)} {R}"}
    return out


def test_three_iterations_knowledge_query_mcp_tool_then_answer(rt: Runtime, mcp_config: McpServerConfig,
                                                              tmp_path: Path) -> None:
    graph = StubGraphRag(rt.store, "Marie and Pierre Curie discovered polonium [1].")
    llm = steps_llm(
        step("I should ask the knowledge graph.", "knowledge-query", {"question": "Who discovered polonium?"}),
        step("Now the atomic number.", "element-facts", {"element": "polonium"}),
        step("I know both.", final_answer="Marie and Pierre Curie; atomic number 84."),
    )

    async def run() -> list[Event]:
        with open(tmp_path / "mcp.log", "w") as errlog:
            async with McpTools([mcp_config], taken=["knowledge-query"], errlog=errlog) as mcp:
                agent = make(rt, llm, [knowledge_query(graph), *mcp.tools])
                return [ev async for ev in agent.ask(QUESTION, session_id=SID)]

    events = asyncio.run(run())
    assert kinds(events) == [
        "question:s1",
        "Thought", "Action", "question:sub1", "exploration:sub1", "focus:sub1", "synthesis:sub1",
        "Observation", "analysis:s1/i1",
        "Thought", "Action", "Observation", "analysis:s1/i2",
        "Thought", "analysis:s1/i3",
        "AnswerPiece", "conclusion:s1/final", "Final",
    ]
    assert events[1] == Thought(text="I should ask the knowledge graph.", step=1)
    assert events[2] == Action(name="knowledge-query", arguments={"question": "Who discovered polonium?"}, step=1)
    assert events[7] == Observation(text="Marie and Pierre Curie discovered polonium [1].", step=1)
    assert events[11] == Observation(text=FACTS["polonium"], step=2)
    assert events[15] == AnswerPiece(text="Marie and Pierre Curie; atomic number 84.", end_of_stream=True)

    sub_q, sub_a = ids.question_iri("sub1"), ids.synthesis_iri("sub1")
    assert graph.asked == [("Who discovered polonium?", Q)]
    assert f"<{sub_q.value}> <prov:wasInformedBy> <{Q.value}> {R}" in stored(rt.store, sub_q)

    assert stored(rt.store, Q) == {
        f"<{Q.value}> <rdf:type> <prov:Activity> {R}", f"<{Q.value}> <rdf:type> <tg:Question> {R}",
        f"<{Q.value}> <rdf:type> <tg:AgentQuestion> {R}", f'<{Q.value}> <rdfs:label> "Agent Question" {R}',
        f"<{Q.value}> <tg:query> {json.dumps(QUESTION)} {R}", f"<{Q.value}> <prov:startedAtTime> {T_LIT} {R}",
    }
    assert stored(rt.store, I1) == analysis(
        I1, 1, "I should ask the knowledge graph.", None, action="knowledge-query",
        arguments='{"question": "Who discovered polonium?"}',
        observation="Marie and Pierre Curie discovered polonium [1].",
    ) | {f"<{I1.value}> <prov:wasDerivedFrom> <{sub_a.value}> {R}"} | TOKENS(I1)
    assert stored(rt.store, I2) == analysis(
        I2, 2, "Now the atomic number.", I1, action="element-facts", arguments='{"element": "polonium"}',
        observation=FACTS["polonium"]) | TOKENS(I2)
    assert stored(rt.store, I3) == analysis(I3, 3, "I know both.", I2) | TOKENS(I3)
    answer_doc = ids.agent_answer_iri(SID)
    assert stored(rt.store, FINAL) == {
        f"<{FINAL.value}> <rdf:type> <prov:Entity> {R}", f"<{FINAL.value}> <rdf:type> <tg:Conclusion> {R}",
        f"<{FINAL.value}> <rdf:type> <tg:Answer> {R}", f'<{FINAL.value}> <rdfs:label> "Conclusion" {R}',
        f'<{FINAL.value}> <tg:answer> "Marie and Pierre Curie; atomic number 84." {R}',
        f"<{FINAL.value}> <prov:wasGeneratedBy> <{Q.value}> {R}",
        f"<{FINAL.value}> <prov:wasDerivedFrom> <{I3.value}> {R}",
        f'<{FINAL.value}> <tg:terminationReason> "final-answer" {R}',
        f"<{FINAL.value}> <tg:document> <{answer_doc.value}> {R}",
    }
    assert rt.librarian.text(answer_doc.value) == "Marie and Pierre Curie; atomic number 84."

    final = events[-1]
    assert isinstance(final, Final) and final.end_of_dialog and final.session_id == SID
    assert final.answer == "Marie and Pierre Curie; atomic number 84." and final.warnings == ()
    assert [(s.chunk, s.marker) for s in final.sources] == [(SOURCE.chunk, None)]
    assert (final.usage.llm_calls, final.usage.input_tokens, final.usage.output_tokens) == (4, 37, 18)
    assert set(final.usage.models) == {"scripted:test", "stub:graph"}

    # every quad the run wrote (agent and sub-trace) is in the retrieval graph, and was streamed
    streamed = {q for e in events if isinstance(e, Explain) for q in e.triples}
    assert canon(streamed) == canon(rt.store.match()) and all(q.g == GRAPH_RETRIEVAL for q in streamed)

    # the LLM saw the tools and each observation
    system = llm.calls[0].messages[0].content
    assert "- knowledge-query:" in system and "- element-facts: Short facts" in system
    assert llm.calls[2].messages[-1].content == f"Observation: {FACTS['polonium']}"


class Exploding:
    """A tool that raises."""

    spec = ToolSpec("explode", "Always fails.", {"type": "object"})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        raise InputError("the fuse is wet")
        yield  # pragma: no cover


def error_step(store: Any, iri: Iri) -> bool:
    return bool(list(store.match(iri, RDF.type, TG.Error, g=GRAPH_RETRIEVAL)))


def test_a_tool_error_is_an_error_analysis_and_the_loop_goes_on(rt: Runtime) -> None:
    llm = steps_llm(step("Try it.", "explode", {}), step("It failed; answer anyway.", final_answer="unknown"))
    events = collect(make(rt, llm, [Exploding()]).ask("q", session_id=SID))
    assert kinds(events) == ["question:s1", "Thought", "Action", "Observation", "analysis:s1/i1",
                             "Thought", "analysis:s1/i2", "AnswerPiece", "conclusion:s1/final", "Final"]
    assert events[3] == Observation(text="InputError: the fuse is wet", step=1, error=True)
    assert stored(rt.store, I1) == analysis(I1, 1, "Try it.", None, action="explode", arguments="{}",
                                            observation="InputError: the fuse is wet") | TOKENS(I1) | {
        f"<{I1.value}> <rdf:type> <tg:Error> {R}"}
    assert not error_step(rt.store, I2)
    assert llm.calls[1].messages[-1].content == "Observation (error): InputError: the fuse is wet"
    assert isinstance(events[-1], Final) and events[-1].answer == "unknown"


def test_failed_sub_trace_and_mcp_tool_error_are_error_steps(rt: Runtime, mcp_config: McpServerConfig,
                                                             tmp_path: Path) -> None:
    graph = StubGraphRag(rt.store, "never", fail=True)
    llm = steps_llm(step("Ask the graph.", "knowledge-query", {"question": "x"}),
                    step("Ask the tool.", "element-facts", {"element": "iron"}),
                    step("Neither worked.", final_answer="I don't know."))

    async def run() -> list[Event]:
        with open(tmp_path / "mcp.log", "w") as errlog:
            async with McpTools([mcp_config], errlog=errlog) as mcp:
                return [ev async for ev in make(rt, llm, [knowledge_query(graph), *mcp.tools]).ask("q", session_id=SID)]

    events = asyncio.run(run())
    observations = [e for e in events if isinstance(e, Observation)]
    assert observations == [
        Observation(text="StoreError: stub: the store went away", step=1, error=True),
        Observation(text="Error executing tool element-facts: no facts about 'iron'", step=2, error=True),
    ]
    assert error_step(rt.store, I1) and error_step(rt.store, I2) and not error_step(rt.store, I3)
    # a failed sub-trace has no synthesis to derive from: only the previous-step link (none for i1)
    assert not list(rt.store.match(I1, PROV.wasDerivedFrom, None, g=GRAPH_RETRIEVAL))
    assert isinstance(events[-1], Final) and events[-1].answer == "I don't know."


def test_unparsable_llm_steps_are_error_analyses(rt: Runtime) -> None:
    both = step("Confused.", "text-completion", {"prompt": "hi"}, final_answer="both")
    llm = steps_llm("this is not JSON", both, step("Better now.", final_answer="42"))
    events = collect(make(rt, llm, [TextCompletionTool(llm)]).ask("q", session_id=SID))
    assert kinds(events) == ["question:s1", "Observation", "analysis:s1/i1", "Observation", "analysis:s1/i2",
                             "Thought", "analysis:s1/i3", "AnswerPiece", "conclusion:s1/final", "Final"]
    first, second = (e for e in events if isinstance(e, Observation))
    assert first.error
    assert first.text.startswith("unparsable LLM step: scripted:test (agent_step): model output is not JSON")
    assert second.text == "unparsable LLM step: the step gives both an action and a final_answer; give exactly one"
    i1 = stored(rt.store, I1)
    assert f"<{I1.value}> <rdf:type> <tg:Error> {R}" in i1 and f'<{I1.value}> <tg:thought> "this is not JSON" {R}' in i1
    assert not any("<tg:action>" in line or "<tg:inToken>" in line for line in i1)
    assert TOKENS(I2) <= stored(rt.store, I2)  # the call answered, only the step was wrong
    assert f"<{I2.value}> <prov:wasDerivedFrom> <{I1.value}> {R}" in stored(rt.store, I2)
    assert llm.calls[1].messages[-2].content == "this is not JSON"
    assert llm.calls[1].messages[-1].content.startswith("Observation (error): scripted:test (agent_step)")
    assert isinstance(events[-1], Final) and events[-1].answer == "42"


def test_unknown_tool_and_bad_arguments_are_error_steps(rt: Runtime) -> None:
    llm = steps_llm(step("a", "no-such-tool", {}), step("b", "text-completion", {"text": "hi"}),
                    step("c", final_answer="done"))
    events = collect(make(rt, llm, [TextCompletionTool(llm)]).ask("q", session_id=SID))
    assert [e.text for e in events if isinstance(e, Observation)] == [
        "InputError: unknown tool 'no-such-tool'; the tools are: text-completion",
        "InputError: invalid arguments for text-completion: $: missing required property 'prompt'; "
        "$: unexpected property 'text'",
    ]


def test_text_completion_tokens_are_recorded_on_the_step(rt: Runtime) -> None:
    script = by_schema({"agent_step": [step("Ask.", "text-completion", {"prompt": "2+2?"}),
                                       step("Done.", final_answer="4")], "complete": "4"})
    llm = ScriptedChatModel(script)
    events = collect(make(rt, llm, [TextCompletionTool(llm)]).ask("q", session_id=SID))
    assert Observation(text="4", step=1) in events
    assert {f'<{I1.value}> <tg:inToken> "20"^^int {R}', f'<{I1.value}> <tg:outToken> "10"^^int {R}'} <= stored(
        rt.store, I1)
    assert isinstance(events[-1], Final) and events[-1].usage.llm_calls == 3


def test_max_iterations_still_writes_a_conclusion(rt: Runtime) -> None:
    llm = ScriptedChatModel(by_schema({"agent_step": [step(f"t{n}", "text-completion", {"prompt": "p"})
                                                      for n in range(3)], "complete": "r"}))
    events = collect(make(rt, llm, [TextCompletionTool(llm)], max_iterations=2).ask("q", session_id=SID))
    assert [k for k in kinds(events) if k.startswith(("analysis", "conclusion"))] == [
        "analysis:s1/i1", "analysis:s1/i2", "conclusion:s1/final"]
    final = events[-1]
    assert isinstance(final, Final) and final.end_of_dialog
    assert final.answer == "No final answer after 2 iteration(s)."
    assert final.warnings == ("stopped at the iteration limit (2) without a final answer",)
    conclusion = stored(rt.store, FINAL)
    assert f'<{FINAL.value}> <tg:terminationReason> "max-iterations" {R}' in conclusion
    assert f"<{FINAL.value}> <prov:wasDerivedFrom> <{I2.value}> {R}" in conclusion


def test_llm_failure_ends_with_one_error_message(rt: Runtime) -> None:
    llm = ScriptedChatModel(failing(ModelUnavailable("scripted: endpoint unreachable")))
    events = collect(make(rt, llm, []).ask("q", session_id=SID))
    assert kinds(events) == ["question:s1", "ErrorMessage"]
    assert events[-1] == ErrorMessage(type="ModelUnavailable", message="scripted: endpoint unreachable",
                                      session_id=SID)
    assert stored(rt.store, Q)


def test_no_llm_and_duplicate_tools_are_config_errors(rt: Runtime) -> None:
    with pytest.raises(ConfigError) as info:
        make(rt, None, [])
    assert str(info.value) == NO_LLM_MESSAGE and "\n" not in NO_LLM_MESSAGE
    assert "PROVGRAPH_LLM_BASE_URL" in NO_LLM_MESSAGE and "PROVGRAPH_LLM_MODEL" in NO_LLM_MESSAGE
    llm = steps_llm()
    with pytest.raises(ConfigError, match="unique"):
        make(rt, llm, [TextCompletionTool(llm), TextCompletionTool(llm)])


def test_an_empty_question_is_one_error_message(rt: Runtime) -> None:
    llm = steps_llm()
    assert collect(make(rt, llm, []).ask(" ", session_id=SID)) == [
        ErrorMessage(type="InputError", message="the question is empty", session_id=SID)]
    assert llm.calls == []


def test_past_the_deadline_the_agent_answers_with_the_last_tool_result(rt: Runtime) -> None:
    now = [0.0]

    steps = by_schema({"agent_step": [step("Ask.", "text-completion", {"prompt": "2+2?"}),
                                      step("Done.", final_answer="never asked")]})

    def script(call: Any) -> str:
        if call.kind == "complete":  # the tool's call takes the question past its deadline
            now[0] += 2.0
            return "4"
        return str(steps(call))

    llm = ScriptedChatModel(script)
    agent = make(rt, llm, [TextCompletionTool(llm)], deadline=1.0, timer=lambda: now[0])
    events = collect(agent.ask("q", session_id=SID))
    assert [k for k in kinds(events) if k.startswith(("analysis", "conclusion"))] == [
        "analysis:s1/i1", "conclusion:s1/final"]
    final = events[-1]
    assert isinstance(final, Final) and final.end_of_dialog and final.answer == "4"
    assert final.warnings == ("stopped at the deadline (1 s); the answer is the last tool result",)
    assert [c.schema_name for c in llm.calls] == ["agent_step", None]
    conclusion = stored(rt.store, FINAL)
    assert f'<{FINAL.value}> <tg:terminationReason> "deadline" {R}' in conclusion
    assert f"<{FINAL.value}> <prov:wasDerivedFrom> <{I1.value}> {R}" in conclusion


def test_a_deadline_with_no_tool_result_says_there_is_no_answer(rt: Runtime) -> None:
    class Stalls:
        name = "stalls"

        async def complete_json(self, messages: Any, **kw: Any) -> Any:
            await asyncio.Event().wait()

    events = collect(make(rt, Stalls(), [], deadline=0.5).ask("q", session_id=SID))  # type: ignore[arg-type]
    assert kinds(events) == ["question:s1", "AnswerPiece", "conclusion:s1/final", "Final"]
    final = events[-1]
    assert isinstance(final, Final) and final.answer == "No final answer within 0.5 s."
    assert final.warnings == ("stopped at the deadline (0.5 s) without a final answer",)
    assert f'<{FINAL.value}> <tg:terminationReason> "deadline" {R}' in stored(rt.store, FINAL)
