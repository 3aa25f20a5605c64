"""Two ``provgraph serve`` processes on one PostgreSQL database, each with a home of its own (as on two machines):
either answers every request as the other does, streams work through either, and what one loads the other serves.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.corpus_fixture import CORPUS
from tests.server.live import LiveServer, live_server


Q = "Who discovered polonium?"
FIRST = ("becquerel_rays.txt", "radium_institute.txt", "polonium_and_radium.md")
_VARYING = [(re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "SID"),
            (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "TIME")]


def normalised(text: str) -> str:
    """``text`` less what differs between two askings of one question (session ids, times)."""
    for pattern, stand_in in _VARYING:
        text = pattern.sub(stand_in, text)
    return text


@pytest.fixture
def replicas(pg_url: str, tmp_path: Path) -> Iterator[tuple[LiveServer, LiveServer]]:
    env = {"PROVGRAPH_STORE_URL": pg_url, "PROVGRAPH_LLM": "none"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with live_server(tmp_path / "a" / "home", env=env) as a, live_server(tmp_path / "b" / "home", env=env) as b:
        yield a, b


def _client(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url + "/api/v1", timeout=120)


def _load(http: httpx.Client, collection: str, names: tuple[str, ...]) -> None:
    files = [("files", (n, (CORPUS / n).read_bytes())) for n in names]
    job = http.post(f"/collections/{collection}/documents", files=files)
    assert job.status_code == 202, job.text
    deadline = time.monotonic() + 120
    while (view := http.get(f"/jobs/{job.json()['id']}").json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, view
        time.sleep(0.1)
    assert view["status"] == "done", view


def _answers(http: httpx.Client, collection: str) -> dict[str, Any]:
    """What a client sees of the collection: documents, one document's detail, both RAG answers, the traces."""
    docs = http.get(f"/collections/{collection}/documents")
    assert docs.status_code == 200, docs.text
    doc_rag = http.post("/document-rag", json={"collection": collection, "question": Q})
    graph_rag = http.post("/graph-rag", json={"collection": collection, "question": Q})
    assert doc_rag.status_code == graph_rag.status_code == 200, (doc_rag.text, graph_rag.text)
    focus = [s for s in graph_rag.json()["steps"] if s["step"] == "focus"]
    return {"documents": docs.json(),
            "detail": http.get(f"/collections/{collection}/documents/urn:doc:becquerel_rays.txt").json(),
            "document_rag": json.loads(normalised(json.dumps(doc_rag.json()))),
            "graph_rag_final": json.loads(normalised(json.dumps(graph_rag.json()["final"]))),
            "focus": json.loads(normalised(json.dumps(focus)))}


def _traces(http: httpx.Client, collection: str) -> list[Any]:
    listed = http.get(f"/collections/{collection}/traces")
    assert listed.status_code == 200, listed.text
    return list(listed.json())


def test_two_replicas_on_one_database_answer_alike(replicas: tuple[LiveServer, LiveServer]) -> None:
    a, b = replicas
    collection = f"r-{uuid.uuid4().hex[:8]}"
    with _client(a) as via_a, _client(b) as via_b:
        assert via_a.post("/collections", json={"name": collection}).status_code == 201
        _load(via_a, collection, FIRST)
        assert collection in [c["collection"] for c in via_b.get("/collections").json()]
        first_b, first_a = _answers(via_b, collection), _answers(via_a, collection)
        assert first_b == first_a
        assert len(first_a["documents"]) == 3 and first_a["focus"]
        traces = _traces(via_a, collection)
        assert traces == _traces(via_b, collection) and len(traces) == 4  # both asked twice, each trace seen by both
        one = traces[0]["session_id"]
        assert via_a.get(f"/collections/{collection}/traces/{one}").json() == \
            via_b.get(f"/collections/{collection}/traces/{one}").json()
        for http in (via_a, via_b):  # the SSE stream through either
            with http.stream("POST", "/graph-rag", json={"collection": collection, "question": Q},
                             headers={"Accept": "text/event-stream"}) as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                events = [json.loads(line[6:]) for line in r.iter_lines() if line]
            assert events[-1]["message_type"] == "final" and events[-1]["answer"]
        _load(via_b, collection, ("nobel_prizes.html",))  # a load through B: A's caches follow the store
        second_a, second_b = _answers(via_a, collection), _answers(via_b, collection)
        assert second_a == second_b and len(second_a["documents"]) == 4
        assert "urn:doc:nobel_prizes.html" in {d["id"] for d in second_a["documents"]}
        assert _traces(via_a, collection) == _traces(via_b, collection)
