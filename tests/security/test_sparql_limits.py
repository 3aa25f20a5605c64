"""High 8 and the Medium SPARQL timeout: results are streamed and capped (rows, bytes) with a truncation
signal, every query has a deadline (the server's ``--timeout``, the CLI's ``--timeout``, ``/cli``
under the server's; its caps too), a reader that leaves stops the query's thread, and shutdown is not held."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import httpx
import pytest

from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.store.oxigraph import OxigraphStore
from provgraph.store.sparql_run import QueryTimeout, ResultLimits, Truncated, run_query
from tests.security.conftest import cli, http, serving
from tests.server.live import LiveServer

QUADS = "".join(f'<urn:s{i}> <urn:p> "{i}" .\n' for i in range(200)).encode()
ALL = "SELECT ?s ?o WHERE { ?s ?p ?o }"
STREAMING = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"  # 8,000,000 rows, produced one by one
# One row, after counting 200**4 = 1.6e9 joined rows: minutes of work on any machine (5.5 s for 200**3 here),
# so no result comes by a deadline of seconds however idle the machine. Its thread runs on until its server
# stops (pyoxigraph cannot cancel it): the tests sending it come last in this module.
BLOCKING = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory, QUADS, "--max-result-rows", "50", "--max-result-mb", "0.01") as server:
        yield server


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory, QUADS, "--timeout", "2") as server:
        yield server


def _sparql(server: LiveServer, query: str) -> httpx.Response:
    return http.post(f"{server.url}/api/v1/collections/c/sparql", json={"query": query})


def test_results_past_the_row_cap_end_with_a_truncation_signal(tight: LiveServer) -> None:
    found = _sparql(tight, ALL).json()
    assert len(found["results"]["bindings"]) == 50
    assert found["truncated"] == {"reason": "rows", "message": "only the first 50 results are sent (the limit): "
                                  "narrow the query or page it with LIMIT and OFFSET"}
    whole = _sparql(tight, ALL + " LIMIT 20").json()
    assert len(whole["results"]["bindings"]) == 20 and "truncated" not in whole
    triples = _sparql(tight, "CONSTRUCT WHERE { ?s ?p ?o }").text.splitlines()
    assert len(triples) == 51 and triples[-1].startswith("# truncated: only the first 50 results")


def test_results_past_the_byte_cap_end_with_a_truncation_signal(tight: LiveServer) -> None:
    pad = "x" * 500
    found = _sparql(tight, f'SELECT ?v WHERE {{ ?s ?p ?o BIND(CONCAT(?o, "{pad}") AS ?v) }}').json()
    assert found["truncated"]["reason"] == "bytes"
    rows = len(found["results"]["bindings"])
    assert 0 < rows < 50 and found["truncated"]["message"].startswith(f"only the first {rows} results are sent")
    assert len(json.dumps(found["results"])) <= 0.01 * 2**20 + 100


def test_cli_sparql_obeys_the_servers_result_caps(tight: LiveServer) -> None:
    """/cli's sparql is capped as the route is (before, /cli ran it without the route's caps)."""
    pad = "x" * 500
    for query, reason in ((ALL, "only the first 50 results are sent (the limit)"),
                          (f'SELECT ?v WHERE {{ ?s ?p ?o BIND(CONCAT(?o, "{pad}") AS ?v) }}', "they reach the limit")):
        r = http.post(f"{tight.url}/api/v1/cli", json={"argv": ["sparql", query, "-C", "c", "--format", "csv"]})
        lines = [json.loads(x) for x in r.text.splitlines()]
        out = "".join(x.get("stdout", "") for x in lines)
        [warning] = [x["stderr"] for x in lines if "stderr" in x]
        assert lines[-1] == {"exit": 0} and warning.startswith("warning: only the first ") and reason in warning
        rows = len(out.splitlines()) - 1
        assert 0 < rows <= 50 and len(out) <= 0.01 * 2**20 + 600, (rows, len(out))

def test_results_still_coming_at_the_deadline_are_cut_there(slow: LiveServer) -> None:
    found = _sparql(slow, STREAMING).json()
    assert found["truncated"]["reason"] == "timeout"
    assert 0 < len(found["results"]["bindings"]) < 8_000_000


class _Held:
    """A source whose query computes until ``release`` is set (as a long aggregate does), then answers."""

    def __init__(self, store: OxigraphStore) -> None:
        self.name, self.release, self._store = "held", threading.Event(), store

    def raw_query(self, sparql: str) -> object:
        self.release.wait(timeout=60)
        return self._store.raw_query(sparql)


def test_a_reader_that_leaves_stops_the_querys_thread() -> None:
    store = OxigraphStore()
    store.add([Quad(Iri(f"urn:s{i}"), Iri("urn:p"), Literal(str(i))) for i in range(200)])
    before = {t for t in threading.enumerate() if t.name == "sparql"}
    results = run_query(lambda: nullcontext(store), STREAMING, "json", ResultLimits())
    assert next(results) == "json" and next(results).startswith(b'{"head":{"vars":["a","b","c","d","e","f","g","h","i"]}')
    (worker,) = {t for t in threading.enumerate() if t.name == "sparql"} - before
    results.cancel()
    worker.join(timeout=60)
    assert not worker.is_alive()  # it stopped at its next row, 8,000,000 rows early
    held = _Held(store)
    with pytest.raises(QueryTimeout):
        next(run_query(lambda: nullcontext(held), ALL, "rows", ResultLimits(timeout_s=0.2)))
    held.release.set()  # the query computes on after its timeout; then its thread ends, having sent nothing
    (late,) = {t for t in threading.enumerate() if t.name == "sparql"} - before
    late.join(timeout=60)
    assert not late.is_alive()
    got = list(run_query(lambda: nullcontext(store), ALL, "rows", ResultLimits(max_rows=3)))
    assert got[:2] == ["rows", ["s", "o"]] and len(got) == 6 and isinstance(got[-1], Truncated)


def test_a_query_without_results_by_the_deadline_is_a_408_and_the_server_goes_on(slow: LiveServer) -> None:
    r = _sparql(slow, BLOCKING)
    assert (r.status_code, r.json()["error"]) == (408, {
        "type": "Timeout", "message": "the query took longer than the server's limit of 2 s"})
    assert _sparql(slow, "ASK { ?s ?p ?o }").json() == {"head": {}, "boolean": True}


def test_cli_sparql_obeys_its_timeout_and_the_servers(slow: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "q.nq").write_bytes(QUADS)
    assert cli(home, "import", str(tmp_path / "q.nq"), "-C", "c").returncode == 0
    r = cli(home, "sparql", BLOCKING, "-C", "c", "--timeout", "0.5")
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", "error: collection default/c: the query took longer than the limit of 0.5 s\n")
    lines = [json.loads(x) for x in http.post(f"{slow.url}/api/v1/cli", json={"argv": ["sparql", BLOCKING, "-C", "c"]})
             .text.splitlines()]
    assert lines == [{"stderr": "error: collection default/c: the query took longer than the limit of 2 s\n"},
                     {"exit": 2}]


def test_shutdown_is_held_neither_by_a_query_whose_reader_left_nor_one_computing_its_first_result(
        slow: LiveServer) -> None:
    """Last in this module: stops ``slow``, whose threads still count the blocking queries' rows."""
    with http.stream("POST", f"{slow.url}/api/v1/collections/c/sparql", json={"query": STREAMING}) as r:
        assert next(r.iter_bytes()).startswith(b'{"head"')
    assert _sparql(slow, BLOCKING).status_code == 408
    code = slow.stop()
    assert code in (0, -15)
    stopped = [line for line in slow.log().splitlines() if line.startswith("provgraph stopped")]
    assert stopped == ["provgraph stopped: 1 collection(s) flushed and closed"]

