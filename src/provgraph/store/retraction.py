"""Which stored traces used a document, as a retraction record to write when it goes.

Read BEFORE the document is removed (its subgraphs and chunks must still be there), and written
in the same transaction as the removal: the traces whose selected edges a subgraph of the
document contains, or whose exploration or citations name one of its chunks. Nothing is
written when no trace used the document.
"""

from __future__ import annotations

from datetime import datetime

from provgraph.provenance.retraction import retraction_quads
from provgraph.rdf.ids import retraction_iri
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.store.base import QuadStore

__all__ = ["retraction_for"]


def retraction_for(store: QuadStore, document: Iri, *, at: datetime, reason: str) -> list[Quad]:
    """The retraction record of ``document`` (``reason``: removed or replaced), or [] if no trace used it."""
    tree = store.derived_nodes(document)
    subgraphs = sorted((n for n, is_subgraph in tree.items() if is_subgraph), key=str)
    chunks = sorted((n for n, is_subgraph in tree.items() if not is_subgraph), key=str)
    traces: list[Iri] = []
    edges: list[TripleTerm] = []
    gone_chunks: list[Iri] = []
    for q, t in store.traces_using_edges(subgraphs):
        traces.append(q)
        edges.append(t)
    for q, c in store.traces_using_chunks(chunks):
        traces.append(q)
        gone_chunks.append(c)
    if not traces:
        return []
    stamp = Literal.timestamp(at).value
    return retraction_quads(retraction_iri(document, stamp), document=document, at=at, reason=reason,
                            traces=sorted(set(traces), key=str), edges=sorted(set(edges), key=str),
                            chunks=sorted(set(gone_chunks), key=str))
