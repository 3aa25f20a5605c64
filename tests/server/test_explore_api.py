"""The explorer's and the documents workflow's routes on a real server: what they answer, and that
another user's token sees none of it (entities, facts, removal previews, jobs, retries)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from provgraph.api.tokens import TokenStore
from tests.corpus_fixture import COLLECTION, corpus_module_env
from tests.server.live import live_server

pytestmark = pytest.mark.server
CURIE = "urn:provgraph:entity:marie%20curie"
DOC = "radium_institute.txt"


@dataclass
class Users:
    owner: httpx.Client
    other: httpx.Client
    home: Path


def seg(text: str) -> str:
    return quote(text, safe="")


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[Users]:
    home = tmp_path_factory.mktemp("explore") / "home"
    shutil.copytree(_corpus_home, home)
    tokens = TokenStore(home)
    _, owner = tokens.create("default")
    _, other = tokens.create("mallory")
    with live_server(home, env=corpus_module_env("explore_api")) as server:
        base = server.url + "/api/v1"
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {owner}"}, timeout=60) as a, \
                httpx.Client(base_url=base, headers={"Authorization": f"Bearer {other}"}, timeout=60) as b:
            assert b.post("/collections", json={"name": COLLECTION}).status_code == 201  # mallory's own, empty
            yield Users(a, b, home)


def test_entity_search_finds_names_exactly_by_keyword_and_by_spelling(users: Users) -> None:
    found = users.owner.get(f"/collections/{COLLECTION}/entities", params={"q": "Marie Curie"}).json()
    assert found[0] == {"entity": CURIE, "label": "Marie Curie", "names": ["Marie Curie"], "match": "exact",
                        "score": found[0]["score"]}
    assert {f["match"] for f in found[1:]} <= {"lexical", "fuzzy"} and len({f["entity"] for f in found}) == len(found)
    misspelt = users.owner.get(f"/collections/{COLLECTION}/entities", params={"q": "polonum"}).json()
    assert [(f["label"], f["match"]) for f in misspelt][:1] == [("polonium", "fuzzy")]
    assert users.owner.get(f"/collections/{COLLECTION}/entities", params={"q": "zzqx"}).json() == []


def test_an_entity_has_its_facts_each_with_sources_and_sentences_and_its_neighbours(users: Users) -> None:
    view = users.owner.get(f"/collections/{COLLECTION}/entities/{seg(CURIE)}").json()
    assert view["entity"] == CURIE and view["label"] == "Marie Curie" and view["facts"]
    for fact in view["facts"]:
        assert f"<{CURIE}>" in (fact["s"], fact["o"]) and fact["sources"]
        for source in fact["sources"]:
            if source["evidence"]:
                text = users.owner.get(f"/collections/{COLLECTION}/records/{seg(source['chunk'])}").json()["text"]
                ev = source["evidence"]
                assert text[ev["offset"]:ev["offset"] + ev["length"]] == ev["text"]
    ends = {f["o"][1:-1] if f["s"] == f"<{CURIE}>" else f["s"][1:-1] for f in view["facts"] if f["o"].startswith("<")}
    assert {n["entity"] for n in view["neighbours"]} == ends - {CURIE}
    assert users.owner.get(f"/collections/{COLLECTION}/entities/{seg('urn:provgraph:entity:nobody')}").status_code == 404


def test_a_chunks_facts_carry_the_sentence_in_that_chunk(users: Users) -> None:
    tree = users.owner.get(f"/collections/{COLLECTION}/provenance/{DOC}").json()
    chunk = tree["chunks"][0]
    facts = users.owner.get(f"/collections/{COLLECTION}/facts", params={"chunk": chunk["chunk"]}).json()
    # the provenance tree names an unlabelled IRI in full, the viewer by its last segment (dom.js pretty)
    shown = sorted(tuple(re.sub(r"^https?://\S+[/#]", "", label) for label in e) for e in chunk["edges"])
    assert sorted((f["labels"]["s"], f["labels"]["p"], f["labels"]["o"]) for f in facts) == shown
    assert all(s["chunk"] == chunk["chunk"] for f in facts for s in f["sources"])
    assert any(s["evidence"] for f in facts for s in f["sources"])


def test_the_removal_preview_says_what_the_removal_then_does(users: Users) -> None:
    asked = users.owner.post("/document-rag", json={"collection": COLLECTION, "question": "Who founded the Radium Institute?",
                                                    "llm": "none"}).json()["final"]
    preview = users.owner.get(f"/collections/{COLLECTION}/removal/{DOC}").json()
    assert preview["document"] == f"urn:doc:{DOC}" and preview["chunks"] == 2 and preview["facts"] > 0
    assert asked["session_id"] in {t["session_id"] for t in preview["traces"]}
    assert len(preview["sample"]) == min(20, preview["facts"])
    assert users.owner.get(f"/collections/{COLLECTION}/documents/{DOC}").status_code == 200  # nothing removed yet
    removed = users.owner.delete(f"/collections/{COLLECTION}/documents/{DOC}").json()
    assert removed["quads"] == preview["quads"]
    trace = users.owner.get(f"/collections/{COLLECTION}/traces/{asked['session_id']}").json()
    assert trace["stale"] is True
    assert users.owner.get(f"/collections/{COLLECTION}/removal/{DOC}").status_code == 404


def test_a_job_lists_each_document_and_a_clean_job_has_nothing_to_retry(users: Users, tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Irène Joliot-Curie won the Nobel Prize in Chemistry in 1935.\n", encoding="utf-8")
    with note.open("rb") as f:
        job = users.owner.post(f"/collections/{COLLECTION}/documents", files=[("files", ("note.txt", f))],
                               data={"extractors": "cooccurrence"}).json()
    assert job["documents"] == [{"file": "note.txt", "document": None, "title": None, "status": "queued", "chunks": 0,
                                 "chunks_done": 0, "facts": 0, "error": None, "failures": []}]
    for _ in range(300):
        job = users.owner.get(f"/jobs/{job['id']}").json()
        if job["status"] in ("done", "failed"):
            break
        time.sleep(0.1)
    [doc] = job["documents"]
    assert (job["status"], doc["document"], doc["status"], doc["chunks"], doc["chunks_done"]) == (
        "done", "urn:doc:note.txt", "loaded", 1, 1)
    assert doc["facts"] == job["result"]["documents"][0]["facts"] > 0
    assert [j["id"] for j in users.owner.get("/jobs", params={"collection": COLLECTION}).json()][:1] == [job["id"]]
    refused = users.owner.post(f"/jobs/{job['id']}/retry")
    assert refused.status_code == 400 and "no failed chunk extraction" in refused.json()["error"]["message"]

    # another user's token: the job, its retry and the job list do not exist for it
    assert users.other.get(f"/jobs/{job['id']}").status_code == 404
    assert users.other.post(f"/jobs/{job['id']}/retry").status_code == 404
    assert users.other.get("/jobs").json() == []


def test_another_users_token_sees_none_of_the_explorer(users: Users) -> None:
    chunk = users.owner.get(f"/collections/{COLLECTION}/provenance/polonium_and_radium.md").json()["parts"][0]["chunks"][0]
    paths = [
        (f"/collections/{COLLECTION}/entities", {"q": "Marie Curie"}),
        (f"/collections/{COLLECTION}/entities/{seg(CURIE)}", {}),
        (f"/collections/{COLLECTION}/facts", {"chunk": chunk["chunk"]}),
        (f"/collections/{COLLECTION}/removal/polonium_and_radium.md", {}),
    ]
    for path, params in paths:
        assert users.owner.get(path, params=params).status_code == 200, path
        mine = users.other.get(path, params=params)  # mallory's collection of the same name is empty
        assert mine.status_code in (200, 404), path
        assert mine.status_code == 404 or mine.json() == [], (path, mine.text)
    for path, params in paths:
        missing = users.other.get(path.replace(f"/{COLLECTION}/", "/not-there/"), params=params)
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"
