"""One provenance subgraph per chunk extraction (SPEC §4.2): N ``tg:contains`` + at most 14 quads
(the 14th is the facts' sentence evidence, :mod:`provgraph.provenance.evidence`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from provgraph.provenance.common import Quads, activity_quads, agent_quads
from provgraph.provenance.evidence import Span, encode_evidence
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, TG

__all__ = ["subgraph_quads"]


def subgraph_quads(
    subgraph: Iri,
    *,
    facts: Sequence[TripleTerm],
    chunk: Iri,
    activity: Iri,
    component: str,
    version: str,
    started: datetime,
    llm_model: str | None = None,
    ontology: Iri | None = None,
    evidence: Mapping[TripleTerm, Span] | None = None,
) -> list[Quad]:
    """The subgraph, its activity and agent; one ``tg:contains <<( s p o )>>`` per distinct fact.

    ``evidence`` maps facts to the span of their supporting sentence(s) in the chunk's text.

    >>> from datetime import datetime, timezone
    >>> from provgraph.rdf.terms import Literal
    >>> f = TripleTerm(Iri("urn:e:a"), Iri("urn:p:b"), Literal("c"))
    >>> len(subgraph_quads(Iri("urn:sg:1"), facts=[f], chunk=Iri("urn:chunk:1"), activity=Iri("urn:act:1"),
    ...     component="x", version="1", started=datetime(2026, 1, 1, tzinfo=timezone.utc), llm_model="m"))
    14
    """
    q = Quads(GRAPH_SOURCE)
    seen: set[TripleTerm] = set()
    for fact in facts:
        if fact not in seen:
            seen.add(fact)
            q.add(subgraph, TG.contains, fact)
    q.types(subgraph, PROV.Entity, TG.Subgraph)
    q.add(subgraph, PROV.wasDerivedFrom, chunk).add(subgraph, PROV.wasGeneratedBy, activity)
    encoded = encode_evidence(seen, evidence or {})
    if encoded is not None:
        q.add(subgraph, TG.evidence, Literal(encoded))
    q.items += activity_quads(
        activity,
        component=component,
        version=version,
        used=chunk,
        started=started,
        graph=GRAPH_SOURCE,
        llm_model=llm_model,
        ontology=ontology,
    )
    q.items += agent_quads(component, GRAPH_SOURCE)
    return q.items
