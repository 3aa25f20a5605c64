"""Seed-style SPARQL: ``<< s p o >>`` read as a triple term, with a notice, through ``provgraph sparql``."""

from __future__ import annotations

import json

import pytest

from provgraph.config import Settings
from provgraph.rdf.seed_syntax import as_triple_terms
from tests.cli_runner import run


@pytest.mark.parametrize(("query", "expected", "count"), [
    ("SELECT ?sg { ?sg tg:contains << ?s ?p ?o >> }", "SELECT ?sg { ?sg tg:contains <<( ?s ?p ?o )>> }", 1),
    ("SELECT * { ?x ?y <<( ?a ?b ?c )>> }", "SELECT * { ?x ?y <<( ?a ?b ?c )>> }", 0),
    ("SELECT * { ?x ?y << ?a ?b ?c ~ ?r >> }", "SELECT * { ?x ?y << ?a ?b ?c ~ ?r >> }", 0),
    ("SELECT * { ?x ?y '<< a >>' . ?x ?z <urn:a> }  # << no >>", "SELECT * { ?x ?y '<< a >>' . ?x ?z <urn:a> }  # << no >>", 0),
    ("SELECT * { VALUES ?t { << <urn:a> <urn:b> \"<<\" >> } ?s ?p ?t FILTER(?v < 3) }",
     "SELECT * { VALUES ?t { <<( <urn:a> <urn:b> \"<<\" )>> } ?s ?p ?t FILTER(?v < 3) }", 1),
    ("SELECT * { ?a ?b << ?c ?d << ?e ?f ?g >> >> }", "SELECT * { ?a ?b <<( ?c ?d <<( ?e ?f ?g )>> )>> }", 2),
])
def test_rewrite_outside_strings_iris_and_comments(query: str, expected: str, count: int) -> None:
    assert as_triple_terms(query) == (expected, count)


def test_the_seeds_query_returns_the_subgraphs_with_a_notice(corpus_settings: Settings) -> None:
    c = corpus_settings.collection
    seed = "SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains << ?s ?p ?o >> } }"
    explicit = "SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains <<( ?s ?p ?o )>> } }"
    got = run("sparql", seed, "-C", c, "--format", "json")
    want = run("sparql", explicit, "-C", c, "--format", "json")
    assert got.code == 0 and want.code == 0
    rows = json.loads(got.out)["results"]["bindings"]
    assert len(rows) > 100 and rows == json.loads(want.out)["results"]["bindings"]
    assert "note: read 1 '<< s p o >>' as RDF 1.2 triple term(s)" in got.err
    assert want.err == ""
