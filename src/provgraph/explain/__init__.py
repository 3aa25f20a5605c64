"""Reading traces back (``traces list`` / ``traces show``) and tracing facts to their sources.

The names below load on first use, so importing a light submodule (``explain.neutralise``, which
every CLI command uses) does not load the store and trace readers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_FROM_TRACES = frozenset({"list_traces", "load_trace", "resolve_question"})


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'provgraph.explain' has no attribute {name!r}")
    module = import_module("provgraph.explain.traces" if name in _FROM_TRACES else "provgraph.explain.model")
    return getattr(module, name)
