"""Pure provenance builders (no I/O; the clock is passed in): artefacts and steps → quads."""

from provgraph.provenance.agent import agent_question_quads, analysis_quads, conclusion_quads
from provgraph.provenance.common import LlmCall, activity_quads, agent_quads
from provgraph.provenance.doc_rag import docrag_exploration_quads, docrag_question_quads
from provgraph.provenance.graph_rag import (
    EdgeChoice,
    exploration_quads,
    focus_quads,
    grounding_quads,
    question_quads,
    synthesis_quads,
)
from provgraph.provenance.source import chunk_quads, document_quads, page_quads, section_quads
from provgraph.provenance.subgraph import subgraph_quads

__all__ = [
    "LlmCall", "EdgeChoice", "activity_quads", "agent_quads",
    "document_quads", "page_quads", "section_quads", "chunk_quads", "subgraph_quads",
    "question_quads", "grounding_quads", "exploration_quads", "focus_quads", "synthesis_quads",
    "docrag_question_quads", "docrag_exploration_quads",
    "agent_question_quads", "analysis_quads", "conclusion_quads",
]
