"""ReAct agent trace steps of SPEC §5.3, in ``urn:graph:retrieval``."""

from __future__ import annotations

from datetime import datetime

from provgraph.provenance.common import LlmCall, Quads, llm_call_quads
from provgraph.provenance.graph_rag import question_quads
from provgraph.rdf.terms import Iri, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, PROV, RDFS, TG

__all__ = ["agent_question_quads", "analysis_quads", "conclusion_quads"]

G = GRAPH_RETRIEVAL


def agent_question_quads(question: Iri, *, query: str, started: datetime) -> list[Quad]:
    """The agent question activity."""
    return question_quads(question, query=query, started=started, kind=TG.AgentQuestion, label="Agent Question")


def analysis_quads(
    analysis: Iri,
    *,
    question: Iri,
    step: int,
    thought: str,
    action: str | None,
    arguments: str | None,
    observation: str | None,
    previous: Iri | None,
    sub_trace: Iri | None = None,
    error: bool = False,
    llm: LlmCall | None = None,
) -> list[Quad]:
    """One think → act → observe iteration (``step`` is 1-based).

    ``sub_trace`` is the synthesis of a GraphRAG/Document RAG trace the action ran; ``error``
    types the step ``tg:Error`` as well (failed tool or unparsable LLM step).
    """
    q = Quads(G).types(analysis, PROV.Entity, TG.Analysis)
    if error:
        q.types(analysis, TG.Error)
    q.text(analysis, RDFS.label, f"Analysis {step}").integer(analysis, TG.stepNumber, step)
    q.text(analysis, TG.thought, thought).text(analysis, TG.action, action)
    q.text(analysis, TG.arguments, arguments).text(analysis, TG.observation, observation)
    q.add(analysis, PROV.wasGeneratedBy, question)
    if previous is not None:
        q.add(analysis, PROV.wasDerivedFrom, previous)
    if sub_trace is not None:
        q.add(analysis, PROV.wasDerivedFrom, sub_trace)
    return q.items + llm_call_quads(analysis, llm, G)


def conclusion_quads(
    conclusion: Iri,
    *,
    question: Iri,
    answer: str,
    termination_reason: str,
    previous: Iri | None,
    document: Iri,
    llm: LlmCall | None = None,
) -> list[Quad]:
    """The conclusion: the final answer (inline and in the librarian) and why the loop ended."""
    q = Quads(G).types(conclusion, PROV.Entity, TG.Conclusion, TG.Answer)
    q.text(conclusion, RDFS.label, "Conclusion").text(conclusion, TG.answer, answer)
    q.add(conclusion, PROV.wasGeneratedBy, question)
    if previous is not None:
        q.add(conclusion, PROV.wasDerivedFrom, previous)
    q.text(conclusion, TG.terminationReason, termination_reason).add(conclusion, TG.document, document)
    return q.items + llm_call_quads(conclusion, llm, G)
