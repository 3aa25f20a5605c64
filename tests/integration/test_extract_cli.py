"""`provgraph load` and `provgraph extract` with a scripted LLM: failures counted, retried alone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run
from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply, by_kind, chat, error, request_kind

GOOD = json.dumps({"relationships": [
    {"subject": "Marie Curie", "predicate": "discovered", "object": "polonium", "object_is_literal": False}]})


def _write(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "a.txt", tmp_path / "b.txt"]
    files[0].write_text("Marie Curie discovered polonium in 1898.", encoding="utf-8")
    files[1].write_text("FAIL here: Pierre Curie studied crystals.", encoding="utf-8")
    return files


def test_failed_chunks_are_counted_and_extract_retries_only_them(tmp_path: Path, llm_server: FakeOpenAIServer) -> None:
    broken = {"on": True}

    def script(recorded: Recorded) -> Reply:
        failing = broken["on"] and "FAIL here" in json.dumps(recorded.body)
        return error(500, "upstream exploded") if failing else chat(GOOD)

    llm_server.script = script
    files = _write(tmp_path)
    r = run("load", *map(str, files), "--extractors", "relationships", "--format", "json")
    assert r.code == 1
    docs = {d["document"]: d for d in json.loads(r.out)["documents"]}
    assert docs["urn:doc:a.txt"]["failed_chunks"] == 0 and docs["urn:doc:a.txt"]["facts"] == 1
    assert docs["urn:doc:b.txt"]["failed_chunks"] == 1 and docs["urn:doc:b.txt"]["facts"] == 0
    assert "ModelUnavailable: " in r.err and "upstream exploded" in r.err and "Traceback" not in r.err
    assert (docs["urn:doc:a.txt"]["status"], docs["urn:doc:b.txt"]["status"]) == ("loaded", "extraction failed")

    broken["on"] = False
    calls = len(llm_server.chat_requests())
    r = run("extract", "b.txt", "--extractor", "relationships")
    assert r.code == 0, r.err
    assert r.out == "urn:doc:b.txt: 1 chunk extraction(s) done, 1 facts, 0 failed, 0 already done\n"
    assert len(llm_server.chat_requests()) == calls + 1
    r = run("extract", "a.txt", "--extractor", "relationships")
    assert r.out == "urn:doc:a.txt: 0 chunk extraction(s) done, 0 facts, 0 failed, 1 already done\n"
    assert len(llm_server.chat_requests()) == calls + 1  # nothing to retry: no LLM call
    r = run("extract", "a.txt", "--extractor", "relationships", "--force")
    assert r.out.startswith("urn:doc:a.txt: 1 chunk extraction(s) done")
    assert len(llm_server.chat_requests()) == calls + 2


def test_the_load_table_says_which_document_failed_and_why(tmp_path: Path, llm_server: FakeOpenAIServer) -> None:
    def script(recorded: Recorded) -> Reply:
        return error(400, "scripted refusal") if "FAIL here" in json.dumps(recorded.body) else chat(GOOD)

    llm_server.script = script
    (tmp_path / "c.txt").write_text("Marie Curie discovered polonium.\n\nFAIL here: Pierre Curie studied crystals.",
                                    encoding="utf-8")
    (tmp_path / "b.txt").write_text("FAIL here: Pierre Curie studied crystals.", encoding="utf-8")
    r = run("load", str(tmp_path / "c.txt"), str(tmp_path / "b.txt"), "--extractors", "relationships",
            "--chunk-size", "45", "--chunk-overlap", "0")
    assert r.code == 1
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in r.out.splitlines() if line.startswith("│ ") and ".txt" in line}
    assert rows["b.txt"][-2:] == ["1", "extraction failed"]  # the ids `documents show` takes
    assert rows["c.txt"][-2:] == ["1", "partly extracted"]
    assert "(kg-extract-relationships): ModelError: " in r.err and "scripted refusal" in r.err


def test_llm_extractors_without_an_llm_say_how_to_configure_one(tmp_path: Path) -> None:
    files = _write(tmp_path)
    r = run("load", str(files[0]), "--extractors", "relationships")
    assert r.code == 2
    assert r.err == ("error: extractor(s) relationships need an LLM: set PROVGRAPH_LLM_BASE_URL and "
                     "PROVGRAPH_LLM_MODEL (or use --extractors cooccurrence)\n")
    assert run("extract", "missing.txt").code == 3


def test_load_with_an_ontology_end_to_end(tmp_path: Path, llm_server: FakeOpenAIServer) -> None:
    from tests.integration.test_extraction import ONTOLOGY

    onto = tmp_path / "onto.ttl"
    onto.write_text(ONTOLOGY, encoding="utf-8")
    answer = json.dumps({
        "entities": [{"name": "Marie Curie", "class": "https://example.org/onto#Scientist"}],
        "relationships": [{"subject": "Marie Curie", "property": "https://example.org/onto#discovered",
                           "object": "polonium", "object_is_literal": False}]})
    llm_server.script = by_kind({"ontology": answer})
    files = _write(tmp_path)
    r = run("load", str(files[0]), "--extractors", "ontology", "--ontology", str(onto), "--format", "json")
    assert r.code == 0, r.err
    [doc] = json.loads(r.out)["documents"]
    assert (doc["document"], doc["facts"], doc["failed_chunks"]) == ("urn:doc:a.txt", 2, 0)
    [request] = llm_server.chat_requests()
    assert "https://example.org/onto#discovered (discovered; object: an entity)" in json.dumps(request.body)
    onto_of = run("sparql", "SELECT ?o WHERE { GRAPH <urn:graph:source> { ?a tg:ontology ?o } }", "--format", "csv")
    assert onto_of.out.splitlines()[1:] == ["https://example.org/onto"]
    facts = run("sparql", "SELECT ?s ?o WHERE { ?s <https://example.org/onto#discovered> ?o }", "--format", "csv")
    assert facts.out.splitlines()[1:] == ["urn:provgraph:entity:marie%20curie,urn:provgraph:entity:polonium"]


def test_load_with_the_agent_extractor_records_its_tool_steps(tmp_path: Path, llm_server: FakeOpenAIServer) -> None:
    find = {"tool": "find-entities", "names": ["Marie Curie"], "definitions": [], "relationships": []}
    finish = {"tool": "finish", "names": [], "definitions": [], **json.loads(GOOD)}
    llm_server.script = by_kind({"agent-step": [json.dumps(find), json.dumps(finish)]})
    files = _write(tmp_path)
    r = run("load", str(files[0]), "--extractors", "agent", "--format", "json")
    assert r.code == 0, r.err
    [doc] = json.loads(r.out)["documents"]
    assert (doc["facts"], doc["failed_chunks"]) == (1, 0)
    assert [request_kind(c) for c in llm_server.chat_requests()] == ["agent-step", "agent-step"]
    steps = run("sparql", "SELECT ?n ?action ?args WHERE { GRAPH <urn:graph:source> { ?act prov:generated ?s . "
                "?s tg:stepNumber ?n ; tg:action ?action ; tg:arguments ?args } }", "--format", "json")
    rows = [{k: v["value"] for k, v in b.items()} for b in json.loads(steps.out)["results"]["bindings"]]
    assert rows == [{"n": "1", "action": "find-entities", "args": '{"names": ["Marie Curie"]}'}]
