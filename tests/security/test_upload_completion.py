"""High 3: a document loaded through the HTTP upload route is complete — its job says done, and
``check`` finds every document complete (the job runner writes completion records, also for a
document without chunks) — so uploading the same files again redoes nothing (an empty file is refused)."""

from __future__ import annotations

import json
from typing import Any

from tests.security.conftest import http
from tests.server.live import LiveServer

FILES = [("files", ("curie.txt", b"Marie Curie discovered polonium in 1898.\n", "text/plain")),
         ("files", ("empty.txt", b"", "text/plain"))]


def _upload(api: str) -> dict[str, Any]:
    job = http.post(f"{api}/collections/up/documents", files=FILES).json()
    with http.stream("GET", f"{api}/jobs/{job['id']}", headers={"Accept": "text/event-stream"}) as events:
        return [json.loads(line[6:]) for line in events.iter_lines() if line.startswith("data: ")][-1]  # type: ignore[no-any-return]


def test_uploaded_documents_are_complete(server: LiveServer) -> None:
    api = server.url + "/api/v1"
    last = _upload(api)
    assert last["status"] == "done", last
    found = http.get(f"{api}/collections/up/check").json()
    assert (found["consistent"], found["problems"]) == (True, []), found
    loaded = [d for d in last["documents"] if d.get("status") != "failed"]
    assert found["documents"] == len(loaded) >= 1
    again = _upload(api)  # before: an incomplete document is loaded and extracted again, on every upload
    assert again["status"] == "done", again
    assert [(d["document"], d["status"]) for d in again["documents"] if d["status"] != "failed"] == [
        (d["document"], "unchanged") for d in loaded]
    assert http.get(f"{api}/collections/up/check").json()["problems"] == []
