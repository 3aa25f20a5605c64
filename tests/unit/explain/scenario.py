"""A scripted collection with finished queries, written with the provenance builders only.

Sources: a paged document (2 pages, 2 chunks on page 2) and a plain-text one (1 chunk), with
one extraction subgraph per chunk; knowledge and labels in the default graph; the librarian
holds every text. Traces: a GraphRAG query, a Document RAG query and an agent run with three
analyses (the second typed ``tg:Error``) whose first step ran a GraphRAG sub-trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from provgraph.librarian.base import NewRecord
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.provenance import (
    EdgeChoice,
    LlmCall,
    agent_question_quads,
    analysis_quads,
    chunk_quads,
    conclusion_quads,
    docrag_exploration_quads,
    docrag_question_quads,
    document_quads,
    exploration_quads,
    focus_quads,
    grounding_quads,
    page_quads,
    question_quads,
    subgraph_quads,
    synthesis_quads,
)
from provgraph.rdf import ids
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import RDFS
from provgraph.store.oxigraph import OxigraphStore

T0 = datetime(2026, 3, 13, 10, 0, 0, tzinfo=timezone.utc)
E = "urn:provgraph:entity:"

MC, PO, PL, PC = (Iri(E + n) for n in ("Marie%20Curie", "polonium", "Poland", "Pierre%20Curie"))
DISC, NAMED, WORKED, DISC_IN = (Iri(E + "rel/" + n) for n in ("discovered", "named%20after", "worked%20with", "discovered%20in"))
LABELS = {MC: "Marie Curie", PO: "polonium", PL: "Poland", DISC: "discovered", NAMED: "named after", DISC_IN: "discovered in"}
# Pierre Curie and "worked with" have no rdfs:label: they fall back to their IRI's last segment.

F1 = TripleTerm(MC, DISC, PO)  # supported by two chunks (two documents)
F2 = TripleTerm(PO, NAMED, PL)
F3 = TripleTerm(PC, WORKED, MC)
F4 = TripleTerm(PO, DISC_IN, Literal("1898"))  # in the graph, but no subgraph contains it

PAGE1 = "Radioactivity was discovered by Henri Becquerel in 1896. "
PAGE2 = "In 1898 Marie Curie discovered polonium, which she named after Poland. Pierre Curie worked with her on radium."
CHUNK_A = "In 1898 Marie Curie discovered polonium, which she named after Poland."
CHUNK_B = PAGE2[len(CHUNK_A) + 1:]
JOURNAL = "Lab journal, 1898: Marie Curie discovered polonium in pitchblende."

DOC1, DOC2 = ids.document_iri("curie-notes"), ids.document_iri("lab-journal")
P1, P2 = ids.page_iri(DOC1, 1), ids.page_iri(DOC1, 2)
CA = ids.chunk_iri(P2, 1, 0, len(CHUNK_A))
CB = ids.chunk_iri(P2, 2, len(CHUNK_A) + 1, len(CHUNK_B))
CC = ids.chunk_iri(DOC2, 1, 0, len(JOURNAL))

SID_G = "6f1c2a9e-0000-4000-8000-00000000000a"
SID_D = "6f1c2a9e-0000-4000-8000-00000000000b"
SID_A = "6f1c2a9e-0000-4000-8000-00000000000c"
SID_S = "6f1c2a9e-0000-4000-8000-00000000000d"

G_QUERY = "Who discovered polonium, and what was the new element named after?"
G_ANSWER = "Marie Curie discovered polonium in 1898 and named it after Poland, her native country."
G_REASONS = ("States who discovered polonium.", "Gives the origin of the name.", "Dates the discovery.")
D_QUERY = "What does the lab journal record?"
D_ANSWER = "The journal records that Marie Curie discovered polonium in pitchblende [1]."
A_QUERY = "When was polonium discovered, and by whom?"
A_ANSWER = "Marie Curie discovered polonium in 1898."
S_QUERY = "Who discovered polonium?"
S_ANSWER = "Marie Curie discovered polonium."

CALL = LlmCall("scripted", 220, 40)


@dataclass(frozen=True)
class Scenario:
    graph_rag: Iri
    doc_rag: Iri
    agent: Iri
    sub_trace: Iri


def _sources() -> list[Quad]:
    act = ids.activity_iri("load", DOC1.value)
    act2 = ids.activity_iri("load", DOC2.value)
    quads = document_quads(DOC1, title="Radioactivity Notes", mime_type="application/pdf", page_count=2)
    quads += page_quads(P1, document=DOC1, number=1, offset=0, length=len(PAGE1), activity=act)
    quads += page_quads(P2, document=DOC1, number=2, offset=len(PAGE1), length=len(PAGE2), activity=act)
    quads += chunk_quads(CA, parent=P2, index=1, offset=0, length=len(CHUNK_A), activity=act)
    quads += chunk_quads(CB, parent=P2, index=2, offset=len(CHUNK_A) + 1, length=len(CHUNK_B), activity=act)
    quads += document_quads(DOC2, title="Lab Journal", mime_type="text/plain")
    quads += chunk_quads(CC, parent=DOC2, index=1, offset=0, length=len(JOURNAL), activity=act2)
    for chunk, facts in ((CA, [F1, F2]), (CB, [F3]), (CC, [F1])):
        sg = ids.subgraph_iri(chunk, "cooccurrence", "0.1.0", None)
        quads += subgraph_quads(sg, facts=facts, chunk=chunk, activity=ids.activity_iri(sg.value),
                                component="cooccurrence", version="0.1.0", started=T0)
    quads += [Quad(f.s, f.p, f.o) for f in (F1, F2, F3, F4)]
    quads += [Quad(term, RDFS.label, Literal(label)) for term, label in LABELS.items()]
    return quads


def _library(lib: SqliteLibrarian) -> None:
    lib.add([
        NewRecord(DOC1.value, "document", PAGE1 + PAGE2, title="Radioactivity Notes"),
        NewRecord(P1.value, "page", PAGE1, parent_id=DOC1.value, number=1, offset=0, length=len(PAGE1)),
        NewRecord(P2.value, "page", PAGE2, parent_id=DOC1.value, number=2, offset=len(PAGE1), length=len(PAGE2)),
        NewRecord(CA.value, "chunk", CHUNK_A, parent_id=P2.value, number=1, offset=0, length=len(CHUNK_A)),
        NewRecord(CB.value, "chunk", CHUNK_B, parent_id=P2.value, number=2, offset=len(CHUNK_A) + 1,
                  length=len(CHUNK_B)),
        NewRecord(DOC2.value, "document", JOURNAL, title="Lab Journal"),
        NewRecord(CC.value, "chunk", JOURNAL, parent_id=DOC2.value, number=1, offset=0, length=len(JOURNAL)),
        NewRecord(ids.graph_rag_answer_iri(SID_G).value, "answer", G_ANSWER),
        NewRecord(ids.docrag_answer_iri(SID_D).value, "answer", D_ANSWER),
        NewRecord(ids.graph_rag_answer_iri(SID_S).value, "answer", S_ANSWER),
        NewRecord(ids.agent_answer_iri(SID_A).value, "answer", A_ANSWER),
    ])


def graph_rag_quads(sid: str, *, query: str, started: datetime, choices: list[tuple[TripleTerm, str, float | None]],
                    answer: str, informed_by: Iri | None = None, grounded: bool = True) -> list[Quad]:
    """A finished GraphRAG query, step by step as the engine writes it."""
    q, x, f, a = ids.question_iri(sid), ids.exploration_iri(sid), ids.focus_iri(sid), ids.synthesis_iri(sid)
    quads = question_quads(q, query=query, started=started, informed_by=informed_by)
    g = ids.grounding_iri(sid) if grounded else None
    if g is not None:
        quads += grounding_quads(g, question=q, concepts=["polonium", "discovery"], llm=LlmCall("scripted", 50, 8))
    quads += exploration_quads(x, question=q, edge_count=12, entities=[PO, MC, PC], derived_from=g)
    selections = [EdgeChoice(ids.edge_selection_iri(sid, i), e, r, s) for i, (e, r, s) in enumerate(choices)]
    quads += focus_quads(f, question=q, exploration=x, selections=selections, llm=CALL)
    quads += synthesis_quads(a, question=q, derived_from=f, document=ids.graph_rag_answer_iri(sid), content=answer,
                             llm=LlmCall("scripted", 300, 25))
    return quads


def write_scenario(store: OxigraphStore, librarian: SqliteLibrarian) -> Scenario:
    """Write sources, knowledge, the librarian texts and the three finished queries."""
    store.add(_sources())
    _library(librarian)
    g_choices = [(F1, G_REASONS[0], 0.83), (F2, G_REASONS[1], 0.71), (F4, G_REASONS[2], None)]
    store.add(graph_rag_quads(SID_G, query=G_QUERY, started=T0 + timedelta(hours=1), choices=g_choices,
                              answer=G_ANSWER))

    dq = ids.docrag_question_iri(SID_D)
    store.add(docrag_question_quads(dq, query=D_QUERY, started=T0 + timedelta(hours=2)))
    store.add(docrag_exploration_quads(ids.docrag_exploration_iri(SID_D), question=dq, chunks=[CC, CA]))
    store.add(synthesis_quads(ids.docrag_synthesis_iri(SID_D), question=dq, derived_from=ids.docrag_exploration_iri(SID_D),
                              document=ids.docrag_answer_iri(SID_D), content=D_ANSWER, llm=CALL, cited=[CC]))

    aq = ids.agent_question_iri(SID_A)
    started = T0 + timedelta(hours=3)
    store.add(agent_question_quads(aq, query=A_QUERY, started=started))
    store.add(graph_rag_quads(SID_S, query=S_QUERY, started=started + timedelta(seconds=1),
                              choices=[(F1, "Names the discoverer.", 0.9)], answer=S_ANSWER, informed_by=aq,
                              grounded=False))
    i1, i2, i3 = (ids.agent_analysis_iri(SID_A, n) for n in (1, 2, 3))
    store.add(analysis_quads(i1, question=aq, step=1, thought="I should ask the knowledge graph.",
                             action="knowledge-query", arguments='{"question": "Who discovered polonium?"}',
                             observation=S_ANSWER, previous=None, sub_trace=ids.synthesis_iri(SID_S), llm=CALL))
    store.add(analysis_quads(i2, question=aq, step=2, thought="I need the year; let me compute it.",
                             action="calculator", arguments='{"expression": "1900 - 2"}',
                             observation="error: unknown tool 'calculator'", previous=i1, error=True))
    store.add(analysis_quads(i3, question=aq, step=3, thought="The journal gives the year.\nIt says 1898.",
                             action="text-completion", arguments='{"prompt": "year?"}', observation="1898",
                             previous=i2))
    store.add(conclusion_quads(ids.agent_conclusion_iri(SID_A), question=aq, answer=A_ANSWER,
                               termination_reason="final-answer", previous=i3, document=ids.agent_answer_iri(SID_A)))
    return Scenario(ids.question_iri(SID_G), dq, aq, ids.question_iri(SID_S))
