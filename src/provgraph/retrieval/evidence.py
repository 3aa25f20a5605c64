"""Sentence evidence of edge sources: each source's span from its subgraph's ``tg:evidence``.

Two store operations for all the subgraphs involved: their evidence literal
(``evidence_of_subgraphs``) and every fact they contain (``facts_of_subgraphs``); the literal lists
spans in the facts' canonical order, see :mod:`provgraph.provenance.evidence`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from provgraph.events import Source
from provgraph.provenance.evidence import Span, decode_evidence
from provgraph.rdf.terms import Iri, TripleTerm
from provgraph.store.base import QuadStore

__all__ = ["subgraph_evidence", "with_evidence", "set_evidence"]


def subgraph_evidence(store: QuadStore, subgraphs: Sequence[Iri]) -> dict[Iri, dict[TripleTerm, Span]]:
    """Each subgraph's spans by fact (subgraphs without evidence are left out)."""
    unique = list(dict.fromkeys(subgraphs))
    if not unique:
        return {}
    literals = store.evidence_of_subgraphs(unique)
    facts = store.facts_of_subgraphs(list(literals)) if literals else {}
    return {sg: decode_evidence(ev.value, facts[sg]) for sg, ev in literals.items() if sg in facts}


def set_evidence(store: QuadStore, found: Mapping[TripleTerm, Sequence[Source]],
                 literals: Mapping[str, str]) -> dict[TripleTerm, list[Source]]:
    """``found`` with each source's ``evidence`` set, its subgraph's evidence literal already known.

    ``literals`` maps a subgraph to its ``tg:evidence`` text; only those subgraphs' facts are read
    (one operation, none when no subgraph has evidence).
    """
    facts = store.facts_of_subgraphs([Iri(sg) for sg in literals]) if literals else {}
    return _spanned(found, {sg.value: decode_evidence(literals[sg.value], f) for sg, f in facts.items()})


def with_evidence(
    store: QuadStore, found: Mapping[TripleTerm, Sequence[Source]]
) -> dict[TripleTerm, list[Source]]:
    """``found`` with each source's ``evidence`` set from its subgraph (two operations)."""
    subgraphs = [Iri(s.subgraph) for sources in found.values() for s in sources if s.subgraph]
    return _spanned(found, {sg.value: spans for sg, spans in subgraph_evidence(store, subgraphs).items()})


def _spanned(found: Mapping[TripleTerm, Sequence[Source]],
             spans: Mapping[str, Mapping[TripleTerm, Span]]) -> dict[TripleTerm, list[Source]]:
    """Each source with the span its subgraph's evidence gives its edge (sources without evidence as they are)."""
    return {edge: [replace(s, evidence=spans[s.subgraph].get(edge)) if s.subgraph and s.subgraph in spans else s
                   for s in sources]
            for edge, sources in found.items()}
