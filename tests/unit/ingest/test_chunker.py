from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provgraph.errors import InputError
from provgraph.ingest import chunker
from provgraph.ingest.chunker import chunk_text
from provgraph.ingest.decoders import decode_bytes
from provgraph.ingest.types import ChunkSpan, DecodedDocument


def check_chunks(parent: str, chunks: tuple[ChunkSpan, ...], size: int, overlap: int) -> None:
    """The chunker's contract: exact slices, bounded size, order, coverage, bounded overlap."""
    covered = bytearray(len(parent))
    previous: ChunkSpan | None = None
    for i, c in enumerate(chunks):
        assert c.index == i
        assert parent[c.offset : c.offset + c.length] == c.text
        assert 0 < c.length <= size
        assert not c.text[0].isspace() and not c.text[-1].isspace()
        if previous is not None:
            assert c.offset > previous.offset
            assert c.offset + c.length > previous.offset + previous.length
            assert c.offset >= previous.offset + previous.length - overlap
        covered[c.offset : c.offset + c.length] = b"\x01" * c.length
        previous = c
    missed = [i for i, ch in enumerate(parent) if not ch.isspace() and not covered[i]]
    assert missed == []


def test_size_must_be_positive() -> None:
    with pytest.raises(InputError) as err:
        chunk_text("abc", size=0, overlap=0)
    assert str(err.value) == "chunk size must be greater than 0, got 0"


@pytest.mark.parametrize("overlap", [10, 11, -1])
def test_overlap_must_be_below_size(overlap: int) -> None:
    with pytest.raises(InputError) as err:
        chunk_text("abc", size=10, overlap=overlap)
    assert str(err.value) == f"chunk overlap must be at least 0 and less than the chunk size (10), got {overlap}"


def test_blank_text_has_no_chunks() -> None:
    assert chunk_text("") == ()
    assert chunk_text(" \n\t ") == ()


def test_short_text_is_one_chunk_without_surrounding_whitespace() -> None:
    assert chunk_text("\n\n  Hello world.  \n") == (ChunkSpan(index=0, offset=4, length=12, text="Hello world."),)


def test_prefers_paragraph_breaks() -> None:
    text = "A" * 30 + " end.\n\n" + "B" * 30 + " end."
    chunks = chunk_text(text, size=60, overlap=0)
    assert [c.text for c in chunks] == ["A" * 30 + " end.", "B" * 30 + " end."]
    assert chunks[1].offset == 37


def test_then_line_then_sentence_then_word_then_hard() -> None:
    line = chunk_text("aaaa bbbb.\ncccc dddd", size=14, overlap=0)
    assert [c.text for c in line] == ["aaaa bbbb.", "cccc dddd"]
    sentence = chunk_text("Aaa bb. Cc dd ee ff", size=12, overlap=0)
    assert [c.text for c in sentence] == ["Aaa bb.", "Cc dd ee ff"]
    word = chunk_text("aaa bbb ccc ddd", size=9, overlap=0)
    assert [c.text for c in word] == ["aaa bbb", "ccc ddd"]
    hard = chunk_text("x" * 25, size=10, overlap=0)
    assert [(c.offset, c.length) for c in hard] == [(0, 10), (10, 10), (20, 5)]


def test_overlap_starts_at_a_word() -> None:
    text = " ".join(f"w{i:03d}" for i in range(200))  # 5-character tokens
    chunks = chunk_text(text, size=100, overlap=20)
    check_chunks(text, chunks, 100, 20)
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        shared = prev.offset + prev.length - nxt.offset
        assert 15 <= shared <= 20
        assert text[nxt.offset - 1] == " "


def test_hard_overlap_without_spaces() -> None:
    chunks = chunk_text("x" * 100, size=40, overlap=10)
    assert [(c.offset, c.length) for c in chunks] == [(0, 40), (30, 40), (60, 40)]


def test_hard_split_keeps_combining_marks_and_emoji_sequences_whole() -> None:
    accented = "e\u0301" * 30
    for c in chunk_text(accented, size=7, overlap=0):
        assert c.text[0] == "e"
    family = "👨‍👩‍👧" * 10  # 5 code points each
    pieces = chunk_text(family, size=12, overlap=0)
    assert [c.text for c in pieces][:2] == ["👨‍👩‍👧" * 2, "👨‍👩‍👧" * 2]


def test_hard_cut_never_moves_back_into_the_overlap() -> None:
    text = "مرحبا" + "e\u0301"
    check_chunks(text, chunk_text(text, size=2, overlap=1), 2, 1)


def test_default_size_and_overlap() -> None:
    text = ("Sentence number one is here. " * 20 + "\n\n") * 20
    chunks = chunk_text(text)
    check_chunks(text, chunks, 2000, 100)
    assert all(len(c.text) > 500 for c in chunks[:-1])


