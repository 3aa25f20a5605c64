"""Tracing edges and chunks to their sources (SPEC §7) with a bounded number of store queries.

For edges: EVERY subgraph that contains the fact → its chunk → page or section → document, read by
the store's ``edge_sources`` operation for all edges at once. For chunks: chunk → parent → document,
by ``chunk_sources``. Any backend answers them (store/queries.py), with the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from provgraph.events import Source
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.retrieval.evidence import set_evidence
from provgraph.retrieval.read_cache import Bounded
from provgraph.store.base import QuadStore
from provgraph.store.queries import SourceRow

__all__ = ["edge_sources", "chunk_sources"]


def _int(term: Literal | None) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


def _source(row: SourceRow, edge: TripleTerm | None) -> Source:
    parent = row.parent
    is_page = row.page_number is not None
    nested = row.document is not None
    doc = row.document if row.document is not None else parent
    return Source(
        document=doc.value,
        title=row.title.value if row.title is not None else doc.value,
        chunk=row.chunk.value,
        chunk_index=_int(row.chunk_index),
        offset=_int(row.offset),
        length=_int(row.length),
        page=parent.value if is_page else None,
        page_number=_int(row.page_number) if is_page else None,
        section=parent.value if nested and not is_page else None,
        section_title=row.parent_label.value if nested and not is_page and row.parent_label is not None else None,
        subgraph=row.subgraph.value if row.subgraph is not None else None,
        edge=edge,
    )


def _sort_key(s: Source) -> tuple[str, int, int, int, str]:
    return (s.title, s.page_number or 0, s.offset, s.chunk_index, s.subgraph or "")


def edge_sources(store: QuadStore, edges: Sequence[TripleTerm], *,
                 evidence: bool = False, cache: Bounded | None = None) -> dict[TripleTerm, list[Source]]:
    """Every supporting source of each edge (one store operation for all of them).

    ``evidence`` also sets each source's sentence span (as :func:`~provgraph.retrieval.evidence.with_evidence`
    does) from its subgraph's evidence literal, read by the same operation. ``cache`` (valid for the store as
    it is now: see :class:`~provgraph.retrieval.read_cache.ReadCache`) answers the edges it holds, and keeps
    those read: an edge's sources do not depend on the other edges asked with it.
    """
    unique = list(dict.fromkeys(edges))
    if cache is None:
        return _read_edge_sources(store, unique, evidence)

    def read(missing: list[tuple[TripleTerm, bool]]) -> dict[tuple[TripleTerm, bool], list[Source]]:
        return {(e, evidence): v for e, v in _read_edge_sources(store, [e for e, _ in missing], evidence).items()}

    held = cache.through([(e, evidence) for e in unique], read)
    return {e: list(held[(e, evidence)]) for e in unique}  # the caller's own lists


def _read_edge_sources(store: QuadStore, edges: list[TripleTerm], evidence: bool) -> dict[TripleTerm, list[Source]]:
    found: dict[TripleTerm, list[Source]] = {e: [] for e in edges}
    if not edges:
        return found
    literals: dict[str, str] = {}
    for row in store.edge_sources(edges, evidence=evidence):
        if row.edge is None:
            continue
        edge = edges[row.edge]
        found[edge].append(_source(row, edge))
        if row.subgraph is not None and row.evidence is not None:
            literals[row.subgraph.value] = row.evidence.value
    found = {e: sorted(dict.fromkeys(v), key=_sort_key) for e, v in found.items()}
    return set_evidence(store, found, literals) if evidence else found


def chunk_sources(store: QuadStore, chunks: Sequence[Iri]) -> dict[Iri, Source]:
    """Page/section and document of each chunk (one store operation for all of them)."""
    unique = list(dict.fromkeys(chunks))
    if not unique:
        return {}
    return {row.chunk: _source(row, None) for row in store.chunk_sources(unique)}
