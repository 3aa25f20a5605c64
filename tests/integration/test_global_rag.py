"""Acceptance of issue 31 on three unrelated subjects mixed (computing, space, radioactivity).

The documents are bench/eval's (Wikipedia, CC BY-SA 3.0: see bench/eval/*/SOURCES.md) and the project's own
sample corpus. Top-level communities separate the subjects; the global answer to "What are the main themes?"
names each one, every sentence citing that subject's documents; every citation resolves to a stored fact and
its source sentence; removing one subject's documents marks exactly its communities' reports stale.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from provgraph.communities.build import build
from provgraph.communities.global_rag import GlobalRag
from provgraph.communities.sources import fact_sources
from provgraph.communities.stored import community_heads, member_entities, member_facts, report_of
from provgraph.config import Settings, load_settings
from provgraph.events import Event, Final
from provgraph.rdf.ids import document_iri
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.rdf.vocab import GRAPH_COMMUNITIES, GRAPH_RETRIEVAL, SCHEMA_PREDICATES, TG
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.fakes.scripted_llm import Call, ScriptedChatModel

EVAL = Path(__file__).resolve().parents[2] / "bench" / "eval"
SUBJECTS = {
    "computing": [EVAL / "computing" / "docs" / "brian_kernighan.txt", EVAL / "computing" / "docs" / "multics.html"],
    "space": [EVAL / "space" / "docs" / "sputnik_1.html"],
    "radioactivity": sorted((EVAL / "sample" / "docs").iterdir()),
}
NAMES = {"computing": r"multics|unix|kernighan", "space": r"sputnik", "radioactivity": r"curie|becquerel"}
SUBJECT_OF = {document_iri(p.name).value: s for s, paths in SUBJECTS.items() for p in paths}
THEMES = "What are the main themes?"


_TEMPLATE: list[str] = []  # in a suite-on-PostgreSQL run: the database the mixed corpus was built into


@pytest.fixture(scope="module")
def _mixed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.services import suite_on_postgres, suite_template

    home = tmp_path_factory.mktemp("mixed")
    extra = {}
    if suite_on_postgres():  # into a template database, copied for each test (as tests/corpus_fixture.py does)
        _TEMPLATE[:] = [suite_template("mixed")]
        extra = {"store_url": _TEMPLATE[0]}
    settings = load_settings(home=str(home), collection="mixed", llm="none", **extra)
    with Runtime(settings) as rt:
        loader = rt.loader()
        chunks = [c for paths in SUBJECTS.values() for p in paths for c in loader.load_file(p).chunks]
        outcomes = asyncio.run(rt.extraction().run(chunks, on_commit=rt.commit_documents))
        assert not [o for o in outcomes if o.failed]
        asyncio.run(build(rt.store, rt.librarian))
    return home


@pytest.fixture
def mixed(_mixed_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    home = tmp_path / "mixed-copy"
    shutil.copytree(_mixed_home, home)
    monkeypatch.setenv("PROVGRAPH_HOME", str(home))
    if _TEMPLATE:
        from tests.services import suite_store_url

        url = suite_store_url(_TEMPLATE[0])
        monkeypatch.setenv("PROVGRAPH_STORE_URL", url)
        return load_settings(home=str(home), collection="mixed", llm="none", store_url=url)
    return load_settings(home=str(home), collection="mixed", llm="none")


def _subjects(rt: Runtime, facts: list[TripleTerm]) -> Counter[str]:
    found = fact_sources(rt.store, facts)
    return Counter(SUBJECT_OF[s.document] for f in facts for s in found[f][:1])


def _ask(engine: GlobalRag, question: str) -> list[Event]:
    async def go() -> list[Event]:
        return [e async for e in engine.ask(question)]
    return asyncio.run(go())


def test_top_level_communities_separate_the_subjects(mixed: Settings) -> None:
    with Runtime(mixed) as rt:
        top = [h for h in community_heads(rt.store) if h.level == 0]
        majority, right, total = {}, 0, 0
        for h in top:
            counts = _subjects(rt, member_facts(rt.store, h.iri))
            subject, n = counts.most_common(1)[0]
            right, total = right + n, total + sum(counts.values())
            if h.facts >= 100:
                print(f"purity {h.label} ({h.facts} facts): {subject} {n / sum(counts.values()):.3f}")
                assert n / sum(counts.values()) >= 0.85
                majority[h.iri] = subject
        print(f"purity of the {len(top)} top-level communities (by member facts): {right / total:.3f}")
        assert right / total >= 0.9
        assert sorted(majority.values()) == sorted(SUBJECTS)  # one large community a subject


def _sentences(answer: str) -> list[str]:
    return [s for s in re.split(r"(?<=\]\.)\s+", answer) if s]


def test_the_main_themes_name_each_subject_each_sentence_citing_its_documents(mixed: Settings) -> None:
    with Runtime(mixed) as rt:
        events = _ask(rt.global_rag(), THEMES)
        final = events[-1]
        assert isinstance(final, Final), final
        sentences = _sentences(final.answer)
        assert len(sentences) == 3
        named = []
        for sentence in sentences:
            markers = re.findall(r"\[\d+\]", sentence)
            subjects = {SUBJECT_OF[s.document] for s in final.sources if s.marker in markers}
            assert len(subjects) == 1, (sentence, subjects)
            subject = subjects.pop()
            assert re.search(NAMES[subject], sentence, flags=re.I), (subject, sentence)
            named.append(subject)
        assert sorted(named) == sorted(SUBJECTS)
        assert [e.step for e in events if hasattr(e, "step")] == ["question", "map", "synthesis"]


@pytest.mark.parametrize("question, subject", [
    ("What do the documents say about Sputnik?", "space"),
    ("What did Marie Curie discover?", "radioactivity"),
    ("Who is Brian Kernighan?", "computing"),
])
def test_without_an_llm_a_question_about_one_subject_is_answered_from_its_communities_only(
        mixed: Settings, question: str, subject: str) -> None:
    with Runtime(mixed) as rt:
        final = _ask(rt.global_rag(), question)[-1]
        assert isinstance(final, Final), final
        assert final.sources and {SUBJECT_OF[s.document] for s in final.sources} == {subject}, final.answer
        assert re.search(NAMES[subject], final.answer, flags=re.I), final.answer  # the larger subjects stay out


def _assert_citations_resolve(rt: Runtime, final: Final) -> int:
    """Each stored citation → a finding of a stored report → stored facts → their source sentences."""
    question = Iri(f"urn:provgraph:global:{final.session_id}")
    synthesis = Iri(f"{question.value}/synthesis")
    citations = [q.o for q in rt.store.match(synthesis, TG.citation, None, g=GRAPH_RETRIEVAL)]
    assert citations
    for c in citations:
        finding = next(q.o for q in rt.store.match(c, TG.finding, None, g=GRAPH_RETRIEVAL))
        assert rt.store.count(None, TG.finding, finding, g=GRAPH_COMMUNITIES) == 1
        facts = [q.o for q in rt.store.match(c, TG.citesFact, None, g=GRAPH_RETRIEVAL)]
        assert facts and all(isinstance(f, TripleTerm) for f in facts)
        found = fact_sources(rt.store, facts)  # type: ignore[arg-type]
        for fact in facts:
            assert rt.store.count(fact.s, fact.p, fact.o, g=None) == 1  # type: ignore[union-attr]
            spans = [s for s in found[fact] if s.evidence is not None]  # type: ignore[index]
            assert spans
            for s in spans:
                text = rt.librarian.text(s.chunk)[s.evidence[0]:s.evidence[0] + s.evidence[1]]  # type: ignore[index]
                assert text.strip()
        marker = next(q.o.value for q in rt.store.match(c, TG.marker, None, g=GRAPH_RETRIEVAL))  # type: ignore[union-attr]
        assert marker in final.answer and any(s.marker == marker for s in final.sources)
    return len(citations)


def test_every_citation_resolves_to_a_stored_fact_and_its_sentence_without_an_llm(mixed: Settings) -> None:
    with Runtime(mixed) as rt:
        final = _ask(rt.global_rag(), THEMES)[-1]
        assert isinstance(final, Final)
        assert _assert_citations_resolve(rt, final) == 3


def _scripted(call: object) -> str:
    if getattr(call, "schema_name", None) == "global_map":
        return json.dumps({"score": 80, "answer": "This community is one theme of the corpus.", "findings": [1]})
    return "The corpus covers three themes [1] [2]. It also names a finding that does not exist [9]."


def test_with_a_scripted_llm_the_map_and_reduce_cite_findings_that_resolve(mixed: Settings) -> None:
    llm = ScriptedChatModel(_scripted)
    with Runtime(mixed, llm=llm) as rt:
        events = _ask(rt.global_rag(), THEMES)
        final = events[-1]
        assert isinstance(final, Final), final
        assert final.answer.startswith("The corpus covers three themes [1] [2].")
        assert any("1 citation marker(s) name no finding" in w for w in final.warnings)
        kinds = [c.kind for c in llm.calls]
        assert kinds.count("json") <= 8 and kinds.count("stream") == 1  # bounded: map_limit + 1
        assert final.usage.llm_calls == len(llm.calls)
        assert _assert_citations_resolve(rt, final) == 2


class _Hanging(ScriptedChatModel):
    """A model that never answers: every call waits until the question's deadline cancels it."""

    async def complete_json(self, messages: object, **options: object) -> object:  # type: ignore[override]
        self.calls.append(Call("json", list(messages), options.get("schema_name")))  # type: ignore[arg-type,call-overload]
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_a_model_that_never_answers_is_cut_off_by_the_deadline_and_the_answer_falls_back(mixed: Settings) -> None:
    from provgraph.communities.global_rag import GlobalParams

    llm = _Hanging(lambda call: "never used")
    with Runtime(mixed, llm=llm) as rt:
        final = _ask(rt.global_rag(GlobalParams(question_deadline=0.5, map_limit=3)), THEMES)[-1]
        assert isinstance(final, Final), final
        assert 0 < len(llm.calls) <= 3  # bounded by map_limit, each cut off at the deadline
        assert any("scored without the LLM" in w for w in final.warnings), final.warnings
        assert any("reduce fell back to an extractive answer" in w for w in final.warnings), final.warnings
        assert _assert_citations_resolve(rt, final) >= 1  # the extractive answer still cites what it rests on


