"""Tracing edges and chunks to their sources (SPEC §7) with a bounded number of store queries.

For edges: EVERY subgraph that contains the fact → its chunk → page or section → document, in
one SPARQL query for all edges. For chunks: chunk → parent → document, in one query. Terms are
inlined in ``VALUES`` in their canonical N-Triples form (validated and escaped), so they are data.
"""

from __future__ import annotations

from collections.abc import Sequence

from provgraph.events import Source
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.retrieval.evidence import set_evidence
from provgraph.retrieval.read_cache import Bounded
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["edge_sources", "chunk_sources"]

_CHAIN = """
    ?chunk tg:chunkIndex ?cidx ; tg:charOffset ?coff ; tg:charLength ?clen ; prov:wasDerivedFrom ?parent .
    OPTIONAL { ?parent tg:pageNumber ?pnum }
    OPTIONAL { ?parent rdfs:label ?plabel }
    OPTIONAL { ?parent prov:wasDerivedFrom ?pdoc }
    BIND(COALESCE(?pdoc, ?parent) AS ?doc)
    OPTIONAL { ?doc dc:title ?title }
"""

# VALUES inside the GRAPH block, so the engine starts from the given terms; the edges are numbered in
# VALUES, so a row names its edge by a small integer (no triple term to read back), and ?doc is
# COALESCE(?pdoc, ?parent), computed here rather than read back a second time
_EVIDENCE = "    OPTIONAL { ?sg tg:evidence ?ev }\n"
_EDGES = "SELECT ?i ?sg ?chunk ?cidx ?coff ?clen ?parent ?pnum ?plabel ?pdoc ?title ?ev WHERE {{\n  GRAPH <urn:graph:source> {{\n    VALUES (?i ?t) {{ {values} }}\n    ?sg tg:contains ?t ; prov:wasDerivedFrom ?chunk .\n{chain}  }}\n}}"
_CHUNKS = "SELECT ?chunk ?cidx ?coff ?clen ?parent ?pnum ?plabel ?pdoc ?title WHERE {{\n  GRAPH <urn:graph:source> {{\n    VALUES ?chunk {{ {values} }}\n{chain}  }}\n}}"


def _int(term: object) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


def _source(row: dict, edge: TripleTerm | None) -> Source:
    parent = row["parent"]
    is_page = "pnum" in row
    nested = "pdoc" in row
    doc = row["pdoc"] if nested else parent
    title = row["title"].value if "title" in row else doc.value
    return Source(
        document=doc.value,
        title=title,
        chunk=row["chunk"].value,
        chunk_index=_int(row["cidx"]),
        offset=_int(row["coff"]),
        length=_int(row["clen"]),
        page=parent.value if is_page else None,
        page_number=_int(row["pnum"]) if is_page else None,
        section=parent.value if nested and not is_page else None,
        section_title=row["plabel"].value if nested and not is_page and "plabel" in row else None,
        subgraph=row["sg"].value if "sg" in row else None,
        edge=edge,
    )


def _sort_key(s: Source) -> tuple[str, int, int, int, str]:
    return (s.title, s.page_number or 0, s.offset, s.chunk_index, s.subgraph or "")


def edge_sources(store: OxigraphStore, edges: Sequence[TripleTerm], *,
                 evidence: bool = False, cache: Bounded | None = None) -> dict[TripleTerm, list[Source]]:
    """Every supporting source of each edge (one store query for all of them).

    ``evidence`` also sets each source's sentence span (as :func:`~provgraph.retrieval.evidence.with_evidence`
    does) from its subgraph's evidence literal, read by the same query. ``cache`` (valid for the store as
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


def _read_edge_sources(store: OxigraphStore, edges: list[TripleTerm], evidence: bool) -> dict[TripleTerm, list[Source]]:
    found: dict[TripleTerm, list[Source]] = {e: [] for e in edges}
    if not edges:
        return found
    query = _EDGES.format(values=" ".join(f"({i} {e})" for i, e in enumerate(edges)),
                          chain=_CHAIN + (_EVIDENCE if evidence else ""))
    literals: dict[str, str] = {}
    for row in store.select(query):
        i = row.get("i")
        if isinstance(i, Literal):
            edge = edges[int(i.value)]
            found[edge].append(_source(row, edge))
            sg, ev = row.get("sg"), row.get("ev")
            if isinstance(sg, Iri) and isinstance(ev, Literal):
                literals[sg.value] = ev.value
    found = {e: sorted(dict.fromkeys(v), key=_sort_key) for e, v in found.items()}
    return set_evidence(store, found, literals) if evidence else found


def chunk_sources(store: OxigraphStore, chunks: Sequence[Iri]) -> dict[Iri, Source]:
    """Page/section and document of each chunk (one store query for all of them)."""
    unique = list(dict.fromkeys(chunks))
    if not unique:
        return {}
    query = _CHUNKS.format(values=" ".join(str(c) for c in unique), chain=_CHAIN)
    out: dict[Iri, Source] = {}
    for row in store.select(query):
        chunk = row["chunk"]
        if isinstance(chunk, Iri) and chunk not in out:
            out[chunk] = _source(row, None)
    return out
