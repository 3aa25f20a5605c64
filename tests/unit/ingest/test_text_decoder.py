from __future__ import annotations

import pytest

from provgraph.errors import DecodeError, InputError
from provgraph.ingest.text_decoder import decode_text


def test_plain_text_has_no_parts_and_lf_line_ends() -> None:
    doc = decode_text("\ufeffFirst line\r\nsecond\rthird\n".encode(), name="a.txt")
    assert doc.text == "First line\nsecond\nthird\n"
    assert doc.mime_type == "text/plain"
    assert doc.title is None
    assert doc.parts == ()
    assert doc.warnings == ()


def test_unicode_text_is_kept_exactly() -> None:
    text = "e\u0301te\u0301 👩‍🔬 مرحبا بالعالم שלום"
    assert decode_text(text.encode(), name="u.txt").text == text


def test_empty_file() -> None:
    with pytest.raises(DecodeError) as err:
        decode_text(b"", name="a.txt")
    assert str(err.value) == "a.txt: the file is empty"


def test_whitespace_only_file_is_empty() -> None:
    with pytest.raises(DecodeError, match=r"^a\.txt: the file is empty \(only whitespace\)$"):
        decode_text(b" \n\t\r\n", name="a.txt")


def test_nul_bytes_look_like_binary() -> None:
    with pytest.raises(DecodeError) as err:
        decode_text(b"abc\x00\x01\x02def", name="data.txt")
    assert str(err.value) == "data.txt: looks like binary data (NUL bytes), not text; check the file type"
    assert isinstance(err.value, InputError)


def test_renamed_pdf_looks_like_binary() -> None:
    with pytest.raises(DecodeError, match=r"looks like binary data \(a PDF\)"):
        decode_text(b"%PDF-1.7\n1 0 obj\n", name="paper.txt")


def test_control_bytes_look_like_binary() -> None:
    with pytest.raises(DecodeError, match=r"looks like binary data \(control bytes\)"):
        decode_text(bytes(range(1, 9)) * 100, name="blob.txt")


def test_undecodable_utf8_names_file_and_byte_position() -> None:
    with pytest.raises(DecodeError) as err:
        decode_text(b"caf\xe9 au lait", name="latin1.txt")
    assert str(err.value) == (
        "latin1.txt: not valid UTF-8 at byte 3 (invalid continuation byte: e9 20 61 75); convert the file to UTF-8"
    )
