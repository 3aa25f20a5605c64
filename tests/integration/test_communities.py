"""Communities over the sample corpus: stored RDF, determinism, idempotence, extractive and LLM reports, CLI."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from provgraph.communities.build import build
from provgraph.communities.cluster import ALGORITHM, LeidenParams
from provgraph.communities.stored import community_heads, member_facts, report_of
from provgraph.config import Settings
from provgraph.errors import ModelError
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import GRAPH_COMMUNITIES, PROV, RDF, TG
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.fakes.scripted_llm import ScriptedChatModel

G = GRAPH_COMMUNITIES


def _build(rt: Runtime, **kw: object) -> object:
    return asyncio.run(build(rt.store, rt.librarian, **kw))  # type: ignore[arg-type]


def test_communities_are_stored_with_members_levels_parents_and_their_run(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings) as rt:
        result = _build(rt)
        assert len(repr(result)) < 2000  # asyncio.run's SIGINT handling reprs the result: no member facts in it
        heads = community_heads(rt.store)
        assert len(heads) == len(result.detection.found) > 3  # type: ignore[attr-defined]
        assert {h.level for h in heads} == {0, 1}
        by_iri = {h.iri: h for h in heads}
        for h in heads:
            assert (h.parent is None) == (h.level == 0)
            if h.parent is not None:
                assert by_iri[h.parent].level == h.level - 1
            facts = member_facts(rt.store, h.iri)
            assert len(facts) == h.facts and all(isinstance(f, TripleTerm) for f in facts)
            members = {q.o for q in rt.store.match(h.iri, TG.memberEntity, None, g=G)}
            assert all(f.s in members and (not isinstance(f.o, Iri) or f.o in members) for f in facts)
            assert all(rt.store.count(f.s, f.p, f.o, g=None) == 1 for f in facts)  # member facts are stored facts
        run_iri = result.detection.run  # type: ignore[attr-defined]
        assert rt.store.count(run_iri, RDF.type, TG.CommunityDetection, g=G) == 1
        assert [q.o for q in rt.store.match(run_iri, TG.algorithm, None, g=G)] == [Literal(ALGORITHM)]
        assert [q.o for q in rt.store.match(run_iri, TG.seed, None, g=G)] == [Literal.integer(42)]
        assert rt.store.count(None, PROV.wasGeneratedBy, run_iri, g=G) == len(heads)


def test_a_rebuild_of_the_same_graph_writes_nothing_and_the_same_seed_gives_the_same_communities(
        corpus_settings: Settings) -> None:
    with Runtime(corpus_settings) as rt:
        _build(rt)
        before = rt.store.export_bytes()
        again = _build(rt)
        assert (again.detection.added, again.detection.removed, again.reports.written) == (0, 0, 0)  # type: ignore[attr-defined]
        assert rt.store.export_bytes() == before
        first = sorted(h.iri.value for h in community_heads(rt.store))
        other = _build(rt, params=LeidenParams(seed=7))
        assert other.detection.added > 0  # type: ignore[attr-defined]  # another seed is another run
        back = _build(rt, params=LeidenParams(seed=42))
        assert sorted(h.iri.value for h in community_heads(rt.store)) == first
        assert back.detection.removed > 0  # type: ignore[attr-defined]


def test_extractive_findings_are_member_facts_quoted_from_their_sentence(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings) as rt:
        _build(rt)
        for h in community_heads(rt.store):
            report = report_of(rt.store, h.report)  # type: ignore[arg-type]
            assert report is not None and report.model is None and report.title
            members = set(member_facts(rt.store, h.iri))
            for f in report.findings:
                assert f.facts and set(f.facts) <= members
                text = rt.librarian.text(f.chunk.value)  # type: ignore[union-attr]
                assert " ".join(text[f.offset:f.offset + f.length].split()) == f.content  # type: ignore[operator]
            assert rt.librarian.text(f"{report.iri.value}/text").startswith(report.title)


def _llm_answer(call_text: str, *, bad: bool = False) -> str:
    ids = re.findall(r"^(F\d+):", call_text, flags=re.M)
    cited = ["F999"] if bad else ids[:2]
    return json.dumps({"title": "Radioactivity research", "summary": "Who studied the rays.",
                       "findings": [{"text": "The Curies and Becquerel studied radioactivity.", "facts": cited}]})


def test_llm_reports_cite_member_facts_and_record_the_model(corpus_settings: Settings) -> None:
    llm = ScriptedChatModel(lambda call: _llm_answer(call.messages[-1].content))
    with Runtime(corpus_settings) as rt:
        result = _build(rt, llm=llm, max_llm=2)
        assert result.reports.llm_reports == 2 and len(llm.calls) == 2  # type: ignore[attr-defined]
        assert any("extractive: at most 2 LLM reports" in w for w in result.reports.warnings)  # type: ignore[attr-defined]
        heads = community_heads(rt.store)
        by_llm = [r for h in heads if (r := report_of(rt.store, h.report)) and r.model == "scripted:test"]  # type: ignore[arg-type]
        assert len(by_llm) == 2
        for r in by_llm:
            assert r.title == "Radioactivity research" and len(r.findings[0].facts) == 2
            assert set(r.findings[0].facts) <= set(member_facts(rt.store, r.community))
            activity = Iri(f"{r.iri.value}/activity")
            assert rt.store.count(activity, TG.inToken, Literal.integer(10), g=G) == 1


@pytest.mark.parametrize("answer, message", [
    (lambda text: _llm_answer(text, bad=True), "cites F999, which is not one of the community's facts"),
    (lambda text: "{\"title\": \"x\"", "community report for Community"),
])
def test_an_invalid_llm_report_is_a_clear_error_and_writes_no_report(corpus_settings: Settings, answer: object,
                                                                      message: str) -> None:
    llm = ScriptedChatModel(lambda call: answer(call.messages[-1].content))  # type: ignore[operator]
    with Runtime(corpus_settings) as rt:
        with pytest.raises(ModelError, match=message):
            _build(rt, llm=llm)
        assert rt.store.count(None, RDF.type, TG.CommunityReport, g=G) == 0
        assert rt.store.count(None, RDF.type, TG.Community, g=G) > 0  # the communities themselves were stored


def test_cli_build_list_and_show(corpus_settings: Settings) -> None:
    built = run("communities", "build", "-C", "corpus", "--format", "json")
    assert built.code == 0, built.err
    summary = json.loads(built.out)
    assert summary["communities"] == summary["added"] == summary["reports_written"] > 0
    rows = json.loads(run("communities", "list", "-C", "corpus", "--format", "json").out)
    assert len(rows) == summary["communities"] and all(r["title"] for r in rows)
    top = rows[0]
    shown = run("communities", "show", top["id"].removeprefix("urn:provgraph:community:")[:8], "-C", "corpus")
    assert shown.code == 0 and f"Report: {top['title']}" in shown.out and "Sentence: \"" in shown.out
    detail = json.loads(run("communities", "show", top["id"], "-C", "corpus", "--format", "json").out)
    for finding in detail["report"]["findings"]:
        assert all(fact["stored"] and fact["sources"] for fact in finding["facts"])
    missing = run("communities", "show", "nope", "-C", "corpus")
    assert missing.code != 0 and "no community 'nope'" in missing.err


def test_each_member_fact_is_stored_once_with_the_deepest_community_having_it(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings) as rt:
        result = _build(rt, params=LeidenParams(max_size=10))
        found = {c.iri: c for c in result.detection.found}  # type: ignore[attr-defined]
        assert max(c.level for c in found.values()) >= 2
        stored = [q for q in rt.store.match(None, TG.memberFact, None, g=G)]
        assert len(stored) == len({q.o for q in stored})  # no fact held by two communities
        for c in found.values():
            below = {f for child in found.values() if child.parent == c.iri for f in child.facts}
            own = {q.o for q in rt.store.match(c.iri, TG.memberFact, None, g=G)}
            assert own == set(c.facts) - below
            assert member_facts(rt.store, c.iri) == sorted(c.facts, key=str)  # own and the descendants'
        # the same top level with other children: the kept communities' own facts move with them
        coarse = _build(rt, params=LeidenParams(max_size=40))
        assert coarse.detection.kept > 0 and coarse.detection.removed > 0  # type: ignore[attr-defined]
        for c in coarse.detection.found:  # type: ignore[attr-defined]
            assert member_facts(rt.store, c.iri) == list(c.facts)
        stored = [q for q in rt.store.match(None, TG.memberFact, None, g=G)]
        assert len(stored) == len({q.o for q in stored})


def test_a_build_on_an_unchanged_graph_reads_nothing_and_a_load_makes_the_next_one_work(
        corpus_settings: Settings, tmp_path: object) -> None:
    with Runtime(corpus_settings) as rt:
        first = _build(rt)
        reads: list[str] = []
        real = rt.store.fact_support

        def counted() -> list[tuple[TripleTerm, int]]:
            reads.append("fact_support")
            return real()

        rt.store.fact_support = counted  # type: ignore[method-assign]
        again = _build(rt)
        assert again.detection.unchanged and reads == []  # type: ignore[attr-defined]
        assert again.detection.communities == first.detection.communities  # type: ignore[attr-defined]
        assert again.detection.facts == first.detection.facts  # type: ignore[attr-defined]
        other = _build(rt, params=LeidenParams(seed=7))  # other parameters: a full run
        assert not other.detection.unchanged and reads == ["fact_support"]  # type: ignore[attr-defined]
        _build(rt)
        heads = {h.iri: h for h in community_heads(rt.store)}
        curie = {q.s for q in rt.store.match(None, TG.memberEntity, None, g=G)
                 if "marie" in q.o.value.lower() and "curie" in q.o.value.lower()}  # type: ignore[union-attr]
        assert curie
        note = tmp_path / "note.txt"  # type: ignore[operator]
        note.write_text("A note on Marie Curie\n\nMarie Curie admired the Eiffel Tower in Paris.\n")
        loaded = rt.loader().load_file(note)
        asyncio.run(rt.extraction().run(loaded.chunks, on_commit=rt.commit_documents))
        stale = {h.iri for h in community_heads(rt.store) if h.stale}
        assert stale and stale <= set(heads) and curie & stale  # the communities the new facts touch
        assert all(rt.store.count(heads[c].report, TG.staleBecause, loaded.document, g=G) == 1 for c in stale)
        again = tmp_path / "again.txt"  # type: ignore[operator]
        again.write_text("More on Marie Curie\n\nMarie Curie visited the Eiffel Tower in Paris.\n")
        second = rt.loader().load_file(again)
        asyncio.run(rt.extraction().run(second.chunks, on_commit=rt.commit_documents))
        assert rt.store.count(None, TG.staleBecause, second.document, g=G) == 0  # stale ones keep their first cause
        reads.clear()
        rebuilt = _build(rt)
        assert not rebuilt.detection.unchanged and reads == ["fact_support"]  # type: ignore[attr-defined]
        assert not any(h.stale for h in community_heads(rt.store))


def test_parameters_under_one_are_one_line_errors() -> None:
    from provgraph.communities.global_rag import GlobalParams
    from provgraph.errors import InputError

    with pytest.raises(InputError, match="^community max-levels must be at least 1, got 0$"):
        LeidenParams(max_levels=0)
    with pytest.raises(InputError, match="^global search map-limit must be at least 1, got 0$"):
        GlobalParams(map_limit=0)
