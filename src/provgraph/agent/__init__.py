"""The ReAct agent: a think → act → observe loop over tools, explained step by step (SPEC §5.3).

``react`` is the loop, ``step`` the LLM's JSON step, ``tools`` the tool contract and built-in
tools, ``mcp`` tools served by MCP servers.
"""

from provgraph.agent.react import DEADLINE, FINAL_ANSWER, MAX_ITERATIONS, NO_LLM_MESSAGE, Agent
from provgraph.agent.tools import (
    RagTool,
    TextCompletionTool,
    Tool,
    ToolContext,
    ToolOutput,
    ToolSpec,
    document_query,
    knowledge_query,
)

__all__ = [
    "Agent", "NO_LLM_MESSAGE", "FINAL_ANSWER", "MAX_ITERATIONS", "DEADLINE",
    "Tool", "ToolSpec", "ToolContext", "ToolOutput", "RagTool", "TextCompletionTool",
    "knowledge_query", "document_query",
]
