"""Issue 13's provenance shapes: sentence evidence in the subgraph budget, citations, chunk
selections and retraction records (exact triples)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provgraph.provenance import subgraph_quads
from provgraph.provenance.citations import (
    ChunkChoice,
    CitationRecord,
    chunk_selection_quads,
    citation_quads,
)
from provgraph.provenance.evidence import decode_evidence, encode_evidence
from provgraph.provenance.retraction import retraction_quads
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import TG
from tests.unit.provenance.helpers import nq

T = datetime(2026, 3, 13, 10, 0, tzinfo=timezone.utc)
SG, CHUNK, ACT = Iri("urn:sg:1"), Iri("urn:chunk:c"), Iri("urn:act:1")
R = "@urn:graph:retrieval"


def _facts(n: int) -> list[TripleTerm]:
    return [TripleTerm(Iri(f"urn:e:{i:03d}"), Iri("urn:p:rel"), Literal(f"v{i}")) for i in range(n)]


def test_evidence_is_one_literal_in_canonical_fact_order() -> None:
    a, b, c = _facts(3)
    quads = subgraph_quads(SG, facts=[c, a, b], chunk=CHUNK, activity=ACT, component="x", version="1", started=T,
                           evidence={c: (40, 12), a: (0, 25)})
    assert [q.o for q in quads if q.p == TG.evidence] == [Literal("0:25 - 40:12")]


def test_no_evidence_no_quad() -> None:
    quads = subgraph_quads(SG, facts=_facts(2), chunk=CHUNK, activity=ACT, component="x", version="1", started=T)
    assert not [q for q in quads if q.p == TG.evidence]


@pytest.mark.parametrize("n", [1, 2, 20, 500])
def test_budget_with_evidence_is_n_plus_14_and_n_plus_15_with_an_ontology(n: int) -> None:
    facts = _facts(n)
    spans = {f: (i, 3) for i, f in enumerate(facts)}
    common = dict(facts=facts, chunk=CHUNK, activity=ACT, component="x", version="1", started=T, evidence=spans)
    assert len(subgraph_quads(SG, **common)) == n + 13  # no LLM model (the no-LLM extractor)
    assert len(subgraph_quads(SG, llm_model="m", **common)) == n + 14
    assert len(subgraph_quads(SG, llm_model="m", ontology=Iri("urn:onto"), **common)) == n + 15


@settings(deadline=None, max_examples=50)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 400)) | st.none(), min_size=1, max_size=30))
def test_evidence_round_trips(spans: list) -> None:
    facts = _facts(len(spans))
    given_spans = {f: s for f, s in zip(facts, spans) if s is not None}
    encoded = encode_evidence(list(reversed(facts)), given_spans)
    if not given_spans:
        assert encoded is None
    else:
        assert decode_evidence(encoded, facts) == given_spans


def test_decoding_against_other_facts_gives_nothing() -> None:
    assert decode_evidence("1:2 3:4", _facts(3)) == {}


def test_citation_and_chunk_selection_quads() -> None:
    syn, x = Iri("urn:trustgraph:docrag:s/synthesis"), Iri("urn:trustgraph:docrag:s/exploration")
    c1 = Iri(f"{syn.value}/citation/1")
    quads = citation_quads(syn, [CitationRecord(c1, "[2]", 0, 12, (Iri("urn:chunk:b"),), (Iri("urn:sel:0"),))])
    assert nq(quads) == {
        f"<{syn.value}> <tg:citation> <{c1.value}> {R}", f"<{c1.value}> <rdf:type> <tg:Citation> {R}",
        f'<{c1.value}> <tg:marker> "[2]" {R}', f'<{c1.value}> <tg:charOffset> "0"^^int {R}',
        f'<{c1.value}> <tg:charLength> "12"^^int {R}', f"<{c1.value}> <tg:selectedChunk> <urn:chunk:b> {R}",
        f"<{c1.value}> <tg:selectedEdge> <urn:sel:0> {R}",
    }
    sel = Iri(f"{x.value}/chunk/1")
    assert nq(chunk_selection_quads(x, [ChunkChoice(sel, Iri("urn:chunk:b"), 1, 0.5, "dense")])) == {
        f"<{x.value}> <tg:chunkSelection> <{sel.value}> {R}", f"<{sel.value}> <rdf:type> <tg:ChunkSelection> {R}",
        f'<{sel.value}> <rdfs:label> "Rank 1" {R}', f"<{sel.value}> <tg:chunk> <urn:chunk:b> {R}",
        f'<{sel.value}> <tg:rank> "1"^^int {R}', f'<{sel.value}> <tg:retriever> "dense" {R}',
        f'<{sel.value}> <tg:score> "0.5"^^dbl {R}',
    }


def test_retraction_record_is_a_prov_activity_that_invalidated_the_document() -> None:
    r, doc, q = Iri("urn:provgraph:retraction:1"), Iri("urn:doc:a"), Iri("urn:trustgraph:question:s")
    edge = TripleTerm(Iri("urn:e:a"), Iri("urn:p:b"), Literal("c"))
    assert nq(retraction_quads(r, document=doc, at=T, reason="removed", traces=[q, q], edges=[edge],
                               chunks=[Iri("urn:chunk:x")])) == {
        f"<{r.value}> <rdf:type> <prov:Activity> {R}", f"<{r.value}> <rdf:type> <tg:Retraction> {R}",
        f'<{r.value}> <rdfs:label> "Retraction (removed)" {R}', f'<{r.value}> <tg:reason> "removed" {R}',
        f'<{r.value}> <prov:startedAtTime> "2026-03-13T10:00:00Z"^^dt {R}',
        f"<{r.value}> <prov:invalidated> <urn:doc:a> {R}", f"<{r.value}> <tg:affectedTrace> <{q.value}> {R}",
        f'<{r.value}> <tg:retractedEdge> <<( <urn:e:a> <urn:p:b> "c" )>> {R}',
        f"<{r.value}> <tg:retractedChunk> <urn:chunk:x> {R}",
    }
    with pytest.raises(ValueError):
        retraction_quads(r, document=doc, at=T, reason="forgotten", traces=[], edges=[], chunks=[])
