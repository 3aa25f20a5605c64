from __future__ import annotations

from datetime import datetime, timezone

import pytest

from provgraph.provenance import subgraph_quads
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import TG
from tests.unit.provenance.helpers import nq

T = datetime(2026, 3, 13, 10, 0, tzinfo=timezone.utc)
T_LIT = '"2026-03-13T10:00:00Z"^^dt'
SG, CHUNK, ACT = Iri("urn:sg:1"), Iri("urn:chunk:c"), Iri("urn:act:1")
S = "@urn:graph:source"
AGENT = "<https://trustgraph.ai/agent/kg-extract-relationships>"


def _facts(n: int) -> list[TripleTerm]:
    return [TripleTerm(Iri(f"urn:e:{i}"), Iri("urn:p:rel"), Literal(f"v{i}")) for i in range(n)]


def _build(n: int, **kw: object) -> list:
    return subgraph_quads(SG, facts=_facts(n), chunk=CHUNK, activity=ACT, component="kg-extract-relationships",
                          version="0.1.0", started=T, **kw)  # type: ignore[arg-type]


BLOCK = {
    f"<urn:sg:1> <rdf:type> <prov:Entity> {S}",
    f"<urn:sg:1> <rdf:type> <tg:Subgraph> {S}",
    f"<urn:sg:1> <prov:wasDerivedFrom> <urn:chunk:c> {S}",
    f"<urn:sg:1> <prov:wasGeneratedBy> <urn:act:1> {S}",
    f"<urn:act:1> <rdf:type> <prov:Activity> {S}",
    f'<urn:act:1> <rdfs:label> "kg-extract-relationships extraction" {S}',
    f"<urn:act:1> <prov:used> <urn:chunk:c> {S}",
    f"<urn:act:1> <prov:wasAssociatedWith> {AGENT} {S}",
    f"<urn:act:1> <prov:startedAtTime> {T_LIT} {S}",
    f'<urn:act:1> <tg:componentVersion> "0.1.0" {S}',
    f"{AGENT} <rdf:type> <prov:Agent> {S}",
    f'{AGENT} <rdfs:label> "kg-extract-relationships" {S}',
}


def test_exact_subgraph_without_model_or_ontology() -> None:
    assert nq(_build(2)) == BLOCK | {
        f'<urn:sg:1> <tg:contains> <<( <urn:e:0> <urn:p:rel> "v0" )>> {S}',
        f'<urn:sg:1> <tg:contains> <<( <urn:e:1> <urn:p:rel> "v1" )>> {S}',
    }


def test_exact_subgraph_with_model_and_ontology() -> None:
    quads = _build(1, llm_model="gpt-4o", ontology=Iri("https://example.org/onto"))
    assert nq(quads) == BLOCK | {
        f'<urn:sg:1> <tg:contains> <<( <urn:e:0> <urn:p:rel> "v0" )>> {S}',
        f'<urn:act:1> <tg:llmModel> "gpt-4o" {S}',
        f"<urn:act:1> <tg:ontology> <https://example.org/onto> {S}",
    }


@pytest.mark.parametrize("n", [0, 1, 20, 500])
def test_cost_is_n_plus_13(n: int) -> None:
    quads = _build(n, llm_model="m")
    assert sum(1 for q in quads if q.p == TG.contains) == n
    assert len(quads) <= n + 13
    with_onto = _build(n, llm_model="m", ontology=Iri("urn:onto"))
    assert len(with_onto) <= n + 14
    assert all(q.g == Iri("urn:graph:source") for q in with_onto)


def test_duplicate_facts_are_contained_once() -> None:
    f = _facts(1)
    quads = subgraph_quads(SG, facts=f + f, chunk=CHUNK, activity=ACT, component="c", version="1", started=T)
    assert sum(1 for q in quads if q.p == TG.contains) == 1


def test_fact_terms_keep_their_kinds() -> None:
    fact = TripleTerm(Iri("urn:s"), Iri("urn:p"), Literal("42", datatype=Iri("http://www.w3.org/2001/XMLSchema#integer")))
    quads = subgraph_quads(SG, facts=[fact], chunk=CHUNK, activity=ACT, component="c", version="1", started=T)
    assert [q.o for q in quads if q.p == TG.contains] == [fact]
