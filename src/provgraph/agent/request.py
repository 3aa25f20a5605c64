"""One agent request: its tools (built-in, MCP servers, groups and state) and the ReAct loop over them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from provgraph.agent.groups import request_tools
from provgraph.agent.mcp import McpTools, parse_servers
from provgraph.agent.react import Agent
from provgraph.agent.tools import Tool
from provgraph.events import Event
from provgraph.librarian.base import Librarian
from provgraph.models.base import ChatModel
from provgraph.store.base import QuadStore

__all__ = ["AgentLimits", "agent_events"]


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """The settings one agent run obeys (so the agent needs no Settings)."""

    max_iterations: int
    deadline: float | None
    collection: str
    trace: bool
    overrides: Mapping[str, Any]
    mcp_servers: Sequence[Mapping[str, Any]]


def agent_events(question: str, *, store: QuadStore, librarian: Librarian, llm: ChatModel, builtin: Sequence[Tool],
                 limits: AgentLimits, groups: Sequence[str] | None = None, state: str | None = None
                 ) -> AsyncIterator[Event]:
    """The agent's events on ``question`` with ``builtin`` tools plus the MCP servers' tools of ``groups`` in ``state``.

    The MCP servers are validated at once (ConfigError naming a bad entry), connected when iteration starts and
    closed when it ends.
    """
    servers = parse_servers(limits.mcp_servers)

    async def events() -> AsyncIterator[Event]:
        async with McpTools(servers, taken=[t.spec.name for t in builtin]) as mcp:
            tools, restricted = request_tools(builtin, mcp.tools, groups, state, limits.overrides)
            runner = Agent(store, librarian, llm, tools, restricted=restricted, max_iterations=limits.max_iterations,
                           deadline=limits.deadline, collection=limits.collection, trace=limits.trace)
            async for ev in runner.ask(question):
                yield ev

    return events()
