"""The ReAct agent (SPEC §5.3): think → act → observe until a final answer, explained step by step.

Trace in ``urn:graph:retrieval``: the question; one ``tg:Analysis`` per iteration (thought,
action, arguments as JSON text, observation, ``tg:stepNumber``), each derived from the one
before; a ``tg:Conclusion`` with ``tg:terminationReason`` ``final-answer``, ``max-iterations`` or
``deadline`` (the question ran past ``deadline`` seconds: the answer is then the last tool result, if any).
A failed tool or an unparsable LLM step is an Analysis typed also ``tg:Error``, and the loop goes
on. A retrieval tool writes its own trace, informed by the agent question; the analysis that ran
it derives from that trace's synthesis. Streamed: Explain (the agent's and the sub-traces'),
Thought, Action, Observation, AnswerPiece, and ``Final(end_of_dialog=True)``; any other failure
ends the stream with one ``ErrorMessage`` (the steps written stay).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from provgraph.agent.step import (
    STEP_SCHEMA_NAME,
    AgentStep,
    observation_message,
    parse_step,
    step_schema,
    system_prompt,
)
from provgraph.agent.tools import Tool, ToolContext, ToolOutput
from provgraph.errors import ConfigError, InputError, MalformedOutput
from provgraph.events import Action, AnswerPiece, ErrorMessage, Event, Explain, Final, Observation, Source, Thought
from provgraph.librarian.base import Librarian, NewRecord
from provgraph.models.base import ChatModel, Message, assistant, system, user
from provgraph.models.schema import schema_errors
from provgraph.provenance.agent import agent_question_quads, analysis_quads, conclusion_quads
from provgraph.provenance.conversation import allowed_tool_quads
from provgraph.provenance.common import LlmCall
from provgraph.rdf.ids import (
    agent_analysis_iri,
    agent_answer_iri,
    agent_conclusion_iri,
    agent_question_iri,
    new_session_id,
)
from provgraph.rdf.terms import Iri
from provgraph.retrieval.deadline import Deadline
from provgraph.retrieval.trace import TraceWriter, UsageTally
from provgraph.store.base import QuadStore

__all__ = ["Agent", "NO_LLM_MESSAGE", "FINAL_ANSWER", "MAX_ITERATIONS", "DEADLINE"]

NO_LLM_MESSAGE = (
    "the agent needs an LLM: set PROVGRAPH_LLM_BASE_URL and PROVGRAPH_LLM_MODEL "
    "(an OpenAI-compatible endpoint), or PROVGRAPH_LLM_GGUF_PATH (a GGUF file run in-process, "
    "pip install 'provgraph[local]'), or the same keys in provgraph.toml"
)
RAW_LIMIT = 4000
"""Characters of an unparsable LLM step kept as its analysis' thought."""
FINAL_ANSWER = "final-answer"
MAX_ITERATIONS = "max-iterations"
DEADLINE = "deadline"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _combine(a: LlmCall | None, b: LlmCall | None) -> LlmCall | None:
    """One step's LLM calls as one record (a tool call on another model is left out)."""
    if a is None or b is None:
        return a or b
    if a.model != b.model:
        return a
    return LlmCall(a.model, a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens,
                   a.estimated or b.estimated)


@dataclass
class _Run:
    """The state of one agent request."""

    sid: str
    question: Iri
    messages: list[Message]
    tally: UsageTally = field(default_factory=UsageTally)
    previous: Iri | None = None
    answer: str | None = None
    sources: dict[str, Source] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    last_result: str | None = None
    """The last tool result that was not an error (the answer when the deadline passes)."""
    timed_out: bool = False


