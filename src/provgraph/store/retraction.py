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
from provgraph.store.oxigraph import OxigraphStore
from provgraph.store.support import document_tree

__all__ = ["retraction_for"]

# terms are inlined in canonical N-Triples form (IRIs validated), as data
_EDGES = """SELECT DISTINCT ?q ?t WHERE {{
  GRAPH <urn:graph:source> {{ VALUES ?sg {{ {values} }} ?sg tg:contains ?t }}
  GRAPH <urn:graph:retrieval> {{ ?sel tg:edge ?t . ?focus tg:selectedEdge ?sel ; prov:wasGeneratedBy ?q }}
}}"""
_CHUNKS = """SELECT DISTINCT ?q ?c WHERE {{ GRAPH <urn:graph:retrieval> {{
  VALUES ?c {{ {values} }}
  {{ ?step tg:selectedChunk ?c ; prov:wasGeneratedBy ?q }}
  UNION {{ ?cit tg:selectedChunk ?c . ?step tg:citation ?cit ; prov:wasGeneratedBy ?q }}
}} }}"""
_BATCH = 500  # terms per VALUES block


def _rows(store: OxigraphStore, template: str, terms: list[Iri]) -> list[dict]:
    out: list[dict] = []
    for i in range(0, len(terms), _BATCH):
        out += store.select(template.format(values=" ".join(str(t) for t in terms[i:i + _BATCH])))
    return out


def retraction_for(store: OxigraphStore, document: Iri, *, at: datetime, reason: str) -> list[Quad]:
    """The retraction record of ``document`` (``reason``: removed or replaced), or [] if no trace used it."""
    tree = document_tree(store, document)
    subgraphs = sorted((n for n, is_subgraph in tree.items() if is_subgraph), key=str)
    chunks = sorted((n for n, is_subgraph in tree.items() if not is_subgraph), key=str)
    traces: list[Iri] = []
    edges: list[TripleTerm] = []
    gone_chunks: list[Iri] = []
    for row in _rows(store, _EDGES, subgraphs):
        q, t = row.get("q"), row.get("t")
        if isinstance(q, Iri) and isinstance(t, TripleTerm):
            traces.append(q)
            edges.append(t)
    for row in _rows(store, _CHUNKS, chunks):
        q, c = row.get("q"), row.get("c")
        if isinstance(q, Iri) and isinstance(c, Iri):
            traces.append(q)
            gone_chunks.append(c)
    if not traces:
        return []
    stamp = Literal.timestamp(at).value
    return retraction_quads(retraction_iri(document, stamp), document=document, at=at, reason=reason,
                            traces=sorted(set(traces), key=str), edges=sorted(set(edges), key=str),
                            chunks=sorted(set(gone_chunks), key=str))
