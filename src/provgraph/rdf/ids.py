"""Identifier patterns of SPEC §3.

Pages, sections, chunks, subgraphs and activities get deterministic UUIDv5s over what
defines them, so loading or extracting the same thing twice replaces instead of duplicating.
Query session IDs are random (uuid4).

>>> document_iri("report 2024")
Iri(value='urn:doc:report%202024')
>>> page_iri(document_iri("a"), 1) == page_iri(document_iri("a"), 1)
True
>>> question_iri("abc")
Iri(value='urn:trustgraph:question:abc')
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

from provgraph.errors import InputError
from provgraph.rdf.iri import encode_segment
from provgraph.rdf.terms import _SCHEME, Iri

__all__ = [
    "PROVGRAPH_NS",
    "stable_uuid",
    "citation_iri",
    "chunk_selection_iri",
    "retraction_iri",
    "new_session_id",
    "document_iri",
    "page_iri",
    "section_iri",
    "chunk_iri",
    "subgraph_iri",
    "activity_iri",
    "extraction_step_iri",
    "agent_iri",
    "question_iri",
    "grounding_iri",
    "exploration_iri",
    "focus_iri",
    "synthesis_iri",
    "edge_selection_iri",
    "graph_rag_answer_iri",
    "docrag_question_iri",
    "docrag_exploration_iri",
    "docrag_synthesis_iri",
    "docrag_answer_iri",
    "agent_question_iri",
    "agent_analysis_iri",
    "agent_conclusion_iri",
    "agent_answer_iri",
    "session_id_of",
    "conversation_iri",
    "check_conversation_id",
]

# Fixed namespace for provgraph's UUIDv5s; changing it changes every derived ID.
PROVGRAPH_NS = uuid.UUID("5b0f7a52-3c1e-5d8e-9a51-7072766772a1")

SUBGRAPH_BASE = "https://trustgraph.ai/subgraph/"
ACTIVITY_BASE = "https://trustgraph.ai/activity/"
AGENT_BASE = "https://trustgraph.ai/agent/"


def stable_uuid(*parts: object) -> str:
    """A UUIDv5 over the parts (joined unambiguously)."""
    key = "\x1f".join(str(p) for p in parts)
    return str(uuid.uuid5(PROVGRAPH_NS, key))


def new_session_id() -> str:
    """A random session ID for one query."""
    return str(uuid.uuid4())


def document_iri(name_or_iri: str) -> Iri:
    """The document node: the user's IRI as given, or ``urn:doc:{name}``."""
    if not name_or_iri:
        raise InputError("a document ID cannot be empty")
    if _SCHEME.match(name_or_iri):
        try:
            return Iri(name_or_iri)
        except InputError:
            pass
    return Iri("urn:doc:" + encode_segment(name_or_iri))


def page_iri(document: Iri, page_number: int) -> Iri:
    """Page ``page_number`` (1-based) of a document."""
    return Iri(f"urn:page:{stable_uuid('page', document.value, page_number)}")


def section_iri(document: Iri, index: int) -> Iri:
    """Section ``index`` (1-based, in document order) of a non-paged document."""
    return Iri(f"urn:section:{stable_uuid('section', document.value, index)}")


def chunk_iri(parent: Iri, index: int, offset: int, length: int) -> Iri:
    """Chunk ``index`` of a parent, at its character offset and length."""
    return Iri(f"urn:chunk:{stable_uuid('chunk', parent.value, index, offset, length)}")


def subgraph_iri(chunk: Iri, component: str, version: str, model: str | None) -> Iri:
    """The one extraction subgraph of (chunk, component, version, model)."""
    return Iri(SUBGRAPH_BASE + stable_uuid("subgraph", chunk.value, component, version, model or ""))


def activity_iri(*defining: object) -> Iri:
    """An activity determined by what it did (e.g. chunk, component, version, model)."""
    return Iri(ACTIVITY_BASE + stable_uuid("activity", *defining))


def extraction_step_iri(activity: Iri, n: int) -> Iri:
    """Tool step ``n`` (1-based) of an extraction activity (the agent extractor's)."""
    return Iri(f"{activity.value}/step/{n}")


def agent_iri(component: str) -> Iri:
    """The stable agent of a component."""
    return Iri(AGENT_BASE + encode_segment(component))


def question_iri(sid: str) -> Iri:
    """A GraphRAG question."""
    return Iri(f"urn:trustgraph:question:{sid}")


def grounding_iri(sid: str) -> Iri:
    """A GraphRAG grounding step."""
    return Iri(f"urn:trustgraph:prov:grounding:{sid}")


def exploration_iri(sid: str) -> Iri:
    """A GraphRAG exploration step."""
    return Iri(f"urn:trustgraph:prov:exploration:{sid}")


def ranking_iri(sid: str) -> Iri:
    """A ranking step (graph-ranked passages) of a GraphRAG or retrieve trace."""
    return Iri(f"urn:trustgraph:prov:ranking:{sid}")


