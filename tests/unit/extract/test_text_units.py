"""Clean units of text on real software documentation: wrapped sentences, code, inline code, facts.

The documents are published Markdown nobody on the project wrote (tests/data/software_docs/SOURCES.md).
Where code is, the tests find out by their own plain reading (fence lines toggle, four-space indents),
not by the code under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from provgraph.extract.clean_text import blank_markup, strip_markers
from provgraph.extract.nlp import analyse, split_sentences
from provgraph.extract.nlp_code import code_blocks
from provgraph.extract.nlp_lexicon import PREPOSITIONS, STOP_WORDS
from provgraph.ingest.chunker import chunk_text
from provgraph.ingest.markdown_decoder import decode_markdown

DOCS = Path(__file__).resolve().parents[2] / "data" / "software_docs"


def _doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Lines inside ``` / ~~~ fences (fence lines included), and lines indented four spaces after a
    blank line or after such a line (an indented line right after text continues that text)."""
    spans, fence, pos, previous = [], "", 0, ""
    for line in text.split("\n"):
        marks = re.match(r"(`{3,}|~{3,})", line)
        indented = line.startswith("    ") and (not previous.strip() or bool(spans and spans[-1][1] == pos - 1))
        if fence or marks or indented:
            spans.append((pos, pos + len(line)))
        if marks and not fence:
            fence = marks.group(1)[0]
        elif marks and line.strip() == line.strip()[0] * len(line.strip()) and line[0] == fence:
            fence = ""
        pos += len(line) + 1
        previous = line
    return spans


def _chunks(name: str, size: int = 2000) -> list[str]:
    decoded = decode_markdown((DOCS / name).read_bytes(), name=name)
    return [c.text for part in decoded.parts for c in chunk_text(decoded.part_text(part), size=size, overlap=100)]


KEYWORDS_SENTENCE = (
    "As such, they cannot be used as identifiers (except\n"
    "as raw identifiers, as we discuss in the [“Raw\n"
    "Identifiers”][raw-identifiers]<!-- ignore --> section)."
)


@pytest.mark.parametrize("clean", [False, True], ids=["raw", "markup-blanked"])
def test_a_hard_wrapped_sentence_is_one_sentence_with_its_subject(clean: bool) -> None:
    text = _doc("rust_book_keywords.md")
    analysed = blank_markup(text) if clean else text
    sentences = split_sentences(analysed)
    assert all(analysed[s.offset : s.offset + s.length] == s.text for s in sentences)
    start = text.index(KEYWORDS_SENTENCE)
    found = [s for s in sentences if s.offset <= start < s.offset + s.length]
    assert [(s.offset, s.length) for s in found] == [(start, len(KEYWORDS_SENTENCE))]
    assert strip_markers(text[start : start + len(KEYWORDS_SENTENCE)]) == (
        "As such, they cannot be used as identifiers (except as raw identifiers, as we discuss in the "
        "“Raw Identifiers” section).")


def test_a_wrapped_quotation_is_one_sentence_and_quotes_without_its_marks() -> None:
    text = _doc("rust_book_hello_cargo.md")
    quoted = [strip_markers(s.text) for s in split_sentences(blank_markup(text)) if "different version" in s.text]
    assert quoted == ["You can change `cargo new` to use a different version control system or no version "
                      "control system by using the `--vcs` flag."]


def test_titles_list_items_table_rows_and_headings_still_end_units() -> None:
    text = ("Early life\nCurie was born in Warsaw. She\nstudied in Paris.\n"
            "- one item\n- two items\n| a | b |\n| c | d |\nLast words\n===\n# Heading\nText.")
    assert [s.text for s in split_sentences(text)] == [
        "Early life", "Curie was born in Warsaw.", "She\nstudied in Paris.", "one item", "two items",
        "| a | b |", "| c | d |", "Last words", "Heading", "Text."]


@pytest.mark.parametrize("name", ["rust_book_hello_cargo.md", "curl_faq.md", "curl_manual.md"],
                         ids=["fenced-with-info-string", "tilde-fence", "indented"])
