from __future__ import annotations

from provgraph.ingest.markdown_decoder import decode_markdown

SOURCE = """Intro line before any heading.

# Curie Notes

Body of the top section.

## Early life ##

Born in Warsaw.

```python
# not a heading, inside a fence
```

Discoveries
-----------

Polonium and radium.

### Nobel prizes
1903 and 1911.
"""


def test_sections_follow_headings_with_exact_offsets() -> None:
    doc = decode_markdown(SOURCE.encode(), name="n.md")
    assert doc.text == SOURCE
    assert doc.mime_type == "text/markdown"
    assert doc.title == "Curie Notes"
    got = [(p.kind, p.number, p.label) for p in doc.parts]
    assert got == [
        ("section", 1, "Preamble"),
        ("section", 2, "Curie Notes"),
        ("section", 3, "Early life"),
        ("section", 4, "Discoveries"),
        ("section", 5, "Nobel prizes"),
    ]
    texts = [doc.part_text(p) for p in doc.parts]
    assert texts[0] == "Intro line before any heading.\n\n"
    assert texts[1] == "# Curie Notes\n\nBody of the top section.\n\n"
    assert texts[2].startswith("## Early life ##\n") and "# not a heading" in texts[2]
    assert texts[3] == "Discoveries\n-----------\n\nPolonium and radium.\n\n"
    assert texts[4] == "### Nobel prizes\n1903 and 1911.\n"
    # sections tile the text: no gaps, no overlap
    assert [p.offset for p in doc.parts] == [0] + [p.offset + p.length for p in doc.parts[:-1]]
    assert doc.parts[-1].offset + doc.parts[-1].length == len(doc.text)


def test_no_preamble_when_text_starts_with_heading() -> None:
    doc = decode_markdown(b"# A\nx\n# B\ny", name="n.md")
    assert [(p.label, p.offset, p.length) for p in doc.parts] == [("A", 0, 6), ("B", 6, 5)]


def test_markdown_without_headings_has_no_parts() -> None:
    doc = decode_markdown(b"just a paragraph\n\nand another", name="n.md")
    assert doc.parts == ()
    assert doc.title is None


def test_front_matter_title_and_no_false_heading() -> None:
    source = "---\ntitle: \"Field notes\"\nauthor: M\n---\n\n# Chapter\ntext\n"
    doc = decode_markdown(source.encode(), name="n.md")
    assert doc.title == "Field notes"
    assert [p.label for p in doc.parts] == ["Preamble", "Chapter"]
    assert doc.part_text(doc.parts[1]) == "# Chapter\ntext\n"


def test_thematic_breaks_and_lists_are_not_setext_headings() -> None:
    source = "para\n\n---\n\n- item\n---\n\nline one\nline two\n---\n\n#hashtag\n    # indented code\n"
    doc = decode_markdown(source.encode(), name="n.md")
    assert doc.parts == ()


def test_crlf_source_is_normalised_and_offsets_still_exact() -> None:
    doc = decode_markdown(b"# T\r\nbody\r\n## U\r\nmore\r\n", name="n.md")
    assert doc.text == "# T\nbody\n## U\nmore\n"
    assert [doc.part_text(p) for p in doc.parts] == ["# T\nbody\n", "## U\nmore\n"]


def test_unicode_headings() -> None:
    source = "# Café 👩‍🔬\nnaïve e\u0301\n## مرحبا\nשלום עולם\n"
    doc = decode_markdown(source.encode(), name="u.md")
    assert [p.label for p in doc.parts] == ["Café 👩‍🔬", "مرحبا"]
    assert doc.part_text(doc.parts[1]) == "## مرحبا\nשלום עולם\n"
