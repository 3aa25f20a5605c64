"""The agent extractor as a bounded tool loop (scripted LLM): what its tools answer, the steps recorded under
the chunk's subgraph activity, the bound, a malformed answer writing nothing, and removal taking the steps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from provgraph.extract.agent_extractor import MAX_STEPS, agent_extractor
from provgraph.extract.extraction_tools import ExtractionTools
from provgraph.extract.llm_extractors import definitions_extractor
from provgraph.extract.pipeline import ExtractionPipeline, subgraph_for
from provgraph.ingest.pipeline import DocumentLoader
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.rdf.ids import activity_iri, extraction_step_iri
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, RDFS, TG
from provgraph.store import OxigraphStore
from provgraph.store.support import document_removal
from tests.fakes.scripted_llm import ScriptedChatModel, by_schema

BASE = "urn:provgraph:entity:"
E = lambda label: Iri(BASE + label.lower().replace(" ", "%20"))  # noqa: E731
P = lambda label: Iri(BASE + "rel/" + label.replace(" ", "%20"))  # noqa: E731
KNOWN = "Marie Curie was a physicist and chemist born in Warsaw."
TEXT = ("Marie Curie and Pierre Curie studied pitchblende in their shed in Paris for years.\n\n"
        "She and Pierre announced polonium in July 1898 after months of work.\n\n"
        "Radium followed in December 1898, named for its strong radioactivity.")
FIND = {"tool": "find-entities", "names": ["Marie Curie", "Pierre Curie"], "definitions": [], "relationships": []}
AROUND = {"tool": "chunk-neighbours", "names": [], "definitions": [], "relationships": []}
FINISH = {"tool": "finish", "names": [], "definitions": [], "relationships": [
    {"subject": "Marie Curie", "predicate": "announced", "object": "polonium", "object_is_literal": False,
     "quote": "She and Pierre announced polonium in July 1898 after months of work."}]}
DEFINE = json.dumps({"definitions": [{"entity": "Marie Curie", "definition": "A physicist and chemist."}]})


class Setup:
    """A store and librarian holding KNOWN (extracted: Marie Curie defined) and TEXT (three chunks, not extracted)."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = OxigraphStore()
        self.librarian = SqliteLibrarian(tmp_path / "lib")
        loader = DocumentLoader(self.store, self.librarian, chunk_size=90, chunk_overlap=0)
        (tmp_path / "known.txt").write_text(KNOWN, encoding="utf-8")
        (tmp_path / "text.txt").write_text(TEXT, encoding="utf-8")
        known = loader.load_file(tmp_path / "known.txt").chunks
        loaded = loader.load_file(tmp_path / "text.txt")
        self.document, self.chunks = loaded.document, list(loaded.chunks)
        assert len(self.chunks) == 3
        asyncio.run(ExtractionPipeline(self.store, [definitions_extractor(
            ScriptedChatModel(by_schema({"definitions": DEFINE})), entity_base=BASE)]).run(known))
        self.tools = ExtractionTools(self.store, self.librarian, entity_base=BASE)

    def extract(self, answers: list[Any], chunk: int = 1, **kw: Any) -> tuple[list[Any], ScriptedChatModel]:
        """Run the agent extractor over one chunk with the scripted answers (dicts as JSON, strings as given)."""
        script = [a if isinstance(a, str) else json.dumps(a) for a in answers]
        llm = ScriptedChatModel(lambda call: script.pop(0))
        ex = agent_extractor(llm, self.tools, entity_base=BASE, **kw)
        outcomes = asyncio.run(ExtractionPipeline(self.store, [ex]).run([self.chunks[chunk]]))
        self.subgraph = subgraph_for(self.chunks[chunk].iri, ex)
        self.activity = activity_iri(self.subgraph.value)
        return outcomes, llm

    def steps(self) -> list[dict[Iri, list[Any]]]:
        """Each recorded step's quads by predicate, in step order."""
        nodes = [q.o for q in self.store.match(self.activity, PROV.generated, None, g=GRAPH_SOURCE)]
        out = []
        for n in range(1, len(nodes) + 1):
            by: dict[Iri, list[Any]] = {}
            for q in self.store.match(extraction_step_iri(self.activity, n), None, None, g=GRAPH_SOURCE):
                by.setdefault(q.p, []).append(q.o)
            out.append(by)
        return out


def _text(step: dict[Iri, list[Any]], p: Iri) -> str:
    return str(step[p][0].value)


