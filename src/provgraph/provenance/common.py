"""Shared pieces of the provenance builders: a quad-list helper, LLM call records, activities, agents."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from provgraph.rdf.ids import agent_iri
from provgraph.rdf.terms import Iri, Literal, Quad, Subject, Term
from provgraph.rdf.vocab import PROV, RDF, RDFS, TG, XSD

__all__ = ["LlmCall", "Quads", "activity_quads", "agent_quads", "llm_call_quads"]


@dataclass(frozen=True, slots=True)
class LlmCall:
    """Token usage of one step's LLM calls, as recorded in a trace."""

    model: str
    input_tokens: int
    output_tokens: int
    estimated: bool = False


class Quads:
    """Collects quads for one subject-rich shape into one named graph."""

    def __init__(self, graph: Iri | None) -> None:
        self.graph = graph
        self.items: list[Quad] = []

    def add(self, s: Subject, p: Iri, o: Term) -> Quads:
        """Add one statement."""
        self.items.append(Quad(s, p, o, self.graph))
        return self

    def types(self, s: Subject, *classes: Iri) -> Quads:
        """Add ``s a C`` for each class."""
        for c in classes:
            self.add(s, RDF.type, c)
        return self

    def text(self, s: Subject, p: Iri, value: str | None) -> Quads:
        """Add a plain string literal when the value is present."""
        if value is not None:
            self.add(s, p, Literal(value))
        return self

    def integer(self, s: Subject, p: Iri, value: int | None) -> Quads:
        """Add an ``xsd:integer`` when the value is present."""
        if value is not None:
            self.add(s, p, Literal.integer(value))
        return self

    def each(self, s: Subject, p: Iri, objects: Iterable[Term]) -> Quads:
        """Add one statement per object."""
        for o in objects:
            self.add(s, p, o)
        return self


def agent_quads(component: str, graph: Iri | None) -> list[Quad]:
    """``<agent> a prov:Agent ; rdfs:label "{component}"`` — shared by every activity of the component."""
    agent = agent_iri(component)
    return Quads(graph).types(agent, PROV.Agent).text(agent, RDFS.label, component).items


def activity_quads(
    activity: Iri,
    *,
    component: str,
    version: str,
    used: Iri,
    started: datetime,
    graph: Iri | None,
    llm_model: str | None = None,
    ontology: Iri | None = None,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
) -> list[Quad]:
    """The activity block of SPEC §4 (without the agent's own two quads)."""
    q = Quads(graph).types(activity, PROV.Activity)
    q.text(activity, RDFS.label, f"{component} extraction")
    q.add(activity, PROV.used, used)
    q.add(activity, PROV.wasAssociatedWith, agent_iri(component))
    q.add(activity, PROV.startedAtTime, Literal.timestamp(started))
    q.text(activity, TG.componentVersion, version)
    q.text(activity, TG.llmModel, llm_model)
    if ontology is not None:
        q.add(activity, TG.ontology, ontology)
    q.integer(activity, TG.chunkSize, chunk_size)
    q.integer(activity, TG.chunkOverlap, chunk_overlap)
    return q.items


def llm_call_quads(step: Iri, call: LlmCall | None, graph: Iri | None) -> list[Quad]:
    """``tg:inToken``, ``tg:outToken`` and ``tg:llmModel`` of a step that called an LLM; with
    ``tg:tokensEstimated true`` when the server reported no usage and the counts are estimates."""
    if call is None:
        return []
    q = Quads(graph)
    q.integer(step, TG.inToken, call.input_tokens).integer(step, TG.outToken, call.output_tokens)
    if call.estimated:
        q.add(step, TG.tokensEstimated, Literal("true", datatype=XSD.boolean))
    return q.text(step, TG.llmModel, call.model).items
