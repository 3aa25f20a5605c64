"""Sentence evidence of edge sources: each source's span from its subgraph's ``tg:evidence``.

One store query for all the subgraphs involved: their evidence literal and every fact they
contain (the literal lists spans in the facts' canonical order, see
:mod:`provgraph.provenance.evidence`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from provgraph.events import Source
from provgraph.provenance.evidence import Span, decode_evidence
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.store.oxigraph import OxigraphStore

__all__ = ["subgraph_evidence", "with_evidence", "set_evidence"]

_QUERY = """SELECT ?sg ?ev ?t WHERE {{ GRAPH <urn:graph:source> {{
  VALUES ?sg {{ {values} }}
  ?sg tg:evidence ?ev ; tg:contains ?t .
}} }}"""
_FACTS = "SELECT ?i ?t WHERE {{ GRAPH <urn:graph:source> {{ VALUES (?i ?sg) {{ {values} }} ?sg tg:contains ?t . }} }}"


def subgraph_evidence(store: OxigraphStore, subgraphs: Sequence[Iri]) -> dict[Iri, dict[TripleTerm, Span]]:
    """Each subgraph's spans by fact (subgraphs without evidence are left out)."""
    unique = list(dict.fromkeys(subgraphs))
    if not unique:
        return {}
    literal: dict[Iri, str] = {}
    facts: dict[Iri, list[TripleTerm]] = defaultdict(list)
    for row in store.select(_QUERY.format(values=" ".join(str(s) for s in unique))):
        sg, ev, t = row.get("sg"), row.get("ev"), row.get("t")
        if isinstance(sg, Iri) and isinstance(ev, Literal) and isinstance(t, TripleTerm):
            literal[sg] = ev.value
            facts[sg].append(t)
    return {sg: decode_evidence(text, facts[sg]) for sg, text in literal.items()}


def set_evidence(store: OxigraphStore, found: Mapping[TripleTerm, Sequence[Source]],
                 literals: Mapping[str, str]) -> dict[TripleTerm, list[Source]]:
    """``found`` with each source's ``evidence`` set, its subgraph's evidence literal already known.

    ``literals`` maps a subgraph to its ``tg:evidence`` text; only those subgraphs' facts are read
    (one query, none when no subgraph has evidence).
    """
    subgraphs = list(literals)
    facts: dict[str, list[TripleTerm]] = defaultdict(list)
    if subgraphs:
        values = " ".join(f"({i} {Iri(sg)})" for i, sg in enumerate(subgraphs))
        for row in store.select(_FACTS.format(values=values)):
            i, t = row.get("i"), row.get("t")
            if isinstance(i, Literal) and isinstance(t, TripleTerm):
                facts[subgraphs[int(i.value)]].append(t)
    return _spanned(found, {sg: decode_evidence(literals[sg], f) for sg, f in facts.items()})


def with_evidence(
    store: OxigraphStore, found: Mapping[TripleTerm, Sequence[Source]]
) -> dict[TripleTerm, list[Source]]:
    """``found`` with each source's ``evidence`` set from its subgraph (one query)."""
    subgraphs = [Iri(s.subgraph) for sources in found.values() for s in sources if s.subgraph]
    return _spanned(found, {sg.value: spans for sg, spans in subgraph_evidence(store, subgraphs).items()})


def _spanned(found: Mapping[TripleTerm, Sequence[Source]],
             spans: Mapping[str, Mapping[TripleTerm, Span]]) -> dict[TripleTerm, list[Source]]:
    """Each source with the span its subgraph's evidence gives its edge (sources without evidence as they are)."""
    return {edge: [replace(s, evidence=spans[s.subgraph].get(edge)) if s.subgraph and s.subgraph in spans else s
                   for s in sources]
            for edge, sources in found.items()}
