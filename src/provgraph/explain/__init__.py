"""Reading traces back (``traces list`` / ``traces show``) and tracing facts to their sources."""

from provgraph.explain.model import (
    AgentTrace,
    Analysis,
    ChunkRef,
    Conclusion,
    DocExploration,
    DocRagTrace,
    Exploration,
    Focus,
    GraphRagTrace,
    Grounding,
    LabelledTerm,
    Question,
    SelectedEdge,
    SourceRef,
    Synthesis,
    Trace,
    TraceSummary,
    TraceType,
)
from provgraph.explain.traces import list_traces, load_trace, resolve_question

__all__ = [
    "list_traces", "load_trace", "resolve_question",
    "Trace", "TraceType", "TraceSummary", "Question", "GraphRagTrace", "DocRagTrace", "AgentTrace",
    "Grounding", "Exploration", "Focus", "Synthesis", "SelectedEdge", "LabelledTerm", "SourceRef",
    "ChunkRef", "DocExploration", "Analysis", "Conclusion",
]
