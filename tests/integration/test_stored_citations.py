"""Issue 13 on the sample corpus: the demo's traces explain their answers from the store alone,
and a removed or replaced document marks exactly the traces that used it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

import pytest

from provgraph.config import Settings
from provgraph.events import Event, Final
from provgraph.explain.render_json import trace_json
from provgraph.explain.traces import list_traces, load_trace
from provgraph.rdf.vocab import GRAPH_RETRIEVAL
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS

GRAPH_QUESTIONS = ["Who discovered radioactivity?", "Who won the Nobel Prize in Chemistry in 1911?"]
DOC_QUESTION = "Who founded the Radium Institute and what was it for?"
MARKER = re.compile(r"\[(\d+)\]")


def collect(stream: AsyncIterator[Event]) -> Final:
    async def go() -> list[Event]:
        return [e async for e in stream]

    events = asyncio.run(go())
    assert isinstance(events[-1], Final), events[-1]
    return events[-1]


def ask_demo(rt: Runtime) -> dict[str, Final]:
    """The demo's three questions; the live final message of each, by session ID."""
    finals = [collect(rt.graph_rag().ask(q)) for q in GRAPH_QUESTIONS]
    finals.append(collect(rt.document_rag().ask(DOC_QUESTION)))
    return {f.session_id: f for f in finals}


