"""Retraction records (docs/trace-format.md, "Retractions"), in ``urn:graph:retrieval``.

When a document is removed or replaced, one ``prov:Activity, tg:Retraction`` records what went
(``prov:invalidated`` the document; the facts and chunks traces had used) and which traces used
them. Old traces are never edited: a reader finds the retractions that name them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from provgraph.provenance.common import Quads
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG

__all__ = ["retraction_quads", "REASONS"]

REASONS = ("removed", "replaced")


def retraction_quads(
    retraction: Iri,
    *,
    document: Iri,
    at: datetime,
    reason: str,
    traces: Sequence[Iri],
    edges: Sequence[TripleTerm],
    chunks: Sequence[Iri],
) -> list[Quad]:
    """The retraction of ``document`` at ``at``: affected trace questions, their lost edges and chunks."""
    if reason not in REASONS:
        raise ValueError(f"unknown retraction reason {reason!r}")
    q = Quads(GRAPH_RETRIEVAL).types(retraction, PROV.Activity, TG.Retraction)
    q.text(retraction, RDFS.label, f"Retraction ({reason})").text(retraction, TG.reason, reason)
    q.add(retraction, PROV.startedAtTime, Literal.timestamp(at)).add(retraction, PROV.invalidated, document)
    q.each(retraction, TG.affectedTrace, dict.fromkeys(traces))
    q.each(retraction, TG.retractedEdge, dict.fromkeys(edges)).each(retraction, TG.retractedChunk, dict.fromkeys(chunks))
    return q.items
