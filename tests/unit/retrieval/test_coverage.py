"""A comparison gets a passage about each thing it compares, first; other questions keep their ranking."""

from __future__ import annotations

from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import TG
from provgraph.retrieval.coverage import QuestionName, compared, cover, question_names
from provgraph.retrieval.graph_rank import PassageScore, Ranking
from provgraph.retrieval.hybrid import Ranked
from provgraph.retrieval.ranking_trace import ranking_step

NAMES = {
    "e:nanda-devi": ["Nanda Devi"], "e:mt-nanda": ["Mt. Nanda Devi", "Nanda Devi"], "e:nanda": ["Nanda"],
    "e:broad-peak": ["Broad Peak"], "e:peak": ["Peak", "peak"], "e:members": ["Members", "members"],
}


def _names(entity: str) -> list[str]:
    return NAMES.get(entity, [])


def _linked(*ids: str) -> list[Ranked]:
    return [Ranked(i, 1.0, (), exact=True) for i in ids]


def _passage(chunk: str, text: str) -> PassageScore:
    return PassageScore(chunk, 0, 0.1, None, None, None, None, 1, text=text)


def test_the_names_a_question_says_in_full_and_with_capitals() -> None:
    question = "Which peak is higher, Nanda Devi or Broad Peak, by members?"
    said = question_names(question, _linked("e:nanda", "e:nanda-devi", "e:mt-nanda", "e:peak", "e:broad-peak",
                                            "e:members"), _names)
    # "Nanda" is inside "Nanda Devi"; two entities said as "Nanda Devi" are one name; "Peak" is inside
    # "Broad Peak"; "members" is written in lower case
    assert said == [QuestionName("Nanda Devi", ("e:nanda-devi", "e:mt-nanda")), QuestionName("Broad Peak", ("e:broad-peak",))]


def test_only_names_side_by_side_are_compared() -> None:
    a, b = QuestionName("Nanda Devi", ()), QuestionName("Broad Peak", ())
    assert compared("Which mountain is higher, Nanda Devi or Broad Peak?", [b, a]) == [a, b]
    assert compared("Are Nanda Devi and Broad Peak both in Asia?", [a, b]) == [a, b]
    assert compared("Who climbed Nanda Devi before Broad Peak?", [a, b]) == []


def test_a_comparison_puts_a_passage_titled_by_each_name_first() -> None:
    passages = [
        _passage("c:sunanda", "Sunanda Devi\n\nSunanda Devi is a peak near Nanda Devi."),
        _passage("c:kot", "Nanda Kot\n\nNanda Kot is a mountain."),
        _passage("c:park", "Nanda Devi National Park\n\nThe park is around Nanda Devi."),
        _passage("c:nanda", "Nanda Devi\n\nNanda Devi is the second-highest mountain in India."),
        _passage("c:broad", "Broad Peak\n\nBroad Peak is the 12th highest mountain."),
    ]
    said = [QuestionName("Nanda Devi", ("e:nanda-devi",)), QuestionName("Broad Peak", ("e:broad-peak",))]
    out = cover("Which mountain is higher, Nanda Devi or Broad Peak?", passages, said, lambda e: set())
    assert [p.chunk for p in out] == ["c:nanda", "c:broad", "c:sunanda", "c:kot", "c:park"]  # not "Sunanda Devi"
    assert [p.covers for p in out[:3]] == ["Nanda Devi", "Broad Peak", None]


def test_without_a_title_the_best_passage_mentioning_the_entity_is_moved() -> None:
    passages = [_passage("c:1", "Nanda Devi is high. It is in India."), _passage("c:2", "Other text."),
                _passage("c:3", "Broad Peak was first climbed in 1957.")]
    said = [QuestionName("Nanda Devi", ("e:n",)), QuestionName("Broad Peak", ("e:b",))]
    out = cover("Nanda Devi or Broad Peak?", passages, said, lambda e: {"e:n": {"c:1"}, "e:b": {"c:3"}}[e])
    assert [p.chunk for p in out] == ["c:1", "c:3", "c:2"]


def test_a_question_that_compares_nothing_keeps_its_ranking() -> None:
    passages = [_passage("c:1", "Apollo 13\n\nText."), _passage("c:2", "Ken Mattingly\n\nText.")]
    said = [QuestionName("Ken Mattingly", ("e:k",)), QuestionName("Apollo 13", ("e:a",))]
    assert cover("Who replaced Ken Mattingly as Apollo 13's pilot?", passages, said, lambda e: set()) == passages


def test_the_trace_records_the_name_a_passage_was_moved_for() -> None:
    moved = PassageScore("urn:chunk:b", 1, 0.1, None, None, 4, None, 1, covers="Broad Peak")
    _, quads = ranking_step("s1", Iri("urn:q"), Ranking((moved,), ((),), 1))
    assert [q.o for q in quads if q.p == TG.covers] == [Literal("Broad Peak")]
