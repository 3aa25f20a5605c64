"""Markup-free extractor text: same length, same offsets, footnote markers end sentences."""

from __future__ import annotations

from provgraph.extract.clean_text import blank_markup, strip_markers
from provgraph.extract.nlp import analyse, split_sentences


def test_markdown_emphasis_links_and_footnotes_become_spaces_of_the_same_length() -> None:
    text = "The _Le Monde_ paper and **Nature** ran [a story](https://example.org/x) on it.[8][9] Then `x` fell."
    clean = blank_markup(text)
    assert len(clean) == len(text)
    link_tail = " " * len("](https://example.org/x)")
    assert clean == f"The  Le Monde  paper and   Nature   ran  a story{link_tail} on it.       Then `x` fell."
    start = clean.index("Le Monde")
    assert text[start : start + len("Le Monde")] == "Le Monde"  # the offset map is the identity


def test_footnote_markers_split_two_sentences_glued_by_them() -> None:
    text = "Radium was isolated in 1902.[8][9] Curie then measured its atomic weight."
    assert [s.text for s in split_sentences(text)] == [text]  # glued without cleaning
    sentences = split_sentences(blank_markup(text))
    assert [text[s.offset : s.offset + s.length] for s in sentences] == [
        "Radium was isolated in 1902.", "Curie then measured its atomic weight."]


def test_entities_of_marked_up_text_carry_no_markup() -> None:
    labels = {m.label for m in analyse(blank_markup("The newspaper _Le Monde_ praised Marie Curie.[3]")).entities}
    assert "Le Monde" in labels and not any("_" in label or "[" in label for label in labels)


def test_quotes_lose_footnote_markers_but_keep_ordinary_brackets() -> None:
    assert strip_markers("It glows [3] in the dark.[4][5]") == "It glows in the dark."
    assert strip_markers("Polonium (element 84) [sic] glows.") == "Polonium (element 84) [sic] glows."
