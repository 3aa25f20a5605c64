from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run

HOSTILE_NQ = (
    '<urn:sg:1> <https://trustgraph.ai/ns/contains> <<( <urn:e:a%20b> <urn:p:rel> "x } ; DROP ALL ; {"@en )>> <urn:graph:source> .\n'
    '<urn:e:a%20b> <urn:p:rel> "x } ; DROP ALL ; {"@en .\n'
    '<urn:e:a%20b> <http://www.w3.org/2000/01/rdf-schema#label> "q\\"uote <tag> \\n 😀" .\n'
    '<urn:sg:1> <https://trustgraph.ai/ns/contains> <<( <urn:e:a%20b> <urn:p:n> "7"^^<http://www.w3.org/2001/XMLSchema#integer> )>> <urn:graph:source> .\n'
)


def test_import_sparql_export_round_trip(tmp_path: Path) -> None:
    src = tmp_path / "in.nq"
    src.write_text(HOSTILE_NQ, encoding="utf-8")
    r = run("import", str(src), "-C", "c1")
    assert r.code == 0 and "imported 4 quads into default/c1" in r.out

    r = run("sparql", "SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains <<( <urn:e:a%20b> <urn:p:rel> \"x } ; DROP ALL ; {\"@en )>> } }", "-C", "c1", "--format", "json")
    assert r.code == 0
    bindings = json.loads(r.out)["results"]["bindings"]
    assert bindings == [{"sg": {"type": "uri", "value": "urn:sg:1"}}]

    r = run("sparql", 'SELECT ?l WHERE { ?s rdfs:label ?l }', "-C", "c1", "--format", "csv")
    assert r.code == 0 and "😀" in r.out

    for fmt, suffix in (("nquads", "nq"), ("trig", "trig")):
        out = tmp_path / f"out.{suffix}"
        assert run("export", "-C", "c1", "--format", fmt, "-o", str(out)).code == 0
        assert run("import", str(out), "-C", f"copy-{suffix}").code == 0
        r1 = run("export", "-C", "c1")
        r2 = run("export", "-C", f"copy-{suffix}")
        assert sorted(r1.out.splitlines()) == sorted(r2.out.splitlines()) == sorted(HOSTILE_NQ.splitlines())


def test_import_with_syntax_error_names_the_line_and_imports_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nq"
    bad.write_text("<urn:a> <urn:b> <urn:c> .\n<urn:a> <urn:b> \"unterminated .\n", encoding="utf-8")
    r = run("import", str(bad), "-C", "c2")
    assert r.code == 2  # bad input, as the API's 400
    assert r.err.startswith(f"error: {bad}: collection default/c2: cannot import nquads (line 2)")
    assert "Traceback" not in r.err
    assert run("export", "-C", "c2").out == ""


def test_user_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    r = run("sparql", "SELECT * WHERE { ?s ?p ?o }", "-C", "missing")
    assert (r.code, r.err) == (3, "error: collection default/missing does not exist (create it with: provgraph collections create)\n")
    run("collections", "create", "c3")
    r = run("sparql", "SELECT ?x WHERE {", "-C", "c3")
    assert r.code == 2 and r.err.startswith("error: collection default/c3: invalid SPARQL: error at 1:")
    r = run("import", str(tmp_path / "nope.nq"))
    assert (r.code, r.err) == (3, f"error: {tmp_path / 'nope.nq'}: no such file\n")
    r = run("collections", "create", "../evil")
    assert r.code == 2 and "invalid collection name" in r.err


def test_collections_list_create_drop_per_user() -> None:
    assert run("collections", "create", "research", "-U", "alice").out == "created alice/research\n"
    assert run("collections", "create", "research", "-U", "alice").out == "alice/research already exists\n"
    run("collections", "create", "notes", "-U", "bob")
    listed = json.loads(run("collections", "list", "--format", "json").out)
    assert listed == [{"user": "alice", "collection": "research"}, {"user": "bob", "collection": "notes"}]
    assert json.loads(run("collections", "list", "-U", "bob", "--format", "json").out) == [{"user": "bob", "collection": "notes"}]
    assert run("collections", "drop", "research", "-U", "alice", "--yes").out == "dropped alice/research\n"
    assert run("collections", "drop", "research", "-U", "alice", "--yes").code == 3


def test_every_command_has_help_with_an_example() -> None:
    for cmd in (["sparql"], ["export"], ["import"], ["collections", "list"], ["collections", "create"], ["collections", "drop"]):
        r = run(*cmd, "--help")
        assert r.code == 0 and "Example" in r.out, cmd