class Agent:
    """A ReAct agent over tools; see the module docstring. Raises ConfigError without an LLM."""

    def __init__(
        self,
        store: QuadStore,
        librarian: Librarian,
        llm: ChatModel | None,
        tools: Sequence[Tool],
        *,
        max_iterations: int = 10,
        deadline: float | None = None,
        timer: Callable[[], float] = time.monotonic,
        collection: str = "default",
        clock: Callable[[], datetime] = _utcnow,
        trace: bool = True,
        restricted: tuple[list[str], str | None] | None = None,
    ) -> None:
        if llm is None:
            raise ConfigError(NO_LLM_MESSAGE)
        names = [t.spec.name for t in tools]
        if len(set(names)) != len(names):
            raise ConfigError(f"agent tool names must be unique: {', '.join(names)}")
        self.store = store
        self.librarian = librarian
        self.llm = llm
        self.tools = {t.spec.name: t for t in tools}
        self.step_schema = step_schema([t.spec for t in tools])
        self.max_iterations = max_iterations
        self.deadline = deadline
        self.timer = timer
        self.collection = collection
        self.clock = clock
        self.trace = TraceWriter(store, enabled=trace)
        self.restricted = restricted  # the request's tool groups and state, recorded with the allowed tools

    async def ask(self, question: str, *, session_id: str | None = None) -> AsyncIterator[Event]:
        """Stream the agent's work on ``question``; ends with ``Final(end_of_dialog=True)`` or one ``ErrorMessage``."""
        sid = session_id or new_session_id()
        try:
            async for event in self._run(question, sid):
                yield event
        except Exception as exc:  # noqa: BLE001 - the stream reports every failure as one message
            yield ErrorMessage(type=type(exc).__name__, message=str(exc) or type(exc).__name__, session_id=sid)

    async def _run(self, question: str, sid: str) -> AsyncIterator[Event]:
        if not question.strip():
            raise InputError("the question is empty")
        q = agent_question_iri(sid)
        asked = agent_question_quads(q, query=question, started=self.clock())
        if self.restricted is not None:
            asked += allowed_tool_quads(q, list(self.tools), self.restricted[0])
        yield self.trace.step("question", q, asked)
        prompt = system_prompt([t.spec for t in self.tools.values()])
        run = _Run(sid, q, [system(prompt), user(question)])
        deadline = None if self.deadline is None else Deadline(self.deadline, self.timer)
        for n in range(1, self.max_iterations + 1):
            if deadline is not None and deadline.remaining() <= 0:
                run.timed_out = True
                break
            async for event in self._iteration(run, n, deadline):
                yield event
            if run.answer is not None or run.timed_out:
                break
        answer, reason = run.answer, FINAL_ANSWER
        if answer is None and run.timed_out:
            reason = DEADLINE
            if run.last_result is not None:
                answer = run.last_result
                run.warnings.append(f"stopped at the deadline ({self.deadline:g} s); the answer is the last tool result")
            else:
                answer = f"No final answer within {self.deadline:g} s."
                run.warnings.append(f"stopped at the deadline ({self.deadline:g} s) without a final answer")
        elif answer is None:
            reason = MAX_ITERATIONS
            answer = f"No final answer after {self.max_iterations} iteration(s)."
            run.warnings.append(f"stopped at the iteration limit ({self.max_iterations}) without a final answer")
        yield AnswerPiece(text=answer, end_of_stream=True)
        document = agent_answer_iri(sid)
        if self.trace.enabled:
            self.librarian.add([NewRecord(id=document.value, kind="answer", content=answer, title=question)])
        c = agent_conclusion_iri(sid)
        yield self.trace.step("conclusion", c, conclusion_quads(
            c, question=q, answer=answer, termination_reason=reason, previous=run.previous, document=document))
        yield Final(session_id=sid if self.trace.enabled else None, answer=answer, sources=tuple(run.sources.values()), usage=run.tally.total(),
                    warnings=tuple(run.warnings), end_of_dialog=True)

    async def _iteration(self, run: _Run, n: int, deadline: Deadline | None) -> AsyncIterator[Event]:
        """One think → act → observe (or think → answer, setting ``run.answer``); an LLM step still
        running at the deadline is abandoned (``run.timed_out``)."""
        analysis = agent_analysis_iri(run.sid, n)
        call: LlmCall | None = None
        try:
            thinking = self.llm.complete_json(run.messages, schema=self.step_schema, schema_name=STEP_SCHEMA_NAME)
            if deadline is None:
                completion = await thinking
            else:
                try:
                    completion = await asyncio.wait_for(thinking, max(deadline.remaining(), 0.001))
                except TimeoutError:
                    run.timed_out = True
                    return
            call = run.tally.add(completion.usage)
            step = parse_step(completion.data, completion.text)
        except MalformedOutput as exc:
            text = f"unparsable LLM step: {exc}"
            yield Observation(text=text, step=n, error=True)
            yield self._analysis(run, analysis, n, thought=exc.raw[:RAW_LIMIT], observation=text, error=True,
                                 llm=call)
            run.messages += [assistant(exc.raw), user(observation_message(
                f"{exc}. Reply with one JSON object as instructed.", error=True))]
            return
        yield Thought(text=step.thought, step=n)
        if step.final_answer is not None:
            yield self._analysis(run, analysis, n, thought=step.thought, llm=call)
            run.answer = step.final_answer
            return
        assert step.action is not None
        yield Action(name=step.action, arguments=step.arguments, step=n)
        output = ToolOutput(text=f"{step.action} returned no result", error=True)
        context = ToolContext(question=run.question, session_id=run.sid, collection=self.collection, step=n)
        try:
            async for item in self._call(step, context):
                if isinstance(item, ToolOutput):
                    output = item
                else:
                    yield item
        except Exception as exc:  # noqa: BLE001 - a failed tool is an observation, not the end
            output = ToolOutput(text=f"{type(exc).__name__}: {exc}", error=True)
        if output.usage is not None:
            run.tally.merge(output.usage)
        if not output.error:
            run.last_result = output.text
        for source in output.sources:  # the chunks drawn on; markers and edges belong to the sub-answer
            run.sources.setdefault(source.chunk, replace(source, marker=None, edge=None, subgraph=None))
        yield Observation(text=output.text, step=n, error=output.error)
        yield self._analysis(run, analysis, n, thought=step.thought, action=step.action,
                             arguments=step.arguments, observation=output.text, error=output.error,
                             sub_trace=output.sub_trace, llm=_combine(call, output.llm))
        run.messages += [assistant(completion.text), user(observation_message(output.text, error=output.error))]

    async def _call(self, step: AgentStep, context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        """Run the step's tool after checking its name and arguments (InputError otherwise)."""
        tool = self.tools.get(step.action or "")
        if tool is None:
            raise InputError(f"unknown tool {step.action!r}; the tools are: {', '.join(self.tools)}")
        problems = schema_errors(step.arguments, tool.spec.parameters)
        if problems:
            raise InputError(f"invalid arguments for {tool.spec.name}: {'; '.join(problems[:5])}")
        async for item in tool.run(step.arguments, context):
            yield item

    def _analysis(self, run: _Run, iri: Iri, n: int, *, thought: str, action: str | None = None,
                  arguments: dict[str, Any] | None = None, observation: str | None = None, error: bool = False,
                  sub_trace: Iri | None = None, llm: LlmCall | None = None) -> Explain:
        """Write analysis ``n`` (derived from the previous step) and make it the previous step."""
        quads = analysis_quads(
            iri, question=run.question, step=n, thought=thought, action=action,
            arguments=None if arguments is None else json.dumps(arguments, ensure_ascii=False),
            observation=observation, previous=run.previous, sub_trace=sub_trace, error=error, llm=llm,
        )
        run.previous = iri
        return self.trace.step("analysis", iri, quads)