def focus_iri(sid: str) -> Iri:
    """A GraphRAG focus step."""
    return Iri(f"urn:trustgraph:prov:focus:{sid}")


def synthesis_iri(sid: str) -> Iri:
    """A GraphRAG synthesis step."""
    return Iri(f"urn:trustgraph:prov:synthesis:{sid}")


def edge_selection_iri(sid: str, index: int) -> Iri:
    """Edge selection ``index`` (0-based) of a GraphRAG focus."""
    return Iri(f"urn:trustgraph:prov:edge:{sid}:{index}")


def graph_rag_answer_iri(sid: str) -> Iri:
    """The librarian record holding a GraphRAG answer's text."""
    return Iri(f"urn:trustgraph:synthesis:{sid}")


def docrag_question_iri(sid: str) -> Iri:
    """A Document RAG question."""
    return Iri(f"urn:trustgraph:docrag:{sid}")


def docrag_exploration_iri(sid: str) -> Iri:
    """A Document RAG exploration step."""
    return Iri(f"urn:trustgraph:docrag:{sid}/exploration")


def docrag_synthesis_iri(sid: str) -> Iri:
    """A Document RAG synthesis step."""
    return Iri(f"urn:trustgraph:docrag:{sid}/synthesis")


def docrag_answer_iri(sid: str) -> Iri:
    """The librarian record holding a Document RAG answer."""
    return Iri(f"urn:trustgraph:docrag:{sid}/answer")


def agent_question_iri(sid: str) -> Iri:
    """An agent question."""
    return Iri(f"urn:trustgraph:agent:{sid}")


def agent_analysis_iri(sid: str, n: int) -> Iri:
    """Agent analysis step ``n`` (1-based)."""
    return Iri(f"urn:trustgraph:agent:{sid}/i{n}")


def agent_conclusion_iri(sid: str) -> Iri:
    """An agent's conclusion."""
    return Iri(f"urn:trustgraph:agent:{sid}/final")


def agent_answer_iri(sid: str) -> Iri:
    """The librarian record holding an agent's answer."""
    return Iri(f"urn:trustgraph:agent:{sid}/answer")


def global_question_iri(sid: str) -> Iri:
    """A global (community map-reduce) question; its steps are ``…/map`` and ``…/synthesis``."""
    return Iri(f"urn:provgraph:global:{sid}")


def global_answer_iri(sid: str) -> Iri:
    """The librarian record holding a global answer."""
    return Iri(f"urn:provgraph:global:{sid}/answer")


def community_iri(level: int, parent: str | None, entities: Iterable[str], facts: Iterable[str]) -> Iri:
    """A community, named by what it is: its level, parent and members (the same members, the same IRI)."""
    key = stable_uuid("community", level, parent or "-", *sorted(entities), "|", *sorted(facts))
    return Iri(f"urn:provgraph:community:{key}")


def community_run_iri(generation: int, parameters: str) -> Iri:
    """The community detection run over the knowledge graph at ``generation`` with ``parameters``."""
    return Iri(f"urn:provgraph:community-run:{stable_uuid('community-run', generation, parameters)}")


def report_iri(community: Iri, model: str | None) -> Iri:
    """The report of ``community`` written by ``model`` (None: the extractive report)."""
    return Iri(f"urn:provgraph:report:{stable_uuid('report', community.value, model or '-')}")


def session_id_of(question: Iri) -> str:
    """The session ID in a question IRI of any of the four kinds."""
    for prefix in ("urn:trustgraph:question:", "urn:trustgraph:docrag:", "urn:trustgraph:agent:",
                   "urn:provgraph:global:"):
        if question.value.startswith(prefix):
            return question.value[len(prefix):].split("/")[0]
    raise InputError(f"not a question IRI: {question}")


def citation_iri(synthesis: Iri, n: int) -> Iri:
    """Citation ``n`` (1-based, in answer order) of a synthesis step."""
    return Iri(f"{synthesis.value}/citation/{n}")


def chunk_selection_iri(exploration: Iri, rank: int) -> Iri:
    """The Document RAG selection of the chunk at ``rank`` (1-based)."""
    return Iri(f"{exploration.value}/chunk/{rank}")


def retraction_iri(document: Iri, at: str) -> Iri:
    """The retraction of ``document`` at ``at`` (an ISO time): deterministic for both."""
    return Iri(f"urn:provgraph:retraction:{stable_uuid('retraction', document.value, at)}")


_CONVERSATION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$")


def check_conversation_id(cid: str) -> str:
    """A conversation ID as given (a client may choose its own): 1-128 letters, digits, ``._:-``."""
    if not isinstance(cid, str) or not _CONVERSATION_ID.match(cid):
        raise InputError(f"bad conversation ID {cid!r}: use 1-128 letters, digits, '.', '_', ':' or '-', "
                         "starting with a letter or digit")
    return cid


def conversation_iri(cid: str) -> Iri:
    """A conversation: the turns (questions) asked under one ID."""
    return Iri("urn:trustgraph:conversation:" + encode_segment(check_conversation_id(cid)))
