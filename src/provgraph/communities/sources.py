"""The sources of member facts, with each one's supporting sentence, read through the store's named operations.

Backend-neutral (``edge_sources`` and ``facts_of_subgraphs`` of store/queries.py): the same on the
embedded store and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

from provgraph.events import Source
from provgraph.provenance.evidence import decode_evidence
from provgraph.rdf.terms import Literal, TripleTerm
from provgraph.store.queries import NamedQueries, SourceRow

__all__ = ["fact_sources"]


def _int(term: Literal | None) -> int:
    return int(term.value) if term is not None else 0


def _source(row: SourceRow, fact: TripleTerm, span: tuple[int, int] | None) -> Source:
    is_page = row.page_number is not None
    nested = row.document is not None
    doc = row.document if row.document is not None else row.parent
    return Source(
        document=doc.value, title=row.title.value if row.title is not None else doc.value, chunk=row.chunk.value,
        chunk_index=_int(row.chunk_index), offset=_int(row.offset), length=_int(row.length),
        page=row.parent.value if is_page else None, page_number=_int(row.page_number) if is_page else None,
        section=row.parent.value if nested and not is_page else None,
        section_title=row.parent_label.value if nested and not is_page and row.parent_label is not None else None,
        subgraph=row.subgraph.value if row.subgraph is not None else None, edge=fact, evidence=span,
    )


def fact_sources(store: NamedQueries, facts: Sequence[TripleTerm]) -> dict[TripleTerm, list[Source]]:
    """Every source of each fact (chunk → page/section → document) with its sentence span when recorded."""
    unique = list(dict.fromkeys(facts))
    rows = store.edge_sources(unique, evidence=True) if unique else []
    subgraphs = list(dict.fromkeys(r.subgraph for r in rows if r.subgraph is not None and r.evidence is not None))
    contained = store.facts_of_subgraphs(subgraphs) if subgraphs else {}
    spans = {sg: decode_evidence(r.evidence.value, contained.get(sg, ()))
             for r in rows if (sg := r.subgraph) is not None and r.evidence is not None}
    out: dict[TripleTerm, list[Source]] = {f: [] for f in unique}
    for row in rows:
        if row.edge is None:
            continue
        fact = unique[row.edge]
        span = spans.get(row.subgraph, {}).get(fact) if row.subgraph is not None else None
        out[fact].append(_source(row, fact, span))
    return out