@pytest.mark.parametrize("clean", [False, True], ids=["raw", "markup-blanked"])
def test_code_never_becomes_prose(name: str, clean: bool) -> None:
    for size in (2000, 700):  # the whole section, and chunks that cut near or through code blocks
        for chunk in _chunks(name, size):
            code = _code_spans(chunk)
            analysed = blank_markup(chunk) if clean else chunk
            for s in split_sentences(analysed):
                inside = [chunk[lo:hi] for lo, hi in code if lo < s.offset + s.length and s.offset < hi]
                assert inside == [], s.text


def test_code_blocks_are_units_of_their_own_without_fences_or_info_string() -> None:
    cargo = [(b.info, b.text) for b in code_blocks(_doc("rust_book_hello_cargo.md"))]
    assert cargo[0] == ("console", "$ cargo --version")
    assert next(text for info, text in cargo if info == "toml").startswith('[package]\nname = "hello_cargo"')
    faq = [b for b in code_blocks(_doc("curl_faq.md")) if b.info == "c"]
    assert faq[0].text.startswith("/* store data this struct */\nstruct MemoryStruct {")
    manual = code_blocks(_doc("curl_manual.md"))
    assert manual[0].info == "" and manual[0].text == "curl https://www.example.com/"


def test_a_text_cut_out_inside_a_fence_knows_its_code() -> None:
    text = _doc("rust_book_hello_cargo.md")
    cut = text[text.index('name = "hello_cargo"') :]  # starts inside the ```toml block
    first = code_blocks(cut)[0]
    assert (first.offset, first.info) == (0, "") and first.text.endswith("[dependencies]")
    assert not any("edition" in s.text and "2024" in s.text for s in split_sentences(cut))


@pytest.mark.parametrize("clean", [False, True], ids=["raw", "markup-blanked"])
def test_inline_code_keeps_its_characters(clean: bool) -> None:
    text = _doc("curl_manual.md")
    start = text.index("curl automatically tries to read")
    sentence = next(s for s in split_sentences(blank_markup(text) if clean else text) if s.offset == start)
    assert strip_markers(sentence.text) == (
        "curl automatically tries to read the `.curlrc` file (or `_curlrc` file on Microsoft Windows systems) "
        "from the user's home directory on startup.")
    wrapped = _doc("rust_book_hello_cargo.md")
    quote = next(strip_markers(s.text) for s in split_sentences(blank_markup(wrapped)) if "not found" in s.text)
    assert "such as `command not found`, look at" in quote
    assert blank_markup("run `__init__` on `a[1]`") == "run `__init__` on `a[1]`"


def test_blanked_markup_never_indents_a_line_into_a_code_block() -> None:
    text = "[18] Rowell (1962), 14.\n\n[19] Eck (2003), 9."
    assert [strip_markers(s.text) for s in split_sentences(blank_markup(text))] == [
        "Rowell (1962), 14.", "Eck (2003), 9."]


def test_no_fact_has_a_modal_auxiliary_or_pronoun_predicate() -> None:
    text = _doc("curl_manual.md")
    start = text.index("The server can also specify for what path")
    paragraph = text[start : text.index("\n\n", start)]  # "... when the cookie\nshould expire ..."
    facts = {(r.subject, r.predicate, r.object) for r in analyse(blank_markup(paragraph)).relations}
    assert not any(o == "expire" or p == "should" for _, p, o in facts), facts
    for name in ("curl_manual.md", "curl_faq.md", "rust_book_hello_cargo.md"):
        for chunk in _chunks(name):
            for r in analyse(blank_markup(chunk)).relations:
                assert not all(w in STOP_WORDS and w not in PREPOSITIONS for w in r.predicate.split()), r


def test_no_entity_comes_from_code() -> None:
    for name in ("curl_manual.md", "curl_faq.md", "rust_book_hello_cargo.md"):
        for chunk in _chunks(name):
            clean = blank_markup(chunk)
            code = _code_spans(chunk) + [m.span() for m in re.finditer(r"`(?:[^`\n]|\n(?!\s*\n))+`", chunk)]
            for m in analyse(clean).entities:
                assert not any(lo < m.offset + m.length and m.offset < hi for lo, hi in code), m