def test_removing_one_subject_marks_exactly_its_reports_stale_and_a_rebuild_drops_them(mixed: Settings) -> None:
    space = {document_iri(p.name).value for p in SUBJECTS["space"]}
    with Runtime(mixed) as rt:
        heads = community_heads(rt.store)
        touched = set()  # communities with a member fact only the space documents support
        for h in heads:
            facts = member_facts(rt.store, h.iri)
            found = fact_sources(rt.store, facts)
            if any(found[f] and {s.document for s in found[f]} <= space for f in facts):
                touched.add(h.iri)
        only_space = {h.iri for h in heads if set(_subjects(rt, member_facts(rt.store, h.iri))) == {"space"}}
        assert only_space and only_space <= touched
        for path in SUBJECTS["space"]:
            rt.remove_document(document_iri(path.name))
        stale = {h.iri for h in community_heads(rt.store) if h.stale}
        assert stale == touched
        print(f"removing space: {len(stale)} of {len(heads)} reports stale ({len(only_space)} space-only communities)")
        warned = _ask(rt.global_rag(), THEMES)[-1]
        assert isinstance(warned, Final)
        assert any(f"{len(stale)} stale community report(s) left out" in w for w in warned.warnings)
        assert "sputnik" not in warned.answer.lower()
        result = asyncio.run(build(rt.store, rt.librarian))
        after = {h.iri: h for h in community_heads(rt.store)}
        assert not any(h.stale for h in after.values())
        assert not (only_space & after.keys())  # the space communities are gone with their reports
        by_iri = {h.iri: h for h in heads}

        def top(h: object) -> Iri:
            while h.parent is not None:  # type: ignore[attr-defined]
                h = by_iri[h.parent]  # type: ignore[attr-defined]
            return h.iri  # type: ignore[attr-defined,no-any-return]

        untouched = {h.iri for h in heads if top(h) not in stale}  # the trees no retraction reached
        assert untouched and untouched <= after.keys()  # kept as they were, reports not rewritten
        assert len(result.detection.reports_removed) >= len(only_space)
        assert result.reports.written == result.detection.added
        for h in after.values():
            report = report_of(rt.store, h.report)  # type: ignore[arg-type]
            assert report is not None and all(rt.store.count(f.s, f.p, f.o, g=None) == 1
                                              for finding in report.findings for f in finding.facts)


