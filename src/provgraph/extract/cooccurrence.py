"""The no-LLM extractor: co-occurrence analysis of each chunk (component ``cooccurrence-extractor``).

Entities from capitalised names and recurring noun phrases, definitions from copular sentences,
and one relationship per pair of entities in a sentence (the connecting phrase, or "related to").
Name variants of one chunk ("Rutherford" beside "Ernest Rutherford") are one entity, and the
variant is recorded as a fact ``(entity, skos:altLabel, "Rutherford")`` of the chunk's subgraph,
so the merge is explained by its source and goes with it. Same subgraph provenance as every
extractor, with no ``tg:llmModel``.
Each fact's evidence is the sentence it was found in, at its exact offsets in the chunk's text (an
overlong one narrowed to the line or clause holding both ends, see
:func:`provgraph.extract.evidence.narrow`).
"""

from __future__ import annotations

import unicodedata

from provgraph import __version__
from provgraph.errors import InputError
from provgraph.extract.aliases import alias_map
from provgraph.extract.base import ChunkInput, Extraction
from provgraph.extract.clean_text import blank_markup
from provgraph.extract.entities import FactBuilder
from provgraph.extract.evidence import align, narrow
from provgraph.extract.nlp import Sentence, analyse
from provgraph.rdf.terms import TripleTerm

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
        nfc = unicodedata.normalize("NFC", chunk.text)
        # markup blanked character for character, so offsets into the text still hold
        text = blank_markup(nfc)
        analysis = analyse(text, max_relations_per_sentence=self._max)
        b = FactBuilder(self._base)
        aliases = alias_map(m.label for m in analysis.entities)

        def name(label: str) -> str:
            return aliases.get(label, label)

        skipped = 0
        evidence: dict[TripleTerm, tuple[int, int]] = {}

        def supported(fact: TripleTerm, index: int, labels: tuple[str, str]) -> None:
            span = _span(analysis.sentences[index], chunk.text, nfc)
            if span is not None:
                evidence.setdefault(fact, narrow(chunk.text, span, labels))

        for short, full in aliases.items():
            try:
                fact = b.alias(full, short)
            except InputError:
                skipped += 1
                continue
            # the alias's evidence: the first sentence that uses the short form
            for index, sentence in enumerate(analysis.sentences):
                if short in sentence.text:
                    supported(fact, index, (short, short))
                    break
        for d in analysis.definitions:
            try:
                supported(b.definition(name(d.label), d.text), d.sentence_index, (d.label, d.text))
            except InputError:
                skipped += 1
        for r in analysis.relations:
            if name(r.subject) == name(r.object):
                continue  # a name and its own variant: no relation
            try:
                supported(b.relation(name(r.subject), r.predicate, name(r.object)), r.sentence_index,
                          (r.subject, r.object))
            except InputError:
                skipped += 1
        return Extraction(tuple(b.facts), b.label_quads(), b.entities(), dropped=skipped, evidence=evidence)


def _span(sentence: Sentence, original: str, analysed: str) -> tuple[int, int] | None:
    """The sentence's span in the chunk's own text (the analysis ran on its NFC form)."""
    if original == analysed:
        return sentence.offset, sentence.length
    return align(analysed[sentence.offset:sentence.offset + sentence.length], original)
