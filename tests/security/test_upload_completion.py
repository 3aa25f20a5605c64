"""High 3: a document loaded through the HTTP upload route is complete — its job says done, and
``check`` finds every document complete (the job runner writes completion records, also for a
document without chunks)."""

from __future__ import annotations

import json

from tests.security.conftest import http
from tests.server.live import LiveServer


def test_uploaded_documents_are_complete(server: LiveServer) -> None:
    api = server.url + "/api/v1"
    files = [("files", ("curie.txt", b"Marie Curie discovered polonium in 1898.\n", "text/plain")),
             ("files", ("empty.txt", b"", "text/plain"))]
    job = http.post(f"{api}/collections/up/documents", files=files).json()
    with http.stream("GET", f"{api}/jobs/{job['id']}", headers={"Accept": "text/event-stream"}) as events:
        last = [json.loads(line[6:]) for line in events.iter_lines() if line.startswith("data: ")][-1]
    assert last["status"] == "done", last
    found = http.get(f"{api}/collections/up/check").json()
    assert (found["consistent"], found["problems"]) == (True, []), found
    assert found["documents"] == len([d for d in last["documents"] if d.get("status") != "failed"]) >= 1
