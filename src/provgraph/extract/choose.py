"""The extractors a run uses, by name: what ``--extractors`` and ``PROVGRAPH_EXTRACTORS`` choose from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from provgraph.errors import ConfigError, InputError

if TYPE_CHECKING:  # the runtime imports this module for the names alone: no numpy, no models
    from provgraph.extract.base import Extractor
    from provgraph.extract.extraction_tools import ExtractionTools
    from provgraph.models.base import ChatModel

__all__ = ["EXTRACTORS", "LLM_EXTRACTORS", "choose_extractors"]

LLM_EXTRACTORS = ("definitions", "relationships", "ontology", "agent")
EXTRACTORS = (*LLM_EXTRACTORS, "cooccurrence")


def choose_extractors(names: str | None, *, default: str, llm: ChatModel | None, entity_base: str,
                      ontology: Path | None = None,
                      tools: Callable[[], ExtractionTools] | None = None) -> list[Extractor]:
    """The named extractors (comma-separated; ``default`` when None); without an LLM only ``cooccurrence`` can run.

    With no LLM and no names given, the list becomes ``cooccurrence`` (the no-LLM mode). ``tools``
    makes the agent extractor's tools over the collection (called only when ``agent`` is chosen).
    """
    from provgraph.extract.agent_extractor import agent_extractor
    from provgraph.extract.cooccurrence import CooccurrenceExtractor
    from provgraph.extract.llm_extractors import definitions_extractor, relationships_extractor
    from provgraph.extract.ontology import Ontology, OntologyExtractor

    wanted = [n.strip() for n in (names or default).split(",") if n.strip()]
    unknown = [n for n in wanted if n not in EXTRACTORS]
    if unknown:
        raise InputError(f"unknown extractor(s) {', '.join(unknown)}; choose from {', '.join(EXTRACTORS)}")
    if ontology is not None and "ontology" not in wanted:
        wanted.append("ontology")
    base = entity_base
    if llm is None:
        if names is None and ontology is None:
            return [CooccurrenceExtractor(entity_base=base)]
        needing = [n for n in wanted if n in LLM_EXTRACTORS]
        if needing:
            raise ConfigError(
                f"extractor(s) {', '.join(needing)} need an LLM: set PROVGRAPH_LLM_BASE_URL and "
                "PROVGRAPH_LLM_MODEL (or use --extractors cooccurrence)"
            )
    out: list[Extractor] = []
    for name in wanted:
        if name == "cooccurrence":
            out.append(CooccurrenceExtractor(entity_base=base))
        elif name == "definitions":
            out.append(definitions_extractor(llm, entity_base=base))  # type: ignore[arg-type]
        elif name == "relationships":
            out.append(relationships_extractor(llm, entity_base=base))  # type: ignore[arg-type]
        elif name == "agent":
            if tools is None:
                raise InputError("the agent extractor needs its collection's tools (Runtime.extractors gives them)")
            out.append(agent_extractor(llm, tools(), entity_base=base))  # type: ignore[arg-type]
        elif name == "ontology":
            if ontology is None:
                raise InputError("the ontology extractor needs --ontology FILE (a Turtle file)")
            out.append(OntologyExtractor(llm, Ontology.load(ontology), entity_base=base))  # type: ignore[arg-type]
    return out
