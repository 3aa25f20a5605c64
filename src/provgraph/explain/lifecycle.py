"""Deleting stored traces: by ID (sub-traces go with their trace) or all started before a time.

A trace's quads (question, steps, their parts) leave ``urn:graph:retrieval`` in one transaction;
its answer records leave the librarian. Retraction records lose their link to a deleted trace
and go when no trace is left that they name. Unknown IDs fail before anything is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from provgraph.errors import InputError
from provgraph.explain.graph import TraceGraph
from provgraph.explain.traces import list_traces, resolve_question
from provgraph.librarian.base import Librarian
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, TG
from provgraph.store.base import QuadStore

__all__ = ["Deleted", "delete_traces", "traces_before", "parse_moment"]


def parse_moment(text: str, name: str) -> datetime:
    """An ISO 8601 date or time (UTC when it has no zone); a bare number is refused, not read as epoch seconds."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{name} needs an ISO date or time such as 2026-03-13 or 2026-03-13T10:00:00Z, "
                         f"got {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a deletion removed: the questions (sub-traces included) and how many quads."""

    questions: tuple[Iri, ...]
    quads: int


def traces_before(store: QuadStore, moment: datetime) -> list[str]:
    """The question IRIs of the top-level traces started before ``moment``."""
    return [s.question_iri.value for s in list_traces(store) if s.started < moment]


def delete_traces(store: QuadStore, librarian: Librarian | None, ids: Sequence[str]) -> Deleted:
    """Delete the traces named by session IDs or question IRIs; :class:`NotFound` names the first unknown one."""
    questions = list(dict.fromkeys(resolve_question(store, i) for i in ids))
    removal: list[Quad] = []
    documents: list[str] = []
    gone: list[Iri] = []
    retractions: set[Iri] = set()
    for question in questions:
        graph = TraceGraph.read(store, question)
        for node in graph.nodes.values():
            if node.has_type(TG.Retraction):
                retractions.add(node.iri)
                continue
            if node.has_type(TG.Question):
                gone.append(node.iri)
            document = node.iri_of(TG.document)
            if document is not None:
                documents.append(document.value)
            removal += store.match(node.iri, None, None, g=GRAPH_RETRIEVAL)
    named = set(gone)
    for retraction in retractions:
        quads = list(store.match(retraction, None, None, g=GRAPH_RETRIEVAL))
        links = [q for q in quads if q.p == TG.affectedTrace]
        if all(q.o in named for q in links):
            removal += quads
        else:
            removal += [q for q in links if q.o in named]
    removal = list(dict.fromkeys(removal))
    if removal:
        store.apply(remove=removal)
    if librarian is not None:
        for record in dict.fromkeys(documents):
            if librarian.exists(record):
                librarian.remove(record)
    return Deleted(tuple(dict.fromkeys(gone)), len(removal))
