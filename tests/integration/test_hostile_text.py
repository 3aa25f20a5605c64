"""A hostile-text corpus through every printing command: nothing from a document, an LLM or the store
reaches the terminal raw (C0/C1 controls, ANSI/OSC sequences, DEL, bidi overrides); JSON escapes them."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from provgraph.retrieval.edge_select import edge_id
from tests.cli_runner import Result, run
from tests.fakes.openai_server import FakeOpenAIServer, by_kind
from tests.unit.agent.conftest import step as agent_step

pytestmark = pytest.mark.fault  # part of the fault-injection suite (`pytest -m fault`) too

OSC = "\x1b]0;pwned\x07"  # sets the window title
CLEAR = "\x1b[2J\x1b[31m"  # clears the screen, turns red
TITLE = f"Evil {OSC} title \u202egnp.exe"
TEXT = (f"# {TITLE}\n\nMarie Curie discovered polonium {CLEAR}in 1898\x9b. "
        f"Marie Curie was born in Warsaw \x1b[8mhidden\x7f \u2066isolate\u2069.\n")
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
Q = "Who discovered polonium?"


def raw_controls(text: str, *, csv: bool = False) -> list[str]:
    """Characters that could drive a terminal (an oracle independent of the product's neutraliser)."""
    if csv:
        text = text.replace("\r\n", "\n")
    return [c for c in text if c in BIDI or (unicodedata.category(c) == "Cc" and c not in "\n\t")]


def clean(r: Result, *, csv: bool = False) -> Result:
    assert raw_controls(r.out, csv=csv) == [] and raw_controls(r.err) == [], (r.out, r.err)
    assert "Traceback" not in r.err
    return r


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "evil.md"
    path.write_text(TEXT, encoding="utf-8")
    clean(run("load", str(path), "-C", "h"))
    return path


def test_documents_list_show_and_provenance(hostile: Path) -> None:
    listed = clean(run("documents", "list", "-C", "h"))
    # shown visibly; the listing cuts a long title to the width left (whole in `documents show`, below)
    assert "evil.md   Evil \\u001b]0;pwned\\u0007 t" in listed.out
    shown = clean(run("documents", "show", "evil.md", "-C", "h"))
    assert "       title: Evil \\u001b]0;pwned\\u0007 title \\u202egnp.exe\n" in shown.out
    tree = clean(run("provenance", "evil.md", "-C", "h"))
    assert "Evil \\u001b]0;pwned\\u0007 title" in tree.out
    for args in (("documents", "list"), ("documents", "show", "evil.md"), ("provenance", "evil.md")):
        r = clean(run(*args, "-C", "h", "--format", "json"))
        assert TITLE in r.out.replace("\\u001b", "\x1b").replace("\\u0007", "\x07").replace("\\u202e", "\u202e")
    assert json.loads(run("documents", "show", "evil.md", "-C", "h", "--format", "json").out)["title"] == TITLE


def test_rag_commands_traces_and_sparql_without_an_llm(hostile: Path) -> None:
    doc = clean(run("document-rag", "-q", Q, "-C", "h", "-x"))
    assert "\\u001b[2J\\u001b[31min 1898\\u009b" in doc.out
    graph = clean(run("graph-rag", "-q", Q, "-C", "h", "-x"))
    assert "Source: Chunk 1 → Section \"Evil \\u001b]0;pwned\\u0007 title \\u202egnp.exe\"" in graph.err
    events = [json.loads(line) for line in clean(run("graph-rag", "-q", Q, "-C", "h", "--format", "json")).out.splitlines()]
    assert CLEAR in events[-1]["answer"]  # JSON keeps the value, escaped
    clean(run("traces", "list", "-C", "h"))
    sid = events[-1]["session_id"]
    clean(run("traces", "show", sid, "-C", "h", "--show-provenance"))
    assert json.loads(clean(run("traces", "show", sid, "-C", "h", "--format", "json")).out)["synthesis"]["content"] \
        == events[-1]["answer"]
    titles = "SELECT ?t WHERE { GRAPH <urn:graph:source> { ?d dc:title ?t } }"
    table = clean(run("sparql", titles, "-C", "h"))
    assert "\\u202egnp.exe" in table.out
    clean(run("sparql", titles, "-C", "h", "--format", "csv"), csv=True)
    rows = json.loads(clean(run("sparql", titles, "-C", "h", "--format", "json")).out)["results"]["bindings"]
    assert [row["t"]["value"] for row in rows] == [TITLE]
    clean(run("sparql", "CONSTRUCT { ?d dc:title ?t } WHERE { GRAPH <urn:graph:source> { ?d dc:title ?t } }",
              "-C", "h"))


def test_llm_text_is_neutralised_in_graph_rag_and_agent(hostile: Path, llm_server: FakeOpenAIServer) -> None:
    reason = f"because {OSC}{CLEAR}\u202eit fits"
    select = json.dumps({"id": edge_id("Marie Curie", "discovered", "polonium"), "reasoning": reason})
    answer = f"Marie Curie {CLEAR}discovered polonium [1]."
    llm_server.script = by_kind({"complete": select, "stream": answer,
                                 "agent_step": [agent_step(f"Think {OSC}", final_answer=f"Curie {CLEAR}")]})
    r = clean(run("graph-rag", "-q", Q, "-C", "h", "-x"))
    assert "Reason: because \\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31m\\u202eit fits" in r.err
    assert r.out.startswith("Marie Curie \\u001b[2J\\u001b[31mdiscovered polonium [1].")
    agent = clean(run("agent", "-q", Q, "-C", "h", "-v", "-x"))
    assert agent.out.startswith("Curie \\u001b[2J\\u001b[31m")
    assert "Thought: Think \\u001b]0;pwned\\u0007" in agent.err


def test_error_lines_are_neutralised(tmp_path: Path) -> None:
    evil = tmp_path / f"x{OSC}.txt"
    r = clean(run("load", str(evil)))
    assert re.search(r"error: .*x\\u001b\]0;pwned\\u0007\.txt: no such file", r.err)
