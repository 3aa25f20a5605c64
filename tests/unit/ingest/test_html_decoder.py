from __future__ import annotations

import pytest

from provgraph.errors import DecodeError
from provgraph.ingest.html_decoder import decode_html

PAGE = """<!DOCTYPE html>
<html><head>
  <title>  Curie
   notes </title>
  <meta charset="utf-8"><style>body { color: red }</style>
  <script>var hidden = "no";</script>
</head>
<body>
<nav hidden><a href="/">Home menu</a></nav>
<h1>Marie  <em>Curie</em></h1>
<p>She discovered <b>polonium</b> &amp; radium.<script>alert("x")</script></p>
<noscript>Enable JavaScript</noscript>
<template><p>template text</p></template>
<h2>Prizes</h2>
<ul><li>Physics, 1903</li><li>Chemistry,<br>1911</li></ul>
<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
<pre>line  one
  line two</pre>
<div>end</div>
</body></html>
"""

EXPECTED = (
    "Marie Curie\n\n"
    "She discovered polonium & radium.\n\n"
    "Prizes\n\n"
    "Physics, 1903\nChemistry,\n1911\n\n"
    "a b\nc d\n\n"
    "line  one\n  line two\n\n"
    "end"
)


def test_visible_text_only() -> None:
    doc = decode_html(PAGE.encode(), name="p.html")
    assert doc.text == EXPECTED
    assert doc.mime_type == "text/html"
    assert doc.title == "Curie notes"


def test_sections_from_headings() -> None:
    doc = decode_html(PAGE.encode(), name="p.html")
    assert [(p.number, p.label) for p in doc.parts] == [(1, "Marie Curie"), (2, "Prizes")]
    assert doc.part_text(doc.parts[0]) == "Marie Curie\n\nShe discovered polonium & radium.\n\n"
    assert doc.part_text(doc.parts[1]).startswith("Prizes\n\nPhysics")
    assert doc.parts[1].offset + doc.parts[1].length == len(doc.text)


def test_preamble_and_title_fallback_to_first_h1() -> None:
    doc = decode_html(b"<p>Lead text</p><h1>Main</h1><p>x</p><h3>Sub</h3><p>y</p>", name="p.html")
    assert doc.title == "Main"
    assert [(p.label, doc.part_text(p)) for p in doc.parts] == [
        ("Preamble", "Lead text\n\n"),
        ("Main", "Main\n\nx\n\n"),
        ("Sub", "Sub\n\ny"),
    ]


def test_unclosed_head_does_not_hide_the_body() -> None:
    doc = decode_html(b"<html><head><title>T</title><p>Body text", name="p.html")
    assert (doc.text, doc.title) == ("Body text", "T")


def test_page_without_visible_text() -> None:
    with pytest.raises(DecodeError) as err:
        decode_html(b"<html><head><title>T</title></head><body><script>x()</script></body></html>", name="s.html")
    assert str(err.value) == "s.html: the HTML page has no visible text"


def test_meta_charset_is_honoured() -> None:
    data = '<meta charset="iso-8859-1"><p>café</p>'.encode("latin-1")
    assert decode_html(data, name="l.html").text == "café"


def test_undecodable_html_names_position() -> None:
    with pytest.raises(DecodeError, match=r"^x\.html: not valid UTF-8 at byte 3 "):
        decode_html(b"<p>\xff</p>", name="x.html")


def test_unicode_and_entities() -> None:
    doc = decode_html("<h1>e&#769;t&eacute; 👩‍🔬</h1><p dir=rtl>مرحبا</p>".encode(), name="u.html")
    assert doc.text == "e\u0301té 👩‍🔬\n\nمرحبا"
