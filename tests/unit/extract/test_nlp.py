"""Offline co-occurrence analysis: sentences, entities, definitions, relations."""

from __future__ import annotations

from pathlib import Path

import pytest

from provgraph.errors import InputError
from provgraph.extract.nlp import (
    RELATED_TO,
    Definition,
    EntityMention,
    Relation,
    Sentence,
    TextAnalysis,
    analyse,
    split_sentences,
)

CORPUS = Path(__file__).resolve().parents[3] / "examples" / "corpus"


def _texts(text: str) -> list[str]:
    return [sentence.text for sentence in split_sentences(text)]


def _labels(text: str, **options: int) -> list[str]:
    return [entity.label for entity in analyse(text, **options).entities]


# --- exact analyses --------------------------------------------------------------------


def test_discovered_in_a_year() -> None:
    text = "Marie Curie discovered polonium in 1898."
    assert analyse(text) == TextAnalysis(
        sentences=(Sentence(0, 40, text),),
        entities=(EntityMention("Marie Curie", 0, 0, 11), EntityMention("polonium", 0, 23, 8)),
        definitions=(),
        relations=(Relation("Marie Curie", "discovered", "polonium", 0),),
    )


def test_worked_with_at_adjacent_pairs_first() -> None:
    analysis = analyse("Marie Curie worked with Pierre Curie at the Sorbonne.")
    assert analysis.relations == (
        Relation("Marie Curie", "worked with", "Pierre Curie", 0),
        Relation("Pierre Curie", "at", "Sorbonne", 0),
        Relation("Marie Curie", RELATED_TO, "Sorbonne", 0),
    )


def test_married_and_was_awarded() -> None:
    text = (
        "Pierre Curie married Marie Curie in 1895. "
        "Marie Curie was awarded the Nobel Prize in Chemistry."
    )
    assert analyse(text).relations == (
        Relation("Pierre Curie", "married", "Marie Curie", 0),
        Relation("Marie Curie", "was awarded", "Nobel Prize in Chemistry", 1),
    )


def test_related_to_fallback_and_cap() -> None:
    text = "Henri Becquerel, Pierre Curie and Marie Curie shared the Nobel Prize in Physics."
    expected = (
        Relation("Henri Becquerel", RELATED_TO, "Pierre Curie", 0),
        Relation("Pierre Curie", RELATED_TO, "Marie Curie", 0),
        Relation("Marie Curie", "shared", "Nobel Prize in Physics", 0),
        Relation("Henri Becquerel", RELATED_TO, "Marie Curie", 0),
        Relation("Pierre Curie", RELATED_TO, "Nobel Prize in Physics", 0),
        Relation("Henri Becquerel", RELATED_TO, "Nobel Prize in Physics", 0),
    )
    assert analyse(text).relations == expected
    assert analyse(text, max_relations_per_sentence=2).relations == expected[:2]
    assert analyse(text, max_relations_per_sentence=0).relations == ()


def test_predicate_falls_back_when_words_are_not_function_words() -> None:
    text = "Irène Joliot-Curie 🎉 married Frédéric Joliot. Ève Curie wrote a book."
    relations = analyse(text).relations
    assert relations == (
        Relation("Irène Joliot-Curie", RELATED_TO, "Frédéric Joliot", 0),  # emoji in between
        Relation("Ève Curie", "wrote", "book", 1),
    )
    relations = analyse("Marie Curie, a Polish physicist, moved to Paris.").relations
    assert relations[1] == Relation("physicist", RELATED_TO, "Paris", 0)  # subject is further back


def test_same_label_pairs_are_skipped() -> None:
    assert analyse("Curie met Curie in Paris.").relations == (
        Relation("Curie", "in", "Paris", 0),
        Relation("Curie", RELATED_TO, "Paris", 0),
    )


def test_relative_clause_gives_its_verb() -> None:
    relations = analyse("Marie Curie, who was born in Warsaw, studied at the Sorbonne.").relations
    assert relations[0] == Relation("Marie Curie", "was born in", "Warsaw", 0)
    assert relations[1] == Relation("Warsaw", RELATED_TO, "Sorbonne", 0)


