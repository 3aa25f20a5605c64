from __future__ import annotations

from pathlib import Path

import pytest

from provgraph.errors import DecodeError, InputError
from provgraph.ingest.decoders import DEFAULT_MAX_BYTES, decode_bytes, decode_file, mime_type_for, read_file

SUPPORTED = ".txt .text .md .markdown .pdf .html .htm"


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("a.txt", "text/plain"),
        ("a.TEXT", "text/plain"),
        ("a.md", "text/markdown"),
        ("a.Markdown", "text/markdown"),
        ("a.pdf", "application/pdf"),
        ("a.HTML", "text/html"),
        ("a.htm", "text/html"),
    ],
)
def test_suffix_dispatch(name: str, mime: str) -> None:
    assert mime_type_for(Path(name)) == mime


def test_decode_file_by_suffix(tmp_path: Path, three_page_pdf: bytes) -> None:
    (tmp_path / "n.md").write_text("# T\nbody\n", encoding="utf-8")
    (tmp_path / "p.htm").write_text("<title>X</title><p>hi</p>", encoding="utf-8")
    (tmp_path / "d.PDF").write_bytes(three_page_pdf)
    (tmp_path / "t.txt").write_text("plain", encoding="utf-8")
    assert decode_file(tmp_path / "n.md").parts[0].label == "T"
    assert decode_file(tmp_path / "p.htm").title == "X"
    assert len(decode_file(tmp_path / "d.PDF").parts) == 3
    assert decode_file(tmp_path / "t.txt").text == "plain"


def test_unsupported_suffix(tmp_path: Path) -> None:
    path = tmp_path / "report.docx"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(InputError) as err:
        decode_file(path)
    assert str(err.value) == f"{path}: unsupported file type (suffix '.docx'); supported: {SUPPORTED}"


def test_no_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unsupported file type \(no suffix\); supported: "):
        decode_file(tmp_path / "README")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "gone.txt"
    with pytest.raises(InputError) as err:
        decode_file(path)
    assert str(err.value) == f"{path}: no such file"
    assert not isinstance(err.value, DecodeError)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "dir.md"
    folder.mkdir()
    with pytest.raises(InputError, match=r"dir\.md: is a directory, not a regular file; only regular files are loaded$"):
        decode_file(folder)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_bytes(b"")
    with pytest.raises(DecodeError) as err:
        decode_file(path)
    assert str(err.value) == f"{path}: the file is empty"


def test_binary_renamed_to_txt(tmp_path: Path) -> None:
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(DecodeError) as err:
        decode_file(path)
    assert str(err.value) == f"{path}: looks like binary data (a PNG image), not text; check the file type"


def test_undecodable_file_names_path_and_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok line\n" * 3 + b"\xc3\x28 broken")
    with pytest.raises(DecodeError) as err:
        decode_file(path)
    assert str(err.value) == (
        f"{path}: not valid UTF-8 at byte 24 (invalid continuation byte: c3 28 20 62); convert the file to UTF-8"
    )


def test_too_large_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputError) as err:
        decode_file(path, max_bytes=10)
    assert str(err.value) == f"{path}: file too large (11 bytes; the limit is 10); split it or raise the limit"


def test_fifty_megabyte_text_decodes_under_default_limit(tmp_path: Path) -> None:
    line = "The quick brown fox jumps over the lazy dog; naïve café, 👩‍🔬.\n"
    block = line * 1000
    data = block.encode() * (50_000_000 // len(block.encode()))
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    assert 49_000_000 < len(data) < DEFAULT_MAX_BYTES
    doc = decode_file(path)
    assert len(doc.text) == len(block) * (50_000_000 // len(block.encode()))
    assert doc.text[: len(line)] == line


def test_decode_bytes_by_mime_type() -> None:
    doc = decode_bytes(b"<p>x</p>", mime_type="text/html; charset=utf-8", name="mem")
    assert (doc.text, doc.mime_type) == ("x", "text/html")
    assert decode_bytes(b"# A", mime_type="text/x-markdown", name="mem").mime_type == "text/markdown"


def test_decode_bytes_unsupported_mime_type() -> None:
    with pytest.raises(InputError) as err:
        decode_bytes(b"x", mime_type="application/msword", name="w.doc")
    assert str(err.value) == (
        "w.doc: unsupported MIME type 'application/msword'; supported: text/plain, text/markdown, application/pdf,"
        " text/html"
    )


def test_decode_bytes_size_guard() -> None:
    with pytest.raises(InputError, match=r"^m: file too large \(4 bytes; the limit is 3\)"):
        decode_bytes(b"abcd", mime_type="text/plain", name="m", max_bytes=3)


def test_read_file_returns_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "any.bin"
    path.write_bytes(b"\x00\x01")
    assert read_file(path) == b"\x00\x01"
