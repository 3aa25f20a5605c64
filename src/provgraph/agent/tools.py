"""The agent's tool contract and the built-in tools: ``knowledge-query``, ``document-query``, ``text-completion``.

A tool is a name, a description, a JSON schema for its arguments, and ``run``: an async
iterator that may pass on ``Explain`` events (a retrieval tool's own trace, as it is written)
and ends with exactly one :class:`ToolOutput`. A tool reports failure by raising or by
returning ``ToolOutput(error=True)``; either way the agent records the step as ``tg:Error``
and goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from provgraph.events import ErrorMessage, Event, Explain, Final, Source, Usage
from provgraph.models.base import ChatModel, user
from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import Iri

__all__ = [
    "ToolSpec",
    "ToolContext",
    "ToolOutput",
    "Tool",
    "Asker",
    "RagTool",
    "TextCompletionTool",
    "knowledge_query",
    "document_query",
    "QUESTION_ARGUMENTS",
    "BUILTIN_TOOLS",
    "KNOWLEDGE_QUERY",
    "DOCUMENT_QUERY",
    "TEXT_COMPLETION",
]

QUESTION_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 2000}},
    "required": ["question"],
    "additionalProperties": False,
}

PROMPT_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "minLength": 1, "maxLength": 20000}},
    "required": ["prompt"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the LLM is told about a tool; ``parameters`` is the JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """The request a tool call belongs to: the agent question (sub-traces are informed by it),
    its session, collection and step number."""

    question: Iri
    session_id: str
    collection: str
    step: int


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result: the observation text and, for retrieval tools, the sub-trace's synthesis.

    ``usage`` counts LLM calls the tool made (summed into the agent's totals); ``llm`` is a
    call to record on the agent's step when the tool has no trace of its own.
    """

    text: str
    error: bool = False
    sub_trace: Iri | None = None
    sources: tuple[Source, ...] = ()
    usage: Usage | None = None
    llm: LlmCall | None = None


@runtime_checkable
class Tool(Protocol):
    """An action the agent can take."""

    @property
    def spec(self) -> ToolSpec:
        """Name, description and argument schema."""
        ...

    def run(self, arguments: dict[str, Any], context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        """Run once with validated ``arguments``: ``Explain`` events, then one ``ToolOutput``."""
        ...


class Asker(Protocol):
    """A retrieval engine (GraphRAG, Document RAG): a question in, a stream of events out."""

    def ask(
        self, question: str, *, session_id: str | None = None, informed_by: Iri | None = None
    ) -> AsyncIterator[Event]:
        """Stream explain steps, answer pieces and one ``Final`` (or one ``ErrorMessage``)."""
        ...


class RagTool:
    """Runs a retrieval engine as a tool; its trace is a sub-trace of the agent's.

    The sub-trace's question is ``prov:wasInformedBy`` the agent question; the output carries
    the sub-trace's synthesis, from which the calling analysis step is derived.
    """

    def __init__(self, name: str, description: str, engine: Asker) -> None:
        self._spec = ToolSpec(name, description, QUESTION_ARGUMENTS)
        self.engine = engine

    @property
    def spec(self) -> ToolSpec:
        """Name, description and argument schema (``{"question": str}``)."""
        return self._spec

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        """Ask the engine; pass its explain events on; end with its answer (or its error)."""
        synthesis: Iri | None = None
        async for event in self.engine.ask(arguments["question"], informed_by=context.question):
            if isinstance(event, Explain):
                if event.step == "synthesis":
                    synthesis = Iri(event.explain_id)
                yield event
            elif isinstance(event, Final):
                yield ToolOutput(text=event.answer, sub_trace=synthesis, sources=event.sources, usage=event.usage)
                return
            elif isinstance(event, ErrorMessage):
                yield ToolOutput(text=f"{event.type}: {event.message}", error=True)
                return
        yield ToolOutput(text=f"{self._spec.name} ended without an answer", error=True)


KNOWLEDGE_QUERY = ToolSpec(
    "knowledge-query",
    "Ask the knowledge graph a question in natural language; the answer is built from "
    "extracted facts (entities and their relationships) and traced to its sources.",
    QUESTION_ARGUMENTS,
)
DOCUMENT_QUERY = ToolSpec(
    "document-query",
    "Ask the document collection a question in natural language; the answer is built from "
    "the most relevant passages of the loaded documents and cites them.",
    QUESTION_ARGUMENTS,
)
TEXT_COMPLETION = ToolSpec(
    "text-completion",
    "Send a self-contained prompt to the language model and get its reply; "
    "it sees nothing but the prompt and knows nothing of the collection.",
    PROMPT_ARGUMENTS,
)
BUILTIN_TOOLS = (KNOWLEDGE_QUERY, DOCUMENT_QUERY, TEXT_COMPLETION)
"""The specs of the agent's built-in tools, in the order it lists them."""


def knowledge_query(engine: Asker) -> RagTool:
    """The ``knowledge-query`` tool over a GraphRAG engine."""
    return RagTool(KNOWLEDGE_QUERY.name, KNOWLEDGE_QUERY.description, engine)


def document_query(engine: Asker) -> RagTool:
    """The ``document-query`` tool over a Document RAG engine."""
    return RagTool(DOCUMENT_QUERY.name, DOCUMENT_QUERY.description, engine)


class TextCompletionTool:
    """``text-completion``: one plain LLM call (no retrieval), e.g. to rephrase or compute."""

    def __init__(self, llm: ChatModel) -> None:
        self.llm = llm
        self._spec = TEXT_COMPLETION

    @property
    def spec(self) -> ToolSpec:
        """Name, description and argument schema (``{"prompt": str}``)."""
        return self._spec

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> AsyncIterator[Explain | ToolOutput]:
        """Complete the prompt."""
        completion = await self.llm.complete([user(arguments["prompt"])])
        u = completion.usage
        yield ToolOutput(
            text=completion.text,
            usage=Usage(input_tokens=u.input_tokens, output_tokens=u.output_tokens, llm_calls=1, models=(u.model,)),
            llm=LlmCall(u.model, u.input_tokens, u.output_tokens, u.estimated),
        )