# --- definitions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Henri Becquerel was a French physicist who discovered radioactivity in 1896.",
            Definition(
                "Henri Becquerel", "a French physicist who discovered radioactivity in 1896", 0
            ),
        ),
        (
            "The Radium Institute is a laboratory in Paris.",
            Definition("Radium Institute", "a laboratory in Paris", 0),
        ),
        (
            "Marie Curie was the first woman to win a Nobel Prize!",
            Definition("Marie Curie", "the first woman to win a Nobel Prize", 0),
        ),
        ("X-rays are invisible rays.", Definition("X-rays", "invisible rays", 0)),
        (
            "Polonium is one of the rarest elements.",
            Definition("Polonium", "one of the rarest elements", 0),
        ),
        (
            "Marie Curie, a Polish physicist, moved to Paris.",
            Definition("Marie Curie", "a Polish physicist", 0),
        ),
        (
            "Radium is an element. It is rare in radium ores and radium salts.",
            Definition("radium", "an element", 0),
        ),
    ],
)
def test_definitions(text: str, expected: Definition) -> None:
    assert analyse(text).definitions == (expected,)


@pytest.mark.parametrize(
    "text",
    [
        "Marie Curie was born in Warsaw.",
        "Marie Curie was awarded a prize.",
        "The images were strong, although the plates were dark.",
        "Beta rays were discovered later.",
        "In Paris, a city of light, she worked.",
        "Marie Curie is a physicist",  # no final punctuation: a heading, not prose
    ],
)
def test_not_definitions(text: str) -> None:
    assert analyse(text).definitions == ()


def test_definition_keeps_rare_noun_phrases_of_a_named_entity() -> None:
    assert _labels("Henri Becquerel was a French physicist.") == ["Henri Becquerel", "physicist"]


# --- entities --------------------------------------------------------------------------


def test_names_keep_case_and_connectors() -> None:
    text = "Marie Curie lived in Paris and taught at the University of Paris."
    assert _labels(text) == ["Marie Curie", "Paris", "University of Paris"]
    assert _labels("Pierre Curie won the Nobel Prize in Physics in Stockholm.") == [
        "Pierre Curie",
        "Nobel Prize in Physics",
        "Stockholm",
    ]


def test_titles_months_and_nationalities_are_not_entities() -> None:
    text = "In July 1898, Professor Henri Becquerel and the French physicist Paul Villard met."
    assert _labels(text) == ["Henri Becquerel", "physicist", "Paul Villard"]


def test_possessive_is_stripped_from_the_label_and_the_span() -> None:
    text = "Marie Curie's daughter won the Nobel Prize in Chemistry."
    first = analyse(text).entities[0]
    assert first == EntityMention("Marie Curie", 0, 0, 11)


def test_initials_and_place_abbreviations_join_names() -> None:
    assert _labels("J. J. Thomson met M. Curie in St. Joachimsthal.") == [
        "J. J. Thomson",
        "M. Curie",
        "St. Joachimsthal",
    ]
    assert _labels("Rutherford was born in New Zealand.") == ["Rutherford", "New Zealand"]


def test_sentence_initial_word_mostly_lowercase_is_a_phrase() -> None:
    assert _labels("Radium glows. The radium glows. Becquerel studied radium.") == [
        "radium",
        "radium",
        "Becquerel",
        "radium",
    ]
    text = "Becquerel wrapped a plate. Henri Becquerel saw it. The becquerel is a unit."
    assert _labels(text) == [
        "Becquerel",
        "plate",
        "Henri Becquerel",
        "becquerel",
    ]


def test_noun_phrases_need_frequency_unless_next_to_a_name() -> None:
    text = "It emits rays. This ore emits rays. It emits heat."
    assert _labels(text) == ["rays", "rays"]
    assert _labels(text, min_phrase_frequency=1) == ["rays", "ore", "rays", "heat"]
    assert _labels(text, min_phrase_frequency=3) == []
    assert _labels("Marie Curie measured heat.") == ["Marie Curie", "heat"]


