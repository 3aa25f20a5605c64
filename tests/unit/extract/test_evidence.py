"""Sentence evidence of extracted facts: exact offsets from the no-LLM extractor, and LLM quotes
aligned to the chunk's text despite whitespace, case and Unicode composition differences."""

from __future__ import annotations

import asyncio
import json
import unicodedata

from provgraph.extract.base import ChunkInput
from provgraph.extract.cooccurrence import CooccurrenceExtractor
from provgraph.extract.evidence import align
from provgraph.extract.llm_extractors import relationships_extractor
from provgraph.rdf.terms import Iri
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema

BASE = "urn:provgraph:entity:"
TEXT = "Polonium was named after Poland. Marie Curie discovered polonium in 1898.\nShe was born in Warsaw."


def chunk(text: str) -> ChunkInput:
    return ChunkInput(Iri("urn:chunk:1"), text, Iri("urn:doc:d"))


def test_align_tolerates_whitespace_case_and_composition() -> None:
    text = "Intro.  Marie   CURIE\ndiscovered polonium. End."
    assert align("marie curie discovered polonium", text) == (8, len("Marie   CURIE\ndiscovered polonium"))
    decomposed = unicodedata.normalize("NFD", "Ève Curie wrote a biography.")
    assert align("ève curie wrote", decomposed) == (0, len(unicodedata.normalize("NFD", "Ève Curie wrote")))
    assert align("", text) is None and align("radium", text) is None
    curly = "She called it \u201cpolonium\u201d \u2014 after Poland."
    assert align('she called it "polonium" - after poland.', curly) == (0, len(curly))


def test_no_llm_extractor_records_each_facts_sentence() -> None:
    extraction = asyncio.run(CooccurrenceExtractor(entity_base=BASE).extract(chunk(TEXT)))
    assert extraction.facts and set(extraction.evidence) == set(extraction.facts)
    sentences = {TEXT[o:o + n] for o, n in extraction.evidence.values()}
    assert sentences <= {"Polonium was named after Poland.", "Marie Curie discovered polonium in 1898.",
                         "She was born in Warsaw."}


def test_no_llm_evidence_indexes_the_original_text_when_it_is_not_nfc() -> None:
    text = unicodedata.normalize("NFD", "Irène Curie worked with Frédéric Joliot in Paris.")
    extraction = asyncio.run(CooccurrenceExtractor(entity_base=BASE).extract(chunk(text)))
    assert extraction.facts
    assert {(o, n) for o, n in extraction.evidence.values()} == {(0, len(text))}


def test_llm_quote_is_aligned_and_an_unfound_quote_is_dropped() -> None:
    answer = {"relationships": [
        {"subject": "Marie Curie", "predicate": "discovered", "object": "polonium", "object_is_literal": False,
         "quote": "marie curie  discovered polonium in 1898."},
        {"subject": "Marie Curie", "predicate": "born in", "object": "Warsaw", "object_is_literal": False,
         "quote": "She was born in Kraków."},
        {"subject": "Polonium", "predicate": "named after", "object": "Poland", "object_is_literal": False},
    ]}
    llm = ScriptedChatModel(by_schema({"relationships": json.dumps(answer)}))
    extractor = relationships_extractor(llm, entity_base=BASE)
    extraction = asyncio.run(extractor.extract(chunk(TEXT)))
    assert len(extraction.facts) == 3
    assert list(extraction.evidence.values()) == [(33, len("Marie Curie discovered polonium in 1898."))]
    assert extraction.facts[0] in extraction.evidence
    prompt = llm.calls[0].messages[0].content
    assert '"quote"' in prompt and extractor.version.endswith("+relationships.v2")


def test_an_overlong_sentence_is_narrowed_to_the_clause_holding_both_labels() -> None:
    from provgraph.extract.evidence import narrow

    items = "\n".join(f"- Probe {i} reached Moon {i} in {1960 + i}" for i in range(20))
    text = "Intro. The missions were " + items + " and more."
    start = text.index("The missions")
    span = (start, len(text) - start)
    assert span[1] > 400
    o, n = narrow(text, span, ("Probe 12", "Moon 12"))
    assert text[o:o + n] == "- Probe 12 reached Moon 12 in 1972"
    assert narrow(text, span, ("Probe 1", "Saturn")) == span  # a label not found: kept whole
    assert narrow(text, span, ("Probe 0", "Moon 19")) == span  # further apart than 400: kept whole
    assert narrow(text, (0, 6), ("x", "y")) == (0, 6)  # short spans are never touched