def test_cli_global_rag_streams_the_steps_and_the_cited_answer(mixed: Settings) -> None:
    out = run("global-rag", "-q", THEMES, "-C", "mixed", "--format", "json")
    assert out.code == 0, out.err
    events = [json.loads(line) for line in out.out.splitlines()]
    assert [e["step"] for e in events if e["message_type"] == "explain"] == ["question", "map", "synthesis"]
    final = events[-1]
    assert final["end_of_session"] and final["sources"]
    text = run("global-rag", "-q", THEMES, "-C", "mixed", "-x")
    assert text.code == 0 and "[map]" in text.err and "Reports scored:" in text.err and "[1]" in text.out


def test_traces_show_walks_a_global_answer_down_to_page_and_offsets(mixed: Settings) -> None:
    with Runtime(mixed) as rt:
        final = _ask(rt.global_rag(), THEMES)[-1]
        assert isinstance(final, Final)
    listed = json.loads(run("traces", "list", "-C", "mixed", "-f", "json").out)
    assert [(t["session_id"], t["type"]) for t in listed] == [(final.session_id, "Global")]
    shown = json.loads(run("traces", "show", final.session_id, "-C", "mixed", "-f", "json").out)
    assert shown["type"] == "Global" and shown["answer"] == final.answer and not shown["stale"]
    assert len(shown["map"]["reports"]) == 3 and shown["map"]["reports_scored"] > 3
    assert [c["marker"] for c in shown["citations"]] == ["[1]", "[2]", "[3]"]
    for c in shown["citations"]:
        assert c["finding_text"] and final.answer[c["offset"]:c["offset"] + c["length"]] == c["text"]
        for fact in c["facts"]:
            assert fact["stored"] and fact["sources"]
            for src in fact["sources"]:
                assert src["document"] in SUBJECT_OF and src["length"] > 0
                assert src["page_number"] is not None or src["section_title"] is not None or \
                    src["document"].endswith(".txt")
                assert src["evidence"] is None or src["evidence"]["text"].strip()
        assert any(s["evidence"] and " ".join(s["evidence"]["text"].split()) == c["finding_text"]
                   for f in c["facts"] for s in f["sources"])  # the finding's own sentence is among them
    text = run("traces", "show", final.session_id, "-C", "mixed")
    assert "[map]" in text.out and "Finding:" in text.out and "Sentence: \"" in text.out and "(chars " in text.out