def test_long_lowercase_runs_and_short_labels_are_not_phrases() -> None:
    text = "It has bright blue green glowing salt. It has bright blue green glowing salt. X is x."
    assert _labels(text) == []


def test_headings_give_entities_but_no_relations() -> None:
    analysis = analyse("## Marie Curie and Pierre Curie\nThey married in 1895.")
    assert analysis.sentences == (
        Sentence(3, 28, "Marie Curie and Pierre Curie"),
        Sentence(32, 21, "They married in 1895."),
    )
    assert [entity.label for entity in analysis.entities] == ["Marie Curie", "Pierre Curie"]
    assert analysis.relations == ()


# --- sentence splitting ----------------------------------------------------------------


def test_split_abbreviations_initials_and_decimals() -> None:
    text = (
        "Dr. M. Curie lived on St. Jacques street. It weighed 3.5 g, e.g. in 1902. "
        "J. J. Thomson agreed."
    )
    assert _texts(text) == [
        "Dr. M. Curie lived on St. Jacques street.",
        "It weighed 3.5 g, e.g. in 1902.",
        "J. J. Thomson agreed.",
    ]


def test_split_quotes_and_brackets() -> None:
    text = (
        '"Radium glows," she said. (It was 1898. Or 1899.) '
        "Then they left! Did they? Yes… [See note 3.] Done."
    )
    assert _texts(text) == [
        '"Radium glows," she said.',
        "(It was 1898. Or 1899.)",
        "Then they left!",
        "Did they?",
        "Yes…",
        "[See note 3.]",
        "Done.",
    ]
    quoted = 'She said "It glows." Then she left.'
    assert _texts(quoted) == ['She said "It glows."', "Then she left."]


def test_split_lines_headings_and_lists() -> None:
    text = (
        "Title of a report\nMarie Curie was born in\nWarsaw in 1867. She moved to Paris."
        "\n\n- first item\n- second item."
    )
    assert split_sentences(text) == (
        Sentence(0, 17, "Title of a report"),
        Sentence(18, 39, "Marie Curie was born in\nWarsaw in 1867."),
        Sentence(58, 19, "She moved to Paris."),
        Sentence(81, 10, "first item"),
        Sentence(94, 12, "second item."),
    )


def test_split_empty_and_punctuation_only() -> None:
    assert split_sentences("") == ()
    assert split_sentences(" \n\n --- \n🎉\n") == ()
    assert analyse("") == TextAnalysis((), (), (), ())


# --- invariants ------------------------------------------------------------------------

INVARIANT_TEXTS = [
    "Irène Joliot-Curie 🎉 married Frédéric Joliot in 1926. 🧪 Ève Curie wrote a book.",
    "# Radioactivité\r\n\r\nMaria Skłodowska-Curie était née à Varsovie. Dr. Curie… « Ra »!",
    'He said "<b>{Marie Curie}</b>" and {{radium}}\n<script>alert(1)</script>. '
    'Then {polonium} & "Pierre Curie".',
    "Zero-width\u200bjoiner and\ttabs\u00a0nbsp; Curie's lab. "
    "Ünïcödé Ñame met Ōtani Shōhei in Tōkyō. 🧑‍🔬 works.",
]


@pytest.mark.parametrize("text", INVARIANT_TEXTS)
def test_offsets_index_the_input(text: str) -> None:
    analysis = analyse(text)
    assert analysis.sentences
    for sentence in analysis.sentences:
        assert text[sentence.offset : sentence.offset + sentence.length] == sentence.text
        assert sentence.text == sentence.text.strip()
    for entity in analysis.entities:
        sentence = analysis.sentences[entity.sentence_index]
        assert sentence.offset <= entity.offset
        assert entity.offset + entity.length <= sentence.offset + sentence.length
        surface = " ".join(text[entity.offset : entity.offset + entity.length].split())
        assert surface.lower() == entity.label.lower()
    labels = {entity.label for entity in analysis.entities}
    for relation in analysis.relations:
        assert {relation.subject, relation.object} <= labels
        assert relation.subject != relation.object
    assert analyse(text) == analysis


