"""Same data, same answers: the sample corpus and two evaluation sets on PostgreSQL export the embedded quads (less
timestamps) and answer GraphRAG, Document RAG and ``traces show`` exactly as on the embedded store (retrieval and
explain read through the named operations of either)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.corpus_fixture import CORPUS
from tests.scaleout.test_cli_postgres import _timeless

EVAL = Path(__file__).resolve().parents[2] / "bench" / "eval"

_SESSION = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( UTC|Z|\+00:00)?")
QUESTIONS = ("Who discovered polonium?", "Who won the Nobel Prize in Chemistry in 1911?",
             "Who founded the Radium Institute and what was it for?")


def _same(text: str) -> str:
    """``text`` without what differs between two runs of a question: session ids and times."""
    return _TIME.sub("<time>", _SESSION.sub("<sid>", text))


def _answers(collection: str, questions: tuple[str, ...] = QUESTIONS) -> list[str]:
    """Every question's graph-rag (explained, json events) and document-rag output, then each trace shown."""
    out: list[str] = []
    for question in questions:
        graph = run("graph-rag", "-q", question, "-x", "-C", collection)
        events = run("graph-rag", "-q", question, "--format", "json", "-C", collection)
        document = run("document-rag", "-q", question, "--format", "json", "-C", collection)
        assert graph.code == events.code == document.code == 0, graph.err + events.err + document.err
        out += [graph.out, graph.err, events.out, document.out]
    for line in run("traces", "list", "-C", collection).out.splitlines()[1:]:
        shown = run("traces", "show", line.split()[0], "--show-provenance", "-C", collection)
        assert shown.code == 0, shown.err
        out.append(shown.out)
    return [_same(text) for text in out]


def test_the_corpus_answers_the_same_on_postgresql(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"same-{uuid.uuid4().hex[:8]}"
    assert run("load", str(CORPUS), "-C", "embedded").code == 0
    embedded = _answers("embedded")
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    assert run("load", str(CORPUS), "-C", name).code == 0
    mine = _answers(name)
    assert len(mine) == len(embedded) == 7 * len(QUESTIONS)  # 4 outputs and 3 traces a question
    for theirs, ours in zip(embedded, mine):
        assert ours == theirs
    focus = [json.loads(e) for e in mine[2].splitlines() if '"focus"' in e]
    assert focus and "Curie" in mine[0]  # the answers compared are real ones
    assert run("collections", "drop", name, "--yes").code == 0


def _document_picks(collection: str, questions: tuple[str, ...]) -> list[str]:
    out = []
    for question in questions:
        answered = run("document-rag", "-q", question, "--format", "json", "--no-trace", "-C", collection)
        assert answered.code == 0, answered.err
        out.append(_same(answered.out))
    return out


@pytest.mark.parametrize("name", ["computing"])
def test_an_evaluation_set_exports_and_answers_the_same_on_postgresql(name: str, pg_url: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """GraphRAG is left out here: on a term with more than triple_limit edges the walk takes the first the store
    gives, in an order that differs between the backends (docs/scale-out.md). One set: computing has every format
    (txt, md, html, pdf; space has no pdf) and the same checks on space added 14 s and caught nothing more (neither
    set catches pgvector's ef_search back at 40: their collections are too small for the HNSW search to miss)."""
    lines = (EVAL / name / "questions.jsonl").read_text().splitlines()
    questions = tuple(json.loads(line)["question"] for line in lines[::5])  # 6 of the 30, over the whole set
    collection = f"{name}-{uuid.uuid4().hex[:8]}"
    assert run("load", str(EVAL / name / "docs"), "-C", "embedded").code == 0
    embedded = run("export", "-C", "embedded").out.encode()
    theirs = _document_picks("embedded", questions)
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    assert run("load", str(EVAL / name / "docs"), "-C", collection).code == 0
    assert _timeless(run("export", "-C", collection).out.encode()) == _timeless(embedded)
    ours = _document_picks(collection, questions)
    assert len(ours) == len(theirs) == len(questions)
    for mine, expected in zip(ours, theirs):
        assert mine == expected
    assert '"sources"' in ours[0]  # real answers were compared
    assert run("collections", "drop", collection, "--yes").code == 0