def test_loading_a_document_marks_the_reports_of_the_communities_its_new_facts_touch(mixed: Settings,
                                                                                      tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Marie Curie admired Sputnik 1 greatly. Pierre Curie discussed Multics with Brian Kernighan.\n",
                    encoding="utf-8")
    doc = document_iri(note.name)
    with Runtime(mixed) as rt:
        before = {h.iri for h in community_heads(rt.store) if h.stale}
        chunks = rt.loader().load_file(note).chunks
        asyncio.run(rt.extraction().run(chunks, on_commit=rt.commit_documents))
        subgraphs = [n for n, sg in rt.store.derived_nodes(doc).items() if sg]
        new = {f for fs in rt.store.facts_of_subgraphs(subgraphs).values() for f in fs}
        expected = set()  # a new fact names a member entity of the community without being a member fact
        for h in community_heads(rt.store):
            members, facts = set(member_entities(rt.store, h.iri)), set(member_facts(rt.store, h.iri))
            if any(f not in facts and {f.s, f.o} & members for f in new if f.p not in SCHEMA_PREDICATES):
                expected.add(h.iri)
        stale = {h.iri for h in community_heads(rt.store) if h.stale}
        assert not before and expected and stale == expected
        because = {q.s: q.o for q in rt.store.match(None, TG.staleBecause, None, g=GRAPH_COMMUNITIES)}
        assert set(because.values()) == {doc}  # each mark names the load that made it