def test_hostile_strings_stay_data() -> None:
    analysis = analyse(INVARIANT_TEXTS[2])
    assert [entity.label for entity in analysis.entities] == [
        "Marie Curie",
        "radium",
        "script",
        "script",
        "polonium",
        "Pierre Curie",
    ]
    for entity in analysis.entities:
        assert not set(entity.label) & set('<>{}"&\n')
    assert all(relation.predicate == RELATED_TO for relation in analysis.relations)


def test_bad_input_raises_input_error() -> None:
    with pytest.raises(InputError, match="str"):
        analyse(b"Marie Curie")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="max_relations_per_sentence"):
        analyse("x", max_relations_per_sentence=-1)
    with pytest.raises(InputError, match="min_phrase_frequency"):
        analyse("x", min_phrase_frequency=0)


# --- the sample corpus -----------------------------------------------------------------


def test_sample_corpus_connects() -> None:
    paths = [p for p in sorted(CORPUS.glob("*.*")) if p.suffix in (".txt", ".md")]
    paths = [p for p in paths if p.name != "README.md"]
    assert len(paths) == 3
    analyses = [analyse(path.read_text(encoding="utf-8")) for path in paths]
    labels = {entity.label for analysis in analyses for entity in analysis.entities}
    relations = {(r.subject, r.predicate, r.object) for a in analyses for r in a.relations}
    assert len(labels) > 30
    assert len(relations) > 30
    people = {"Marie Curie", "Pierre Curie", "Henri Becquerel", "Irène Joliot-Curie"}
    assert people | {"Radium Institute", "Sorbonne", "Nobel Prize in Physics"} <= labels
    assert all("Marie Curie" in {e.label for e in analysis.entities} for analysis in analyses)
    assert ("Marie Curie", "met", "Pierre Curie") in relations
    assert any(d.label == "Irène Joliot-Curie" for a in analyses for d in a.definitions)


def test_a_name_modifying_a_noun_is_one_entity() -> None:
    analysis = analyse("Marie Curie directed the Curie laboratory. The Nobel committee honoured Becquerel.")
    assert [(r.subject, r.predicate, r.object) for r in analysis.relations] == [
        ("Marie Curie", "directed", "Curie laboratory"),
        ("Nobel committee", "honoured", "Becquerel"),
    ]


def test_a_lone_preposition_links_only_names_or_a_noun_and_its_complement() -> None:
    analysis = analyse("The committee added Marie Curie to the prize. The chair of physics was in Paris.")
    assert [(r.subject, r.predicate, r.object) for r in analysis.relations] == [
        ("committee", "added", "Marie Curie"),
        ("physics", "was in", "Paris"),
    ]
    assert analyse("Rutherford studied radioactivity in Paris.").relations[1].predicate == "in"


def test_generic_nouns_and_loose_pairs_need_more_than_a_neighbouring_name() -> None:
    analysis = analyse("On the evening that Marie Curie won, Becquerel smiled.")
    assert "evening" not in {e.label for e in analysis.entities}
    assert all("evening" not in (r.subject, r.object) for r in analysis.relations)


def test_modal_and_auxiliary_connections_make_no_fact_and_verbs_after_them_no_entity() -> None:
    assert [(r.subject, r.predicate, r.object) for r in analyse(
        "If the connection drops, the Client will attempt to reconnect.").relations if r.predicate != RELATED_TO] == []
    assert "attempt" not in _labels("If the connection drops, the Client will attempt to reconnect.")
    assert analyse("Rust is ideal for systems programming.").relations == (
        Relation("Rust", RELATED_TO, "systems programming", 0),)
    assert _labels("We can't compile Rust without Cargo.") == ["Rust", "Cargo"]
    neutrons = analyse("Neutrons are particles without charge.")
    assert neutrons.relations == () and neutrons.definitions == (Definition("Neutrons", "particles without charge", 0),)
