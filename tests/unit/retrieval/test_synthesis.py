"""Citations and the extractive (no-LLM) answer."""

from __future__ import annotations

import re

from provgraph.events import Source
from provgraph.extract.nlp import split_sentences
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.retrieval.edge_select import LabelledEdge
from provgraph.retrieval.synthesis import Quote, cite, extractive_answer, render, synthesis_messages, with_marker
from tests.unit.retrieval.graph_world import embedder

P = Iri("urn:p:discovered")


def edge(s: str, o: str) -> LabelledEdge:
    return LabelledEdge(TripleTerm(Iri(f"urn:e:{s.replace(' ', '_')}"), P, Iri(f"urn:e:{o}")), s, "discovered", o)


def source(chunk: str, e: LabelledEdge, title: str = "Doc") -> Source:
    return Source(document=f"urn:doc:{title}", title=title, chunk=chunk, chunk_index=1, offset=0, length=10,
                  edge=e.edge)


def test_markers_number_chunks_in_edge_order_and_mark_every_source() -> None:
    a, b = edge("Marie Curie", "polonium"), edge("Marie Curie", "radium")
    found = {a.edge: [source("urn:chunk:1", a), source("urn:chunk:2", a)], b.edge: [source("urn:chunk:2", b)]}
    c = cite([a.edge, b.edge], found)
    assert [(s.chunk, s.marker, s.edge) for s in c.sources] == [
        ("urn:chunk:1", "[1]", a.edge), ("urn:chunk:2", "[2]", a.edge), ("urn:chunk:2", "[2]", b.edge)]
    assert c.by_edge == {a.edge: ["[1]", "[2]"], b.edge: ["[2]"]}
    prompt = synthesis_messages("Who?", [a, b], c)[1].content
    assert prompt == ("Facts:\n- Marie Curie | discovered | polonium [1][2]\n"
                      "- Marie Curie | discovered | radium [2]\n\nQuestion: Who?")


def test_marker_goes_before_the_final_punctuation() -> None:
    assert with_marker("She found it.", "[1]") == "She found it [1]."
    assert with_marker('He said "so."', "[2]") == 'He said "so [2]."'
    assert with_marker("A heading\nline", "[3]") == "A heading line [3]."


def test_extractive_answer_quotes_sentences_naming_both_ends_of_an_edge() -> None:
    a = edge("Marie Curie", "polonium")
    text = ("Marie Curie discovered polonium in 1898. Polonium is rare. Then MARIE CURIE named Polonium after Poland. "
            "Marie Curie discovered polonium in 1898.")
    found = {a.edge: [source("urn:chunk:1", a)]}
    emb = embedder()
    question = emb.embed(["Who discovered polonium?"])[0]
    quotes = extractive_answer(question, emb, [a], found, {"urn:chunk:1": text}, limit=5)
    assert sorted(q.text for q in quotes) == ["Marie Curie discovered polonium in 1898.",
                                             "Then MARIE CURIE named Polonium after Poland."]
    assert {q.chunks for q in quotes} == {("urn:chunk:1",)}
    answer = render(quotes, cite([a.edge], found))
    for sentence in split_sentences(" ".join(answer)):
        assert re.search(r"\[\d+\]", sentence.text)
    assert len(extractive_answer(question, emb, [a], found, {"urn:chunk:1": text}, limit=1)) == 1


def test_quoted_chunks_are_numbered_first_in_the_order_quoted() -> None:
    a, b = edge("Marie Curie", "polonium"), edge("Pierre Curie", "radium")
    found = {a.edge: [source("urn:chunk:1", a)], b.edge: [source("urn:chunk:2", b)]}
    quotes = [Quote("Pierre Curie found radium.", ("urn:chunk:2",))]
    c = cite([a.edge, b.edge], found, first=["urn:chunk:2"])
    assert render(quotes, c) == ["Pierre Curie found radium [1]."]
    assert c.by_edge == {a.edge: ["[2]"], b.edge: ["[1]"]}


def test_without_a_quotable_sentence_the_sourced_facts_are_stated() -> None:
    a, b = edge("Marie Curie", "polonium"), edge("Pierre Curie", "radium")
    found = {a.edge: [source("urn:chunk:1", a), source("urn:chunk:3", a)], b.edge: []}
    emb = embedder()
    quotes = extractive_answer(emb.embed(["q"])[0], emb, [a, b], found, {"urn:chunk:1": "Nothing here."})
    assert quotes == [Quote("Marie Curie discovered polonium", ("urn:chunk:1", "urn:chunk:3"))]
    assert render(quotes, cite([a.edge, b.edge], found)) == ["Marie Curie discovered polonium [1][2]."]
