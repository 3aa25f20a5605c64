"""The LLM extractors: definitions and relationships (the agent extractor, both with tools, is
:mod:`provgraph.extract.agent_extractor`).

Each asks for JSON against a bounded schema, builds facts with :class:`FactBuilder`, and
returns one :class:`Extraction` per chunk. A model failure propagates (the pipeline marks the
chunk failed and writes nothing for it); an item whose labels are unusable is skipped and counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from provgraph import __version__
from provgraph.errors import InputError
from provgraph.extract.base import ChunkInput, Extraction
from provgraph.extract.entities import FactBuilder
from provgraph.extract.evidence import Quotes, with_quote
from provgraph.extract.prompting import TEXT_LIMIT, answer_tokens, arr, chunk_messages, load_prompt, obj, text
from provgraph.models.base import ChatModel, Usage
from provgraph.provenance.common import LlmCall
from provgraph.provenance.subgraph import ToolStep

__all__ = ["LlmExtractor", "ExtractorKind", "definitions_extractor", "relationships_extractor", "llm_call",
           "both_kinds", "DEFINITION", "RELATIONSHIP"]


DEFINITION = with_quote(obj(entity=text(), definition=text(TEXT_LIMIT)))
RELATIONSHIP = with_quote(
    obj(subject=text(), predicate=text(100), object=text(TEXT_LIMIT), object_is_literal={"type": "boolean"})
)

Apply = Callable[[FactBuilder, dict[str, Any], Quotes], int]


def _definitions(b: FactBuilder, data: dict[str, Any], quotes: Quotes) -> int:
    skipped = 0
    for item in data.get("definitions", []):
        try:
            quotes.note(b.definition(item["entity"], item["definition"]), item)
        except InputError:
            skipped += 1
    return skipped


def _relationships(b: FactBuilder, data: dict[str, Any], quotes: Quotes) -> int:
    skipped = 0
    for item in data.get("relationships", []):
        try:
            fact = b.relation(item["subject"], item["predicate"], item["object"], literal=bool(item["object_is_literal"]))
            quotes.note(fact, item)
        except InputError:
            skipped += 1
    return skipped


def both_kinds(b: FactBuilder, data: dict[str, Any], quotes: Quotes) -> int:
    """Definitions and relationships of one answer; the number of unusable items skipped."""
    return _definitions(b, data, quotes) + _relationships(b, data, quotes)


def llm_call(usage: Usage) -> LlmCall:
    """The trace's record of a call's (or calls') token usage."""
    return LlmCall(usage.model, usage.input_tokens, usage.output_tokens, usage.estimated)


@dataclass(frozen=True)
class ExtractorKind:
    """What an LLM extractor asks for: its component, prompt (name and version), schema, and how items become facts."""

    component: str
    prompt: str
    prompt_version: int
    schema: dict[str, Any]
    apply: Apply


_DEFINITIONS = ExtractorKind("kg-extract-definitions", "definitions", 2, obj(definitions=arr(DEFINITION)), _definitions)
_RELATIONSHIPS = ExtractorKind("kg-extract-relationships", "relationships", 2, obj(relationships=arr(RELATIONSHIP)),
                               _relationships)


class LlmExtractor:
    """An extractor that asks an LLM for JSON and turns it into facts."""

    def __init__(self, kind: ExtractorKind, llm: ChatModel, *, entity_base: str) -> None:
        self._kind = kind
        self._llm = llm
        self._base = entity_base
        self._instructions = load_prompt(kind.prompt, kind.prompt_version)

    @property
    def component(self) -> str:
        """The PROV agent name."""
        return self._kind.component

    @property
    def version(self) -> str:
        """Package version plus prompt version."""
        return f"{__version__}+{self._kind.prompt}.v{self._kind.prompt_version}"

    @property
    def model_name(self) -> str | None:
        """The LLM's name."""
        return self._llm.name

    def messages(self, chunk: ChunkInput) -> list[Any]:
        """The exact messages sent for a chunk (exposed for tests and debugging)."""
        return chunk_messages(self._instructions, chunk.text)

    async def extract(self, chunk: ChunkInput) -> Extraction:
        """Ask the LLM, validate, build facts. Raises ModelError/MalformedOutput on failure."""
        result = await self._llm.complete_json(self.messages(chunk), schema=self._kind.schema,
                                               schema_name=self._kind.prompt, max_tokens=answer_tokens(chunk.text))
        return self.extraction(chunk, result.data, result.usage)

    def extraction(self, chunk: ChunkInput, data: dict[str, Any], usage: Usage,
                   steps: tuple[ToolStep, ...] = ()) -> Extraction:
        """The facts of a validated answer (``usage``: of every call that led to it)."""
        builder = FactBuilder(self._base)
        quotes = Quotes(chunk.text)
        skipped = self._kind.apply(builder, data, quotes)
        notes = (f"{skipped} item(s) with unusable labels skipped",) if skipped else ()
        return Extraction(tuple(builder.facts), builder.label_quads(), builder.entities(), llm=llm_call(usage),
                          dropped=skipped, notes=notes, evidence=quotes.spans, steps=steps)


def definitions_extractor(llm: ChatModel, *, entity_base: str) -> LlmExtractor:
    """Entities with a definition → ``(entity, skos:definition, "text")``."""
    return LlmExtractor(_DEFINITIONS, llm, entity_base=entity_base)


def relationships_extractor(llm: ChatModel, *, entity_base: str) -> LlmExtractor:
    """``(subject, predicate, object)``; the object an entity or a literal, as the LLM says."""
    return LlmExtractor(_RELATIONSHIPS, llm, entity_base=entity_base)

