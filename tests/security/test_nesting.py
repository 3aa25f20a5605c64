"""Critical 1 and High 6: text nested past what pyoxigraph's recursion takes (it segfaults: the whole
server goes) is refused before any parser sees it — SPARQL on the API route, ``/cli sparql`` and the
CLI; N-Quads/TriG through ``provgraph import``, the import route and restore — and ``SERVICE`` is
refused without a connection. Every case runs against a real process, which must survive it."""

from __future__ import annotations

import io
import json
import re
import socket
import tarfile
from pathlib import Path

import pytest

from provgraph.errors import QueryError
from provgraph.rdf.nesting import MAX_DEPTH, CheckedReader, NestingScanner, check_query
from tests.security.conftest import QUAD, cli, count, http
from tests.server.live import LiveServer

DEEP_QUERY = "SELECT * WHERE " + "{" * 5000 + "}" * 5000  # 10 KB: segfaulted pyoxigraph 0.5.13
DEEP_NQ = ("<urn:s> <urn:p> " + "<<( <urn:s> <urn:p> " * 20000 + "<urn:o>" + " )>>" * 20000 + " .\n").encode()
DEEP_TRIG = ("<urn:g> { <urn:s> <urn:p> " + "[ <urn:p> " * 20000 + "<urn:o>" + " ]" * 20000 + " . }\n").encode()
TOO_DEEP = f"brackets nested more than {MAX_DEPTH} deep: refused before parsing (nothing was read)"
PATH_CHAIN = "SELECT * WHERE { ?s " + "a/" * 5000 + "a ?o }"  # a path of 5,000 steps overflowed at 497 steps


def test_the_scanner_counts_only_brackets_outside_strings_iris_and_comments() -> None:
    check_query('SELECT * { ?s <urn:p{{{> "{{{{ SERVICE" } # {{{{ SERVICE ' + "{" * 200)
    check_query("SELECT ?service { ?service <urn:p> :SERVICE, ex:SERVICE } " + '"""' + "{" * 200 + '\n"""')
    for bad, message in ((DEEP_QUERY, TOO_DEEP), ("SELECT * { FILTER(" + "!" * 300 + "true) }", "more than 256"),
                         (PATH_CHAIN, "more than 256 operators"),
                         ("select * { service <http://127.0.0.1:1/> { ?s ?p ?o } }", "SERVICE is refused"),
                         ("SELECT * { SERVICE SILENT ?endpoint {} }", "SERVICE is refused")):
        with pytest.raises(QueryError, match=re.escape(message)):
            check_query(bad)


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_data_is_checked_however_it_is_split(size: int) -> None:
    ok = b'<urn:g> { <urn:s> <urn:p> """' + b"[" * 500 + b'\n""" , "((((" . }\n' + b"<urn:s> <urn:p> <<( " * 60
    scanner = NestingScanner("x", "trig")
    passed = b"".join(scanner.feed(ok[i:i + size]) for i in range(0, len(ok), size)) + scanner.finish()
    assert passed == ok
    reader = CheckedReader(io.BytesIO(DEEP_TRIG), "import", "trig")
    with pytest.raises(QueryError, match=re.escape(TOO_DEEP)):
        while reader.read(size):
            pass
    assert len(CheckedReader(b"\n".join([b'<urn:s> <urn:p> "<<<<<<<<" .'] * 100), "x").read(1 << 20)) == 2899


def test_the_cli_refuses_deep_text_and_lives(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "one.nq").write_bytes(QUAD)
    assert cli(home, "import", str(tmp_path / "one.nq"), "-C", "c").returncode == 0
    for fmt, data in (("nquads", DEEP_NQ), ("trig", DEEP_TRIG)):
        (tmp_path / f"deep.{fmt}").write_bytes(data)
        r = cli(home, "import", str(tmp_path / f"deep.{fmt}"), "-C", "c", "--format", fmt)
        assert (r.returncode, r.stderr.count("\n"), r.stdout) == (2, 1, ""), r.stderr
        assert r.stderr.endswith(f"collection default/c: cannot import {fmt}: {TOO_DEEP}\n")
    r = cli(home, "sparql", DEEP_QUERY, "-C", "c")
    assert (r.returncode, r.stderr) == (2, f"error: collection default/c: invalid SPARQL: {TOO_DEEP}\n")
    r = cli(home, "sparql", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }", "-C", "c", "--format", "csv")
    assert r.stdout.splitlines() == ["n", "1"]  # nothing of the deep files was written


def test_the_server_refuses_deep_text_on_every_route_and_lives(server: LiveServer, tmp_path: Path) -> None:
    api = server.url + "/api/v1"
    r = http.post(f"{api}/collections/c/sparql", json={"query": DEEP_QUERY})
    assert (r.status_code, r.json()["error"]) == (400, {"type": "QueryError",
                                                         "message": f"collection default/c: invalid SPARQL: {TOO_DEEP}"})
    lines = [json.loads(x) for x in http.post(f"{api}/cli", json={"argv": ["sparql", DEEP_QUERY, "-C", "c"]}).text
             .splitlines()]
    assert lines == [{"stderr": f"error: collection default/c: invalid SPARQL: {TOO_DEEP}\n"}, {"exit": 2}]
    for fmt, data in (("nquads", DEEP_NQ), ("trig", DEEP_TRIG)):
        r = http.post(f"{api}/collections/c/import", params={"format": fmt}, content=data)
        assert (r.status_code, r.json()["error"]["message"]) == (
            400, f"collection default/c: cannot import {fmt}: {TOO_DEEP}")
    backup = http.get(f"{api}/collections/c/backup").content
    r = http.post(f"{api}/collections/restored/restore", content=_with_store(backup, DEEP_NQ))
    assert r.status_code == 400 and r.json()["error"]["message"].endswith(TOO_DEEP), r.text
    assert "restored" not in [c["collection"] for c in http.get(f"{api}/collections").json()]
    assert count(api, "c") == 1 and http.get(f"{api}/health").status_code == 200


def _with_store(archive: bytes, nquads: bytes) -> bytes:
    """``archive`` with its store.nq replaced (its manifest's count left as it was)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(archive)) as src, tarfile.open(fileobj=out, mode="w") as dst:
        for member in src.getmembers():
            data = nquads if member.name == "store.nq" else src.extractfile(member).read()  # type: ignore[union-attr]
            member.size = len(data)
            dst.addfile(member, io.BytesIO(data))
    return out.getvalue()


def test_service_is_refused_without_a_connection(server: LiveServer) -> None:
    api = server.url + "/api/v1"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        messages = set()
        for target in (f"http://127.0.0.1:{port}/sparql", "http://127.0.0.1:1/sparql"):
            r = http.post(f"{api}/collections/c/sparql",
                          json={"query": f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}"})
            assert r.status_code == 400
            messages.add(r.json()["error"]["message"])
        with pytest.raises(TimeoutError):
            listener.accept()  # the server never connected
    assert messages == {"collection default/c: invalid SPARQL: SERVICE is refused: queries read only this collection"}
