"""The README's Python API example, on the sample corpus, in the no-LLM mode."""

from __future__ import annotations

from pathlib import Path

from provgraph import Provgraph
from tests.corpus_fixture import CORPUS


def test_readme_example(tmp_path: Path) -> None:
    with Provgraph(collection="demo", home=tmp_path, llm="none") as pg:
        results = pg.load([CORPUS])
        assert sorted(r.status for r in results) == ["loaded"] * 5
        answer = pg.graph_rag("Who discovered radioactivity?")
        assert answer.text and answer.sources
        markers = {s.marker for s in answer.sources}
        assert all(m in markers for m in __import__("re").findall(r"\[\d+\]", answer.text))
        assert [s.step for s in answer.steps] == ["question", "ranking", "exploration", "focus", "synthesis"]
        trace = pg.trace(answer.session_id)
        assert trace.synthesis.content == answer.text
        assert len(trace.focus.edges) >= 1 and all(e.reasoning for e in trace.focus.edges)
        doc_answer = pg.document_rag("Who founded the Radium Institute?")
        assert doc_answer.sources and doc_answer.steps[0].step == "question"
        assert all(r.status == "unchanged" for r in pg.load([CORPUS]))
