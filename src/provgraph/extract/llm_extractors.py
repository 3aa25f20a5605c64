"""The LLM extractors: definitions, relationships, and agent (both in one pass).

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
from provgraph.models.base import ChatModel
from provgraph.provenance.common import LlmCall

__all__ = ["LlmExtractor", "definitions_extractor", "relationships_extractor", "agent_extractor", "DEFINITION", "RELATIONSHIP"]



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


def _both(b: FactBuilder, data: dict[str, Any], quotes: Quotes) -> int:
    return _definitions(b, data, quotes) + _relationships(b, data, quotes)


@dataclass(frozen=True)
class _Kind:
    component: str
    prompt: str
    prompt_version: int
    schema: dict[str, Any]
    apply: Apply


_DEFINITIONS = _Kind("kg-extract-definitions", "definitions", 2, obj(definitions=arr(DEFINITION)), _definitions)
_RELATIONSHIPS = _Kind("kg-extract-relationships", "relationships", 2, obj(relationships=arr(RELATIONSHIP)), _relationships)
_AGENT = _Kind(
    "kg-extract-agent", "agent", 2, obj(definitions=arr(DEFINITION), relationships=arr(RELATIONSHIP)), _both
)


class LlmExtractor:
    """An extractor that asks an LLM for JSON and turns it into facts."""

    def __init__(self, kind: _Kind, llm: ChatModel, *, entity_base: str) -> None:
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
        builder = FactBuilder(self._base)
        quotes = Quotes(chunk.text)
        skipped = self._kind.apply(builder, result.data, quotes)
        call = LlmCall(result.usage.model, result.usage.input_tokens, result.usage.output_tokens,
                       result.usage.estimated)
        notes = (f"{skipped} item(s) with unusable labels skipped",) if skipped else ()
        return Extraction(tuple(builder.facts), builder.label_quads(), builder.entities(), llm=call,
                          dropped=skipped, notes=notes, evidence=quotes.spans)


def definitions_extractor(llm: ChatModel, *, entity_base: str) -> LlmExtractor:
    """Entities with a definition → ``(entity, skos:definition, "text")``."""
    return LlmExtractor(_DEFINITIONS, llm, entity_base=entity_base)


def relationships_extractor(llm: ChatModel, *, entity_base: str) -> LlmExtractor:
    """``(subject, predicate, object)``; the object an entity or a literal, as the LLM says."""
    return LlmExtractor(_RELATIONSHIPS, llm, entity_base=entity_base)


def agent_extractor(llm: ChatModel, *, entity_base: str) -> LlmExtractor:
    """Definitions and relationships together, in one LLM pass."""
    return LlmExtractor(_AGENT, llm, entity_base=entity_base)
