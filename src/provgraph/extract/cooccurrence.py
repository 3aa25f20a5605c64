"""The no-LLM extractor: co-occurrence analysis of each chunk (component ``cooccurrence-extractor``).

Entities from capitalised names and recurring noun phrases, definitions from copular sentences,
and one relationship per pair of entities in a sentence (the connecting phrase, or "related to").
Name variants of one chunk ("Rutherford" beside "Ernest Rutherford") are one entity, and the
variant is recorded as a fact ``(entity, skos:altLabel, "Rutherford")`` of the chunk's subgraph,
so the merge is explained by its source and goes with it. Same subgraph provenance as every
extractor, with no ``tg:llmModel``.
"""

from __future__ import annotations

import unicodedata

from provgraph import __version__
from provgraph.errors import InputError
from provgraph.extract.aliases import alias_map
from provgraph.extract.base import ChunkInput, Extraction
from provgraph.extract.clean_text import blank_markup
from provgraph.extract.entities import FactBuilder
from provgraph.extract.nlp import analyse

__all__ = ["CooccurrenceExtractor"]


class CooccurrenceExtractor:
    """Extracts definitions and co-occurrence relationships without any model."""

    component = "cooccurrence-extractor"
    model_name = None

    def __init__(self, *, entity_base: str, max_relations_per_sentence: int = 6) -> None:
        self._base = entity_base
        self._max = max_relations_per_sentence

    @property
    def version(self) -> str:
        """The package version (the analysis is part of the package)."""
        return __version__

    async def extract(self, chunk: ChunkInput) -> Extraction:
        """Analyse the chunk's text; never calls a model."""
        # NFC first: the analysis tokenises on word characters, which decomposed accents would split
        # markup blanked character for character, so offsets into the text still hold
        text = blank_markup(unicodedata.normalize("NFC", chunk.text))
        analysis = analyse(text, max_relations_per_sentence=self._max)
        b = FactBuilder(self._base)
        aliases = alias_map(m.label for m in analysis.entities)

        def name(label: str) -> str:
            return aliases.get(label, label)

        skipped = 0
        for short, full in aliases.items():
            try:
                b.alias(full, short)
            except InputError:
                skipped += 1
        for d in analysis.definitions:
            try:
                b.definition(name(d.label), d.text)
            except InputError:
                skipped += 1
        for r in analysis.relations:
            if name(r.subject) == name(r.object):
                continue  # a name and its own variant: no relation
            try:
                b.relation(name(r.subject), r.predicate, name(r.object))
            except InputError:
                skipped += 1
        return Extraction(tuple(b.facts), b.label_quads(), b.entities(), dropped=skipped)
