"""The demo's steps (not the install) on the sample corpus, in the no-LLM mode (issue: offline demo).

Every selected edge has a source with page (for the PDF) and offsets that slice back to a sentence
containing the edge's labels; every answer sentence carries a marker that resolves in `sources`;
`traces show` reproduces each trace.
"""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.extract.nlp import split_sentences
from provgraph.rdf.terms import Iri
from provgraph.runtime import Runtime
from tests.citations import citations_per_sentence
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS

DEMO = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "demo.py"))  # the demo's own questions
QUESTIONS, DOC_QUESTION = DEMO["QUESTIONS"], DEMO["DOC_QUESTION"]


def _events(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _labels(rt: Runtime, edge: dict) -> list[set[str]]:
    """Each end's names, lower-cased: its label and its aliases (a surname merged into the full name)."""
    out = []
    for key in ("s", "o"):
        term = edge[key]
        if term.startswith("<"):
            rows = rt.sparql_store.select("SELECT ?l WHERE { { ?t rdfs:label ?l } UNION { ?t skos:altLabel ?l } }",
                                   bind={"t": Iri(term[1:-1])})
            names = {r["l"].value for r in rows.rows} or {term}  # type: ignore[union-attr]
        else:
            names = {json.loads(term.split("^^")[0].split("@")[0])}
        out.append({" ".join(n.lower().split()) for n in names})
    return out


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("demo")


def test_demo_steps(demo_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_HOME", str(demo_home))
    assert run("load", str(CORPUS), "-C", "demo").code == 0
    pdf_sources = 0
    sids = []
    for question in QUESTIONS:
        r = run("graph-rag", "-q", question, "-C", "demo", "--format", "json")
        assert r.code == 0, r.err
        events = _events(r.out)
        final = events[-1]
        assert final["end_of_session"] and final["message_type"] == "final"
        sids.append(final["session_id"])
        edges = [q["o"] for e in events if e.get("step") == "focus" for q in e["explain_triples"]
                 if q["p"] == "<https://trustgraph.ai/ns/edge>"]
        assert edges
        by_edge: dict[str, list[dict]] = {}
        for s in final["sources"]:
            by_edge.setdefault(json.dumps(s["edge"], sort_keys=True), []).append(s)
        rt = Runtime(load_settings(collection="demo"), create=False)  # closed before the next command
        texts = rt.librarian.texts({s["chunk"] for s in final["sources"]})
        for edge_nt in edges:
            s_nt, p_nt, o_nt = re.match(r"<<\( (<[^>]*>|\S+) (<[^>]*>) (.*) \)>>$", edge_nt).groups()  # type: ignore[union-attr]
            key = json.dumps({"s": s_nt, "p": p_nt, "o": o_nt}, sort_keys=True)
            sources = by_edge.get(key, [])  # only the sources the answer cites are listed
            labels = _labels(rt, {"s": s_nt, "o": o_nt})
            for src in sources:
                chunk_text = texts[src["chunk"]]
                parent = rt.librarian.text(src["page"] or src["section"] or src["document"])
                assert parent[src["offset"]: src["offset"] + src["length"]] == chunk_text
                sentences = [" ".join(sent.text.lower().split()) for sent in split_sentences(chunk_text)]
                assert any(all(any(n in sent for n in names) for names in labels) for sent in sentences), (labels, src)
                if src["document"].endswith(".pdf"):
                    assert src["page_number"] >= 1
                    pdf_sources += 1
        rt.close()
        assert final["sources"], "the answer lists no source"
        selected = {json.dumps(dict(zip("spo", re.match(  # type: ignore[union-attr]
            r"<<\( (<[^>]*>|\S+) (<[^>]*>) (.*) \)>>$", e).groups())), sort_keys=True) for e in edges}
        assert set(by_edge) <= selected
        markers = {s["marker"] for s in final["sources"]}
        assert markers == set(re.findall(r"\[\d+\]", final["answer"]))  # listed sources = cited sources
        for cited in citations_per_sentence(final["answer"]):
            assert cited <= markers, (cited, markers)
        shown = json.loads(run("traces", "show", final["session_id"], "-C", "demo", "--format", "json").out)
        assert shown["synthesis"]["content"] == final["answer"]
        assert len(shown["focus"]["edges"]) == len(edges)
    assert pdf_sources >= 1
    r = run("document-rag", "-q", DOC_QUESTION, "-C", "demo", "--format", "json")
    final = _events(r.out)[-1]
    assert r.code == 0 and final["sources"]
    markers = {s["marker"] for s in final["sources"]}
    for cited in citations_per_sentence(final["answer"]):
        assert cited <= markers, (cited, markers)
    listed = json.loads(run("traces", "list", "-C", "demo", "--format", "json").out)
    assert [t["type"] for t in listed] == ["DocRAG", "GraphRAG", "GraphRAG", "GraphRAG"]
    r = run("traces", "show", sids[0], "--show-provenance", "-C", "demo")
    assert r.code == 0 and "Source: Chunk" in r.out
    r = run("provenance", "rutherford_radiation.pdf", "-C", "demo")
    assert r.code == 0 and "Page 4" in r.out
    r = run("agent", "-q", "Who discovered radium?", "-C", "demo")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "PROVGRAPH_LLM_BASE_URL" in r.err
