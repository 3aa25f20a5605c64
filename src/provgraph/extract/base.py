"""The extractor contract: one chunk in, facts and the data for ONE provenance subgraph out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from provgraph.provenance.common import LlmCall
from provgraph.provenance.subgraph import ToolStep
from provgraph.rdf.terms import Iri, Quad, TripleTerm

__all__ = ["ChunkInput", "EntityInfo", "Extraction", "Extractor"]


@dataclass(frozen=True, slots=True)
class ChunkInput:
    """A chunk to extract from."""

    iri: Iri
    text: str
    document: Iri


@dataclass(frozen=True, slots=True)
class EntityInfo:
    """An entity an extraction mentions, for labelling and the entity vector index."""

    iri: Iri
    label: str
    definition: str | None = None


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one extractor found in one chunk.

    ``facts`` go to the default graph AND into the chunk's subgraph (``tg:contains``);
    ``labels`` (``rdfs:label`` of entities and predicates) go to the default graph only.
    ``evidence`` maps a fact to the ``(offset, length)`` of its supporting sentence(s) in the
    chunk's text, when the extractor knows it. ``steps`` are the tool calls an agent extractor made
    (recorded in the subgraph's activity).
    """

    facts: tuple[TripleTerm, ...]
    labels: tuple[Quad, ...]
    entities: tuple[EntityInfo, ...]
    llm: LlmCall | None = None
    ontology: Iri | None = None
    dropped: int = 0  # facts rejected (e.g. outside the ontology)
    notes: tuple[str, ...] = field(default_factory=tuple)
    evidence: Mapping[TripleTerm, tuple[int, int]] = field(default_factory=dict)
    steps: tuple[ToolStep, ...] = ()


class Extractor(Protocol):
    """A pipeline stage: ``extract`` is idempotent given the same model answers.

    Raises :class:`~provgraph.errors.ModelError` (incl. ``MalformedOutput``) when the model fails;
    the pipeline then marks the chunk failed and writes nothing for it.
    """

    @property
    def component(self) -> str:
        """Component name, recorded as the PROV agent (e.g. ``kg-extract-relationships``)."""
        ...

    @property
    def version(self) -> str:
        """Component version (prompt template version included)."""
        ...

    @property
    def model_name(self) -> str | None:
        """The LLM recorded as ``tg:llmModel``, or None."""
        ...

    async def extract(self, chunk: ChunkInput) -> Extraction:
        """Extract facts from one chunk."""
        ...
