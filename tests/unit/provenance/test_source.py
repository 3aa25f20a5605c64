from __future__ import annotations

from provgraph.provenance import activity_quads, agent_quads, chunk_quads, document_quads, page_quads, section_quads
from provgraph.rdf.terms import Iri
from tests.unit.provenance.helpers import nq

from .test_subgraph import T, T_LIT

DOC, PAGE, CHUNK, ACT = Iri("urn:doc:d"), Iri("urn:page:p"), Iri("urn:chunk:c"), Iri("urn:act:a")
S = "@urn:graph:source"


def test_document_minimal() -> None:
    assert nq(document_quads(DOC, title="Report", mime_type="text/plain")) == {
        f"<urn:doc:d> <rdf:type> <prov:Entity> {S}",
        f"<urn:doc:d> <rdf:type> <tg:Document> {S}",
        f'<urn:doc:d> <dc:title> "Report" {S}',
        f'<urn:doc:d> <rdfs:label> "Report" {S}',
        f'<urn:doc:d> <tg:mimeType> "text/plain" {S}',
    }


def test_document_with_pages_and_dublin_core() -> None:
    quads = document_quads(
        DOC, title="R", mime_type="application/pdf", page_count=12,
        metadata={"source": "https://x.org/r.pdf", "date": "2024-01-01", "creator": "Ann", "other": "ignored"},
    )
    assert nq(quads) - nq(document_quads(DOC, title="R", mime_type="application/pdf")) == {
        f'<urn:doc:d> <tg:pageCount> "12"^^int {S}',
        f'<urn:doc:d> <dc:source> "https://x.org/r.pdf" {S}',
        f'<urn:doc:d> <dc:date> "2024-01-01" {S}',
        f'<urn:doc:d> <dc:creator> "Ann" {S}',
    }


def test_page() -> None:
    assert nq(page_quads(PAGE, document=DOC, number=2, offset=1834, length=2011, activity=ACT)) == {
        f"<urn:page:p> <rdf:type> <prov:Entity> {S}",
        f"<urn:page:p> <rdf:type> <tg:Page> {S}",
        f'<urn:page:p> <rdfs:label> "Page 2" {S}',
        f'<urn:page:p> <tg:pageNumber> "2"^^int {S}',
        f'<urn:page:p> <tg:charOffset> "1834"^^int {S}',
        f'<urn:page:p> <tg:charLength> "2011"^^int {S}',
        f"<urn:page:p> <prov:wasDerivedFrom> <urn:doc:d> {S}",
        f"<urn:page:p> <prov:wasGeneratedBy> <urn:act:a> {S}",
    }


def test_section() -> None:
    sec = Iri("urn:section:s")
    assert nq(section_quads(sec, document=DOC, label="Intro", offset=0, length=10, activity=ACT)) == {
        f"<urn:section:s> <rdf:type> <prov:Entity> {S}",
        f"<urn:section:s> <rdf:type> <tg:Section> {S}",
        f'<urn:section:s> <rdfs:label> "Intro" {S}',
        f'<urn:section:s> <tg:charOffset> "0"^^int {S}',
        f'<urn:section:s> <tg:charLength> "10"^^int {S}',
        f"<urn:section:s> <prov:wasDerivedFrom> <urn:doc:d> {S}",
        f"<urn:section:s> <prov:wasGeneratedBy> <urn:act:a> {S}",
    }


def test_chunk() -> None:
    assert nq(chunk_quads(CHUNK, parent=PAGE, index=3, offset=412, length=980, activity=ACT)) == {
        f"<urn:chunk:c> <rdf:type> <prov:Entity> {S}",
        f"<urn:chunk:c> <rdf:type> <tg:Chunk> {S}",
        f'<urn:chunk:c> <rdfs:label> "Chunk 3" {S}',
        f'<urn:chunk:c> <tg:chunkIndex> "3"^^int {S}',
        f'<urn:chunk:c> <tg:charOffset> "412"^^int {S}',
        f'<urn:chunk:c> <tg:charLength> "980"^^int {S}',
        f"<urn:chunk:c> <prov:wasDerivedFrom> <urn:page:p> {S}",
        f"<urn:chunk:c> <prov:wasGeneratedBy> <urn:act:a> {S}",
    }


def test_chunker_activity_and_agent() -> None:
    quads = activity_quads(ACT, component="chunker", version="0.1.0", used=PAGE, started=T,
                           graph=Iri("urn:graph:source"), chunk_size=2000, chunk_overlap=100)
    assert nq(quads + agent_quads("chunker", Iri("urn:graph:source"))) == {
        f"<urn:act:a> <rdf:type> <prov:Activity> {S}",
        f'<urn:act:a> <rdfs:label> "chunker extraction" {S}',
        f"<urn:act:a> <prov:used> <urn:page:p> {S}",
        f"<urn:act:a> <prov:wasAssociatedWith> <https://trustgraph.ai/agent/chunker> {S}",
        f"<urn:act:a> <prov:startedAtTime> {T_LIT} {S}",
        f'<urn:act:a> <tg:componentVersion> "0.1.0" {S}',
        f'<urn:act:a> <tg:chunkSize> "2000"^^int {S}',
        f'<urn:act:a> <tg:chunkOverlap> "100"^^int {S}',
        f"<https://trustgraph.ai/agent/chunker> <rdf:type> <prov:Agent> {S}",
        f'<https://trustgraph.ai/agent/chunker> <rdfs:label> "chunker" {S}',
    }
