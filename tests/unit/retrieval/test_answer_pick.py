"""No-LLM answers: sentences naming the question's things, of the asked type, whole, deduplicated."""

from __future__ import annotations

import pytest

from provgraph.models.embedders import Model2VecEmbedder
from provgraph.retrieval.answer_pick import pick_sentences, question_type
from provgraph.retrieval.document_rag import cited_markers
from provgraph.retrieval.synthesis import with_marker

GENERIC = "Science in the early twentieth century changed how people understood the world around them."
FACT = "The proton was discovered by Ernest Rutherford in 1917 at the University of Manchester."


@pytest.fixture(scope="module")
def embedder() -> Model2VecEmbedder:
    return Model2VecEmbedder()


def pick(embedder: Model2VecEmbedder, question: str, passages: list[tuple[str, str, int]], limit: int = 3) -> list:
    return pick_sentences(question, embedder.embed([question])[0], embedder, passages, limit=limit)


@pytest.mark.parametrize(("question", "kind"), [
    ("Who discovered the proton?", "who"), ("When was the proton discovered?", "when"),
    ("In what year did Curie die?", "when"), ("Where did Rutherford work?", "where"),
    ("How many elements did Curie discover?", "number"), ("What is radium?", None),
])
def test_question_types(question: str, kind: str | None) -> None:
    assert question_type(question) == kind


def test_the_sentence_naming_the_questions_things_comes_first(embedder: Model2VecEmbedder) -> None:
    passages = [("c1", f"{GENERIC} Physics grew quickly.", 1), ("c2", f"Manchester was busy. {FACT}", 2)]
    picks = pick(embedder, "Who discovered the proton?", passages)
    assert picks[0].text == FACT and picks[0].chunk == "c2"


def test_duplicates_across_chunks_are_quoted_once(embedder: Model2VecEmbedder) -> None:
    passages = [("c1", f"Intro text here. {FACT}", 1), ("c2", f"Other words here. {FACT}", 2)]
    texts = [p.text for p in pick(embedder, "Who discovered the proton?", passages)]
    assert texts.count(FACT) == 1


def test_a_pronoun_is_quoted_with_the_sentence_that_resolves_it(embedder: Model2VecEmbedder) -> None:
    text = "Ernest Rutherford moved to Manchester in 1907. He discovered the proton there in 1917."
    picks = pick(embedder, "When was the proton discovered?", [("c1", f"Opening words. {text}", 1)], limit=1)
    assert picks[0].text == text


def test_a_chunk_overlap_fragment_is_never_quoted(embedder: Model2VecEmbedder) -> None:
    picks = pick(embedder, "Who discovered the proton?", [("c1", f"proton discovered by someone else. {FACT}", 1)])
    assert [p.text for p in picks] == [FACT]


def test_footnote_markers_never_become_citations(embedder: Model2VecEmbedder) -> None:
    source = f"Intro. {FACT[:-1]}.[8][9] Rutherford later moved to Cambridge.[10]"
    picks = pick(embedder, "Who discovered the proton?", [("c1", source, 1)])
    assert picks[0].text == FACT  # the glued markers split the sentences and are dropped
    answer = " ".join(with_marker(p.text, "[1]") for p in picks)
    assert cited_markers(answer, 1) == ([1], [])  # no [8], [9] or [10] read as a citation


def test_a_two_part_question_gets_both_parts(embedder: Model2VecEmbedder) -> None:
    passages = [
        ("c1", "Intro. Ernest Rutherford discovered the proton in 1917 in Manchester.", 1),
        ("c2", "Intro. James Chadwick, a student of Rutherford, discovered the neutron in 1932.", 2),
        ("c3", f"Intro. {GENERIC}", 3),
    ]
    picks = pick(embedder, "Who discovered the proton and who discovered the neutron?", passages, limit=2)
    assert {p.chunk for p in picks} == {"c1", "c2"}


def test_the_sentence_where_the_named_one_does_what_is_asked_comes_first(embedder: Model2VecEmbedder) -> None:
    prize = ("The committee honoured Henri Becquerel for his discovery of radioactivity. It honoured Marie Curie"
             " for her research on the radiation that Becquerel had discovered.")
    found = "Polonium is an element that Marie Curie and Pierre Curie discovered in 1898."
    passages = [("prize", f"Opening words. {prize}", 1), ("other", "Filler text. The lab was cold.", 2),
                ("polonium", f"Opening words. {found}", 3)]
    picks = pick(embedder, "What did Marie Curie discover?", passages)
    assert picks[0].text == found  # she discovered it; in the better-ranked passage Becquerel did
    assert pick(embedder, "What did Henri Becquerel discover?", passages)[0].chunk == "prize"


@pytest.mark.parametrize(("text", "acts"), [
    ("Marie Curie discovered radium.", True),
    ("Marie Curie had also discovered radium.", True),
    ("Marie Curie, Pierre Curie and Gustave Bémont discovered radium.", True),
    ("Radium was what Marie Curie and Pierre Curie discovered.", True),
    ("It honoured Marie Curie for the rays that Becquerel had discovered.", False),
    ("Marie Curie honoured Becquerel, who discovered the rays.", False),
    ("The discovery of radium made Marie Curie famous.", False),
])
def test_whether_the_named_one_does_the_asked_verb(text: str, acts: bool) -> None:
    from provgraph.retrieval.answer_pick import _acts

    assert _acts(text, "Marie Curie", {"discover"}) is acts