def test_every_marker_of_every_demo_trace_resolves_from_the_store(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        finals = ask_demo(rt)
        for sid, final in finals.items():
            data = trace_json(load_trace(rt.store, sid, librarian=rt.librarian))
            markers = MARKER.findall(final.answer)
            assert markers and len(data["citations"]) == len(markers)
            live = {s.marker: s.chunk for s in final.sources if s.marker}
            for citation, number in zip(data["citations"], markers):
                assert citation["marker"] == f"[{number}]"
                # the span it ends: answer text followed (after spaces or other markers) by the marker
                start, end = citation["offset"], citation["offset"] + citation["length"]
                assert citation["text"] and final.answer[start:end] == citation["text"]
                assert re.match(r"\s*(\[\d+\])*" + re.escape(citation["marker"]), final.answer[end:])
                assert citation["sources"], citation
                assert {s["chunk"] for s in citation["sources"]} == {live[citation["marker"]]}
                if data["type"] == "GraphRAG":
                    focus = {(e["s"], e["p"], e["o"]) for e in data["focus"]["edges"]}
                    assert citation["edges"] and {(e["s"], e["p"], e["o"]) for e in citation["edges"]} <= focus
                    for source in citation["sources"]:  # each cited edge's sentence, in the cited chunk
                        evidence = source["evidence"]
                        text = rt.librarian.text(source["chunk"])
                        assert evidence["text"] == text[evidence["offset"]:evidence["offset"] + evidence["length"]]
                else:
                    assert citation["chunks"] == [live[citation["marker"]]]


def test_chunks_keep_their_rank_score_and_retriever(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        final = collect(rt.document_rag().ask(DOC_QUESTION))
        ranked = rt.retriever().chunks(DOC_QUESTION, rt.embedder.embed([DOC_QUESTION])[0], corpus_settings.doc_limit)
        data = trace_json(load_trace(rt.store, final.session_id))
    chunks = data["exploration"]["chunks"]
    # the trace keeps retrieval's order, fused score and the retrievers that found each chunk
    assert [(c["chunk"], c["rank"], c["retriever"]) for c in chunks] == [
        (r.id, rank, "+".join(f.retriever for f in r.found)) for rank, r in enumerate(ranked, start=1)]
    assert {c["retriever"] for c in chunks} <= {"lexical", "dense", "lexical+dense"}
    assert [c["score"] for c in chunks] == pytest.approx([r.score for r in ranked])


def _trace_quads(rt: Runtime) -> set:
    return set(rt.store.match(None, None, None, g=GRAPH_RETRIEVAL))


def _documents_of(final: Final) -> set[str]:
    return {s.document for s in final.sources}


def test_removing_a_document_marks_exactly_the_traces_that_used_it(corpus_settings: Settings) -> None:
    removed = "urn:doc:becquerel_rays.txt"
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        finals = ask_demo(rt)
        before = {sid: trace_json(load_trace(rt.store, sid, provenance=True)) for sid in finals}
        trace_quads = _trace_quads(rt)
    # which edges drew on the document, from the traces' sources before the removal
    used_edges = {
        sid: {(e["s"], e["p"], e["o"]) for e in data["focus"]["edges"]
              if any(s["document"] == removed for s in e["sources"])}
        for sid, data in before.items() if data["type"] == "GraphRAG"
    }
    used_chunks = {
        sid: {c["chunk"] for c in data["exploration"]["chunks"] if c["source"]["document"] == removed}
        for sid, data in before.items() if data["type"] == "DocRAG"
    }
    users = {sid for sid, edges in {**used_edges, **used_chunks}.items() if edges}
    assert users and users != set(finals)  # the corpus question set exercises both cases

    r = run("documents", "remove", "becquerel_rays.txt", "-C", corpus_settings.collection)
    assert r.code == 0 and f"{len(users)} trace(s) that used it are now marked stale" in r.out

    with Runtime(corpus_settings, create=False, llm=None) as rt:
        # a retraction record is added beside the traces; not one of their quads changed
        after = _trace_quads(rt)
        assert trace_quads <= after
        assert {q.s for q in after - trace_quads} == {next(iter(after - trace_quads)).s}
        for sid in finals:
            data = trace_json(load_trace(rt.store, sid, provenance=True))
            assert data["stale"] is (sid in users), sid
            if sid not in users:
                assert data["retracted"] == []
                continue
            [retraction] = data["retracted"]
            assert retraction["document"] == removed and retraction["reason"] == "removed"
            if data["type"] == "GraphRAG":
                assert {(e["s"], e["p"], e["o"]) for e in retraction["edges"]} == used_edges[sid]
                marked = {(e["s"], e["p"], e["o"]) for e in data["focus"]["edges"] if e["retracted"]}
                assert marked == used_edges[sid]
            else:
                assert set(retraction["chunks"]) == used_chunks[sid]
                assert {c["chunk"] for c in data["exploration"]["chunks"] if c["retracted"]} == used_chunks[sid]
    sid = next(iter(users))
    text = run("traces", "show", sid, "-C", corpus_settings.collection).out
    assert text.startswith("  STALE: a document this trace used has been removed or replaced since\n")
    assert f"    {removed} removed at " in text and "[RETRACTED]" in text


def test_reloading_changed_bytes_records_a_replacement(corpus_settings: Settings, tmp_path) -> None:
    changed = tmp_path / "radium_institute.txt"
    changed.write_text((CORPUS / "radium_institute.txt").read_text(encoding="utf-8") + "\nA new closing line.\n",
                       encoding="utf-8")
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        final = collect(rt.document_rag().ask(DOC_QUESTION))
        assert "urn:doc:radium_institute.txt" in _documents_of(final)
        assert rt.loader().load_file(changed).status == "replaced"
        data = trace_json(load_trace(rt.store, final.session_id))
    assert data["stale"] is True
    assert [(r["document"], r["reason"]) for r in data["retracted"]] == [("urn:doc:radium_institute.txt", "replaced")]


def test_no_trace_writes_nothing_and_delete_removes_a_trace(corpus_settings: Settings) -> None:
    c = corpus_settings.collection
    r = run("graph-rag", "-q", GRAPH_QUESTIONS[0], "--no-trace", "-C", c)
    assert r.code == 0 and r.out.strip()
    r = run("document-rag", "-q", DOC_QUESTION, "--no-trace", "-C", c)
    assert r.code == 0
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        assert list_traces(rt.store) == []
        assert list(rt.store.match(None, None, None, g=GRAPH_RETRIEVAL)) == []  # not one quad of either question
        final = collect(rt.graph_rag().ask(GRAPH_QUESTIONS[1]))
    r = run("traces", "delete", final.session_id, "-C", c)
    assert r.code == 0 and r.out.startswith("deleted 1 trace(s) (")
    r = run("sparql", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:graph:retrieval> { ?s ?p ?o } }",
            "-C", c, "--format", "json")
    assert json.loads(r.out)["results"]["bindings"][0]["n"]["value"] == "0"
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        assert not rt.librarian.exists(f"urn:trustgraph:synthesis:{final.session_id}")


def test_show_provenance_prints_the_supporting_sentence_not_the_chunk(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        final = collect(rt.graph_rag().ask(GRAPH_QUESTIONS[0]))
        trace = load_trace(rt.store, final.session_id, librarian=rt.librarian, provenance=True)
        sentences = {ref.evidence.text for e in trace.focus.edges for ref in e.sources if ref.evidence}
    text = run("traces", "show", final.session_id, "--show-provenance", "-C", corpus_settings.collection).out
    shown = set(re.findall(r'^ +Sentence: "(.*)"$', text, flags=re.M))
    assert shown and shown == {" ".join(s.split()) for s in sentences}
    assert "Text: " not in text  # every source of the corpus has its sentence


def test_delete_before_a_date_takes_the_retraction_records_along(corpus_settings: Settings) -> None:
    c = corpus_settings.collection
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        ask_demo(rt)
    assert run("documents", "remove", "radium_institute.txt", "-C", c).code == 0
    r = run("traces", "delete", "--before", "2999-01-01", "-C", c)
    assert r.code == 0 and r.out.startswith("deleted 3 trace(s) (")
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        assert list(rt.store.match(None, None, None, g=GRAPH_RETRIEVAL)) == []
    bad = run("traces", "delete", "--before", "last week", "-C", c)
    assert bad.code == 2 and bad.err.startswith("error: --before needs an ISO date or time")


def test_every_corpus_subgraph_costs_n_plus_13_with_its_evidence(corpus_settings: Settings) -> None:
    """The no-LLM extractor records no model: N facts + 13 quads, the evidence literal included
    (N + 14 with an LLM model, N + 15 with an ontology: tests/unit/provenance)."""
    from provgraph.rdf.terms import Iri
    from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, TG

    with Runtime(corpus_settings, create=False, llm=None) as rt:
        subgraphs = [q.s for q in rt.store.match(None, RDF.type, TG.Subgraph, g=GRAPH_SOURCE)]
        assert len(subgraphs) > 10
        for sg in subgraphs:
            own = list(rt.store.match(sg, None, None, g=GRAPH_SOURCE))
            n = sum(1 for q in own if q.p == TG.contains)
            [activity] = [q.o for q in own if q.p == PROV.wasGeneratedBy]
            act = list(rt.store.match(activity, None, None, g=GRAPH_SOURCE))
            [agent] = [q.o for q in act if q.p == PROV.wasAssociatedWith]
            assert isinstance(agent, Iri)
            total = len(own) + len(act) + len(list(rt.store.match(agent, None, None, g=GRAPH_SOURCE)))
            evidence = [q.o.value for q in own if q.p == TG.evidence]
            if n == 0:  # a chunk with nothing to extract (a heading): no evidence literal
                assert total == 12 and evidence == []
                continue
            assert total == n + 13, sg
            assert len(evidence) == 1 and len(evidence[0].split()) == n and "-" not in evidence[0].split()