def _scanned_characters(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Characters of ``text`` the chunker's searches may look at: the sum of every search window."""
    scanned = 0

    def counted(name: str, width: Callable[..., int]) -> None:
        real = getattr(chunker, name)

        def wrapper(*args: Any) -> int:
            nonlocal scanned
            result = real(*args)
            scanned += width(*args, result)
            return result

        monkeypatch.setattr(chunker, name, wrapper)

    counted("_split_point", lambda text, lo, hi, code, result: hi + 2 - lo)
    counted("_next_start", lambda text, start, end, overlap, result: max(result, end) - start)
    counted("_non_space_from", lambda text, pos, result: result - pos + 1)
    chunks = chunk_text(text, size=500, overlap=50)
    check_chunks(text, chunks, 500, 50)
    monkeypatch.undo()
    return scanned


def test_long_input_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    block = "word " * 180 + "end.\n\n"
    small = _scanned_characters(block * 500, monkeypatch)  # ~0.45 MB
    large = _scanned_characters(block * 2000, monkeypatch)  # ~1.8 MB
    assert small > 0
    assert 3.9 <= large / small <= 4.1  # four times the text, four times the work: no quadratic search


# -- property test ------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        " ", "  ", "\n", "\n\n", "\t", ". ", "! ", "? ", "。", "؟ ",
        "e\u0301", "a\u0308\u0323", "👩‍🔬", "👍🏽", "🇫🇷", "x\u200d", "\ufe0f",
        "مرحبا", "שלום", "\u200f", "word", "Über", "naïve", "日本語",
    ]
)  # fmt: skip
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=120).map("".join)


@settings(max_examples=300, deadline=None, database=None)
@given(text=_TEXTS, size=st.integers(1, 60), data=st.data())
def test_chunks_are_exact_and_cover_everything(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    check_chunks(text, chunk_text(text, size=size, overlap=overlap), size, overlap)


# -- chunking what every decoder produces ---------------------------------------------------------

_UNICODE = "Café naïve e\u0301te\u0301 👩‍🔬👍🏽 مرحبا بالعالم שלום עולם 日本語の文。"


def _pdf(make_pdf: Callable[..., bytes]) -> bytes:
    return make_pdf([[f"Line {i} of page {p}: Marie Curie, radium." for i in range(20)] for p in range(3)] + [[]])


@pytest.mark.parametrize("kind", ["text", "markdown", "html", "pdf"])
def test_chunk_every_decoder_output(kind: str, make_pdf: Callable[..., bytes]) -> None:
    body = "\n\n".join(f"Paragraph {i}. {_UNICODE} " * 3 for i in range(8))
    sources = {
        "text": (body.encode(), "text/plain"),
        "markdown": (f"# Title\n\n{body}\n\n## Second\n\n{body}\n".encode(), "text/markdown"),
        "html": (f"<h1>Title</h1><p>{body}</p><h2>Second</h2><p>{body}</p>".encode(), "text/html"),
        "pdf": (_pdf(make_pdf), "application/pdf"),
    }
    data, mime = sources[kind]
    doc: DecodedDocument = decode_bytes(data, mime_type=mime, name=f"x.{kind}")
    parents = [doc.part_text(p) for p in doc.parts] or [doc.text]
    offsets = [p.offset for p in doc.parts] or [0]
    total = 0
    for parent, base in zip(parents, offsets, strict=True):
        chunks = chunk_text(parent, size=120, overlap=20)
        check_chunks(parent, chunks, 120, 20)
        for c in chunks:
            assert doc.text[base + c.offset : base + c.offset + c.length] == c.text
        total += len(chunks)
    assert total > 3


DOCS = Path(__file__).resolve().parents[2] / "data" / "software_docs"


@pytest.mark.parametrize("name", ["rust_book_hello_cargo.md", "curl_faq.md", "curl_manual.md"])
def test_a_chunk_never_starts_inside_a_code_block_that_fits(name: str) -> None:
    """The overlap of the next chunk starts after a code block, not in it, and blocks are cut only when too long."""
    text = (DOCS / name).read_text(encoding="utf-8")
    fences = [m.start() for m in re.finditer(r"(?m)^(?:```|~~~)", text)]
    blocks = list(zip(fences[::2], fences[1::2]))  # these documents open and close every fence
    for size, overlap in ((600, 100), (1000, 200)):
        chunks = chunk_text(text, size=size, overlap=overlap)
        check_chunks(text, chunks, size, overlap)
        for c in chunks:
            inside = [(lo, hi) for lo, hi in blocks if lo < c.offset <= hi and hi - lo < size // 2]
            assert inside == [], c.text[:80]
