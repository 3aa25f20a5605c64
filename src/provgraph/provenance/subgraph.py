"""One provenance subgraph per chunk extraction (SPEC §4.2): N ``tg:contains`` + at most 14 quads
(the 14th is the facts' sentence evidence, :mod:`provgraph.provenance.evidence`), plus the agent
extractor's tool steps when it took any (each a ``tg:Analysis`` its activity ``prov:generated``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from provgraph.provenance.common import LlmCall, Quads, activity_quads, agent_quads, llm_call_quads
from provgraph.provenance.evidence import Span, encode_evidence
from provgraph.rdf.ids import extraction_step_iri
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDFS, TG

__all__ = ["ToolStep", "subgraph_quads", "step_quads"]


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One tool call an extraction made: the tool, its arguments (JSON), what it returned, and the
    LLM call that chose it. ``error``: the tool refused the arguments (the observation says why)."""

    action: str
    arguments: str
    observation: str
    error: bool = False
    llm: LlmCall | None = None


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
    steps: Sequence[ToolStep] = (),
) -> list[Quad]:
    """The subgraph, its activity and agent; one ``tg:contains <<( s p o )>>`` per distinct fact.

    ``evidence`` maps facts to the span of their supporting sentence(s) in the chunk's text;
    ``steps`` are the tool calls the extraction made (:func:`step_quads`).

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
    return q.items + step_quads(activity, steps)


def step_quads(activity: Iri, steps: Sequence[ToolStep]) -> list[Quad]:
    """Each tool step as ``<act> prov:generated <step>``, the step a ``tg:Analysis`` of the activity
    (as a query agent's iteration: number, action, arguments, observation, the LLM call's tokens),
    derived from the step before it. The forward link is what removing the subgraph follows."""
    q = Quads(GRAPH_SOURCE)
    previous: Iri | None = None
    for n, step in enumerate(steps, 1):
        node = extraction_step_iri(activity, n)
        q.add(activity, PROV.generated, node).types(node, PROV.Entity, TG.Analysis)
        if step.error:
            q.types(node, TG.Error)
        q.text(node, RDFS.label, f"Analysis {n}").integer(node, TG.stepNumber, n)
        q.text(node, TG.action, step.action).text(node, TG.arguments, step.arguments)
        q.text(node, TG.observation, step.observation).add(node, PROV.wasGeneratedBy, activity)
        if previous is not None:
            q.add(node, PROV.wasDerivedFrom, previous)
        q.items += llm_call_quads(node, step.llm, GRAPH_SOURCE)
        previous = node
    return q.items
