"""Every C0/C1 control and every bidirectional formatting code point, generated (not a sample), through
the neutraliser and the real CLI output paths: a document's text and title, the store (SPARQL tables),
an LLM's answer, and error lines. Each one is shown visibly as ``\\uXXXX``, never raw.

The oracle is independent of the product's list: Unicode's ``Cc`` category (C0, DEL, C1) and the bidi
controls spelled out from UAX #9 (embeddings, overrides, isolates, marks).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from provgraph.explain.neutralise import escape_json, neutralise
from tests.cli_runner import Result, run
from tests.fakes.openai_server import FakeOpenAIServer, by_kind

BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
CONTROLS = [c for c in range(0x10000) if unicodedata.category(chr(c)) == "Cc"]
KEPT = {"\n", "\t"}  # the only controls a terminal may receive (and \r only before \n)
EVERY = [chr(c) for c in CONTROLS + BIDI if chr(c) not in KEPT]
assert len(EVERY) == 65 - 2 + 12  # 65 Cc code points (C0 32, DEL, C1 32) less two, 12 bidi
UNSAFE = set(EVERY)
NO_NUL = [c for c in EVERY if c != "\x00"]  # a document holding NUL is refused as binary
LINE_BREAKS = set("\r\x0b\x0c\x1c\x1d\x1e\x85")  # str.splitlines() breaks a line at these


def visible(c: str) -> str:
    return f"\\u{ord(c):04x}"


def raw(text: str) -> list[str]:
    """The code points of ``text`` a terminal would act on (``\r`` counts unless it ends a line with ``\n``)."""
    return [c for i, c in enumerate(text) if c in UNSAFE and not (c == "\r" and text[i + 1:i + 2] == "\n")]


def clean(r: Result) -> Result:
    assert raw(r.out) == [] and raw(r.err) == [], sorted({hex(ord(c)) for c in raw(r.out) + raw(r.err)})
    assert "Traceback" not in r.err
    return r


@pytest.mark.parametrize("c", EVERY, ids=[f"U+{ord(c):04X}" for c in EVERY])
def test_each_code_point_is_shown_visibly(c: str) -> None:
    assert neutralise(f"a{c}b") == f"a{visible(c)}b"
    assert raw(escape_json(json.dumps(f"a{c}b"))) == [] and json.loads(escape_json(json.dumps(c))) == c


def test_newline_tab_and_crlf_stay() -> None:
    assert neutralise("a\nb\tc\r\nd") == "a\nb\tc\r\nd"
    assert neutralise("a\rb") == "a\\u000db"


def hostile_text() -> str:
    """Every code point but NUL, each between words, in prose long enough to pass the binary sniff."""
    words = " ".join(f"w{ord(c):04x}{c}x" for c in NO_NUL)
    filler = "Marie Curie discovered polonium in 1898 in Paris. " * 12
    return f"# Title {''.join(c for c in NO_NUL if c not in LINE_BREAKS)} end\n\n{filler}\n\n{words}.\n\n{filler}\n"


@pytest.fixture
def loaded(tmp_path: Path) -> Path:
    path = tmp_path / "every.md"
    path.write_text(hostile_text(), encoding="utf-8")
    clean(run("load", str(path), "-C", "ev", "--llm", "none"))
    return path


def test_a_documents_title_and_text_through_every_printing_command(loaded: Path) -> None:
    shown = clean(run("documents", "show", "every.md", "-C", "ev")).out
    for c in NO_NUL:
        if c not in LINE_BREAKS:
            assert visible(c) in shown, hex(ord(c))
    clean(run("documents", "list", "-C", "ev"))
    tree = clean(run("provenance", "every.md", "-C", "ev")).out
    assert visible("\u202a") in tree and visible("\x9b") in tree
    for command in ("document-rag", "graph-rag"):
        r = clean(run(command, "-q", "What did Marie Curie discover?", "-C", "ev", "-x", "--llm", "none"))
        assert r.out.strip()
    sid = json.loads(clean(run("traces", "list", "-C", "ev", "--format", "json")).out)[0]["session_id"]
    clean(run("traces", "show", sid, "-C", "ev", "--show-provenance"))
    clean(run("traces", "list", "-C", "ev"))


def test_store_values_through_sparql_tables(tmp_path: Path) -> None:
    dump = tmp_path / "q.nq"  # one literal per code point, written with N-Quads' own escapes (NUL included)
    dump.write_text("".join(f'<urn:x:s> <urn:x:p> "{ord(c):04x}\\u{ord(c):04X}" <urn:x:g> .\n' for c in EVERY),
                    encoding="utf-8")
    assert clean(run("import", str(dump), "-C", "st")).code == 0
    query = "SELECT ?o WHERE { GRAPH ?g { <urn:x:s> <urn:x:p> ?o } } ORDER BY ?o"
    table = clean(run("sparql", query, "-C", "st")).out
    for c in EVERY:
        assert f"{ord(c):04x}{visible(c)}" in table, hex(ord(c))
    csv = clean(run("sparql", query, "-C", "st", "--format", "csv")).out
    assert all(f"{ord(c):04x}{visible(c)}" in csv for c in EVERY)
    r = clean(run("sparql", query, "-C", "st", "--format", "json"))
    assert sorted(b["o"]["value"] for b in json.loads(r.out)["results"]["bindings"]) == sorted(
        f"{ord(c):04x}{c}" for c in EVERY)


def test_an_llm_answer_holding_every_code_point(loaded: Path, llm_server: FakeOpenAIServer) -> None:
    answer = "Polonium " + "".join(f"{ord(c):04x}{c}" for c in EVERY) + " [1]."
    llm_server.script = by_kind({"complete": answer, "stream": answer})
    r = clean(run("document-rag", "-q", "What did Marie Curie discover?", "-C", "ev"))
    flat = "".join(r.out.split())
    for c in EVERY:
        assert f"{ord(c):04x}{visible(c)}" in flat, hex(ord(c))


@pytest.mark.parametrize("c", NO_NUL, ids=[f"U+{ord(c):04X}" for c in NO_NUL])
def test_an_error_line_naming_a_file(tmp_path: Path, c: str) -> None:
    r = clean(run("load", str(tmp_path / f"x{c}y.txt")))
    assert r.code != 0 and f"x{visible(c)}y.txt: no such file" in r.err