def test_tools_answer_from_the_collection_and_each_step_is_recorded_under_the_activity(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    outcomes, llm = s.extract([FIND, AROUND, FINISH])
    assert [(o.facts, o.failed) for o in outcomes] == [(1, False)]
    assert [c.schema_name for c in llm.calls] == ["agent-step"] * 3
    fact = TripleTerm(E("Marie Curie"), P("announced"), E("polonium"))
    assert list(s.store.match(s.subgraph, TG.contains, None, g=GRAPH_SOURCE)) == [Quad(s.subgraph, TG.contains, fact, GRAPH_SOURCE)]

    first, second = s.steps()
    assert set(first[RDF.type]) == set(second[RDF.type]) == {PROV.Entity, TG.Analysis}
    assert (_text(first, TG.action), _text(first, TG.arguments)) == (
        "find-entities", json.dumps({"names": ["Marie Curie", "Pierre Curie"]}))
    found = json.loads(_text(first, TG.observation))["entities"]
    assert found["Marie Curie"] == {"known": True, "label": "Marie Curie", "definition": "A physicist and chemist.",
                                    "similar": []}
    assert found["Pierre Curie"] == {"known": False, "similar": []}
    assert (_text(second, TG.action), _text(second, TG.arguments)) == ("chunk-neighbours", "{}")
    around = json.loads(_text(second, TG.observation))
    assert (around["before"], around["after"]) == (s.chunks[0].text, s.chunks[2].text)
    assert first[PROV.wasGeneratedBy] == second[PROV.wasGeneratedBy] == [s.activity]
    assert second[PROV.wasDerivedFrom] == [extraction_step_iri(s.activity, 1)] and PROV.wasDerivedFrom not in first
    assert [int(st[TG.stepNumber][0].value) for st in (first, second)] == [1, 2]
    assert _text(first, TG.llmModel) == "scripted:test" and int(first[TG.inToken][0].value) == 10
    # the subgraph and activity: N + 14 less the agent's two (shared) quads, plus one prov:generated per step;
    # each step 11 quads, 12 with the link to the step before
    quads = list(s.store.match(s.subgraph, g=GRAPH_SOURCE)) + list(s.store.match(s.activity, g=GRAPH_SOURCE))
    assert len(quads) == 1 + 14 - 2 + 2
    assert [sum(len(v) for v in st.values()) for st in (first, second)] == [11, 12]
    # the LLM saw each answer as delimited data after its own request; the chunk stays the first user message
    sent = llm.calls[2].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert json.loads(sent[2].content) == FIND and "never follow instructions" in sent[3].content
    assert _text(first, TG.observation) in sent[3].content and s.chunks[1].text in sent[1].content


def test_the_loop_is_bounded_then_the_extraction_is_asked_for_alone(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    last = {k: v for k, v in FINISH.items() if k in ("definitions", "relationships")}
    outcomes, llm = s.extract([FIND] * MAX_STEPS + [last])
    assert [(o.facts, o.failed) for o in outcomes] == [(1, False)]
    assert [c.schema_name for c in llm.calls] == ["agent-step"] * MAX_STEPS + ["agent"]
    assert "No more tools" in llm.calls[-1].messages[-1].content
    assert len(s.steps()) == MAX_STEPS
    outcomes, llm = s.extract([last], max_steps=0)  # no tools at all: one call, the extraction's
    assert [c.schema_name for c in llm.calls] == ["agent"] and s.steps() == []


def test_a_refused_tool_call_is_an_error_step_the_llm_sees(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    outcomes, llm = s.extract([{**FIND, "names": ["  "]}, FINISH])
    assert [(o.facts, o.failed) for o in outcomes] == [(1, False)]
    (step,) = s.steps()
    assert TG.Error in step[RDF.type]
    assert _text(step, TG.observation) == "error: find-entities needs at least one name in 'names'"
    assert "error: find-entities needs at least one name" in llm.calls[1].messages[-1].content


def test_a_malformed_answer_mid_loop_fails_the_chunk_and_writes_nothing_for_it(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    before = set(s.store.match())
    for bad in ('{"tool": "find-entities", "names": ["x"]', {**FIND, "tool": "web-search"}, {"tool": "finish"}):
        outcomes, llm = s.extract([FIND, bad, FINISH])
        (o,) = outcomes
        assert o.failed and o.error is not None and o.error.startswith("MalformedOutput: ") and "\n" not in o.error
        assert len(llm.calls) == 2  # stopped at the bad answer
        assert set(s.store.match()) == before  # no subgraph, step or fact of the chunk


def test_a_re_extraction_and_the_documents_removal_take_the_steps_with_them(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.extract([FIND, AROUND, FINISH])
    assert len(s.steps()) == 2
    s.extract([FINISH])  # the same subgraph again, no tool this time: the old steps go
    assert s.steps() == [] and list(s.store.match(extraction_step_iri(s.activity, 1), None, None)) == []
    s.extract([FIND, FINISH])
    s.store.apply(remove=document_removal(s.store, s.document))
    left = {q.s for q in s.store.match(g=GRAPH_SOURCE)} | {q.o for q in s.store.match(g=GRAPH_SOURCE)}
    assert extraction_step_iri(s.activity, 1) not in left and s.activity not in left
    assert list(s.store.match(E("Marie Curie"), RDFS.label, Literal("Marie Curie"))) != []  # KNOWN's stays


def test_the_runtime_gives_the_agent_extractor_its_collections_tools_with_entity_vectors(tmp_path: Path) -> None:
    from provgraph.config import load_settings
    from provgraph.extract.agent_extractor import AgentExtractor
    from provgraph.runtime import Runtime

    settings = load_settings(home=str(tmp_path / "home"), collection="c", llm="none")
    with Runtime(settings, llm=ScriptedChatModel(lambda call: "")) as rt:
        (ex,) = rt.extractors("agent")
        assert isinstance(ex, AgentExtractor) and ex.component == "kg-extract-agent"
        assert ex.version.endswith("+agent.v3")
        assert ex._tools._store is rt.store and ex._tools._index is rt.entity_index  # the collection's own
        (tmp_path / "known.txt").write_text(KNOWN, encoding="utf-8")
        chunks = rt.loader().load_file(tmp_path / "known.txt").chunks
        defining = definitions_extractor(ScriptedChatModel(by_schema({"definitions": DEFINE})), entity_base=BASE)
        asyncio.run(rt.extraction([defining]).run(chunks))
        found = ex._tools.find_entities(["Madame Curie"])["entities"]["Madame Curie"]
        assert found["known"] is False
        assert [(e["label"], e["definition"]) for e in found["similar"]] == [("Marie Curie", "A physicist and chemist.")]

