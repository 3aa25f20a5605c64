"""A small collection, in N-Quads, whose every named-operation answer is known by hand.

One document (a page holding chunk 1; chunk 2 directly under the document), two extraction subgraphs
sharing a fact, the facts and labels in the default graph, and a trace tree: a GraphRAG question whose
focus selected an edge, a sub-question whose step selected and cited chunks, and a retraction record.
"""

from __future__ import annotations

from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import TG

E = "http://example.org/e/"
A, B = Iri(E + "A"), Iri(E + "B")
R = Iri(E + "related")
AB = TripleTerm(A, R, B)
B_LIT = TripleTerm(B, R, Literal("lit"))
DOC, PAGE, CHUNK1, CHUNK2 = (Iri(f"urn:t:{n}") for n in ("doc", "page", "chunk1", "chunk2"))
SG1, SG2, ACT, AGENT = (Iri(f"urn:t:{n}") for n in ("sg1", "sg2", "act", "agent"))
Q1, Q2, FOCUS, SEL, STEP, CIT, RETR = (Iri(f"urn:t:{n}") for n in ("q1", "q2", "focus", "sel", "step", "cit", "retr"))
T1 = Literal("2026-01-01T00:00:00Z", datatype=Iri("http://www.w3.org/2001/XMLSchema#dateTime"))
T2 = Literal("2026-01-02T00:00:00.5Z", datatype=Iri("http://www.w3.org/2001/XMLSchema#dateTime"))
GRQ = TG.GraphRagQuestion

_P = {"a": "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "der": "<http://www.w3.org/ns/prov#wasDerivedFrom>",
      "gen": "<http://www.w3.org/ns/prov#wasGeneratedBy>", "label": "<http://www.w3.org/2000/01/rdf-schema#label>",
      "tg": "https://trustgraph.ai/ns/", "int": "<http://www.w3.org/2001/XMLSchema#integer>"}
SRC, RET = "<urn:graph:source>", "<urn:graph:retrieval>"


def _tg(name: str) -> str:
    return f"<{_P['tg']}{name}>"


def _int(n: int) -> str:
    return f'"{n}"^^{_P["int"]}'


LINES = [
    f"{DOC} {_P['a']} {_tg('Document')} {SRC} .",
    f'{DOC} <http://purl.org/dc/elements/1.1/title> "Doc One" {SRC} .',
    f'{DOC} {_tg("mimeType")} "text/plain" {SRC} .',
    f"{DOC} {_tg('pageCount')} {_int(2)} {SRC} .",
    f"{PAGE} {_P['a']} {_tg('Page')} {SRC} .",
    f"{PAGE} {_P['der']} {DOC} {SRC} .",
    f"{PAGE} {_tg('pageNumber')} {_int(1)} {SRC} .",
    f'{PAGE} {_P["label"]} "p1" {SRC} .',
    f"{PAGE} {_tg('charOffset')} {_int(0)} {SRC} .",
    f"{PAGE} {_tg('charLength')} {_int(100)} {SRC} .",
    *(f"{c} {p} {v} {SRC} ." for c, parent, idx, off in ((CHUNK1, PAGE, 0, 0), (CHUNK2, DOC, 1, 50))
      for p, v in ((_P["a"], _tg("Chunk")), (_P["der"], parent), (_tg("chunkIndex"), _int(idx)),
                   (_tg("charOffset"), _int(off)), (_tg("charLength"), _int(50)))),
    f"{SG1} {_P['a']} {_tg('Subgraph')} {SRC} .",
    f"{SG1} {_P['der']} {CHUNK1} {SRC} .",
    f"{SG1} {_P['gen']} {ACT} {SRC} .",
    f"{SG1} {_tg('contains')} {AB} {SRC} .",
    f"{SG1} {_tg('contains')} {B_LIT} {SRC} .",
    f'{SG1} {_tg("evidence")} "ev1" {SRC} .',
    f"{SG2} {_P['a']} {_tg('Subgraph')} {SRC} .",
    f"{SG2} {_P['der']} {CHUNK2} {SRC} .",
    f"{SG2} {_P['gen']} {ACT} {SRC} .",
    f"{SG2} {_tg('contains')} {AB} {SRC} .",
    f"{ACT} <http://www.w3.org/ns/prov#wasAssociatedWith> {AGENT} {SRC} .",
    f'{AGENT} {_P["label"]} "cooccurrence" {SRC} .',
    f"{A} {R} {B} .",
    f'{B} {R} "lit" .',
    f'{A} {_P["label"]} "A"@en .',
    f'{A} {_P["label"]} "Alpha" .',
    f'{B} {_P["label"]} "B" .',
    f"{Q1} {_P['a']} {_tg('Question')} {RET} .",
    f"{Q1} {_P['a']} {GRQ} {RET} .",
    f'{Q1} {_tg("query")} "who?" {RET} .',
    f"{Q1} <http://www.w3.org/ns/prov#startedAtTime> {T1} {RET} .",
    f"{Q2} {_P['a']} {_tg('Question')} {RET} .",
    f'{Q2} {_tg("query")} "sub" {RET} .',
    f"{Q2} <http://www.w3.org/ns/prov#startedAtTime> {T2} {RET} .",
    f"{Q2} <http://www.w3.org/ns/prov#wasInformedBy> {Q1} {RET} .",
    f"{FOCUS} {_P['gen']} {Q1} {RET} .",
    f"{FOCUS} {_tg('selectedEdge')} {SEL} {RET} .",
    f"{SEL} {_tg('edge')} {AB} {RET} .",
    f"{STEP} {_P['gen']} {Q2} {RET} .",
    f"{STEP} {_tg('selectedChunk')} {CHUNK2} {RET} .",
    f"{STEP} {_tg('citation')} {CIT} {RET} .",
    f"{CIT} {_tg('selectedChunk')} {CHUNK1} {RET} .",
    f"{RETR} {_tg('affectedTrace')} {Q2} {RET} .",
    f'{RETR} {_tg("reason")} "removed" {RET} .',
    f"<urn:t:unrelated> {_tg('affectedTrace')} <urn:t:q9> {RET} .",
]
NQUADS = ("\n".join(LINES) + "\n").encode()
TRACE_SUBJECTS = {Q1, Q2, FOCUS, SEL, STEP, CIT, RETR}
