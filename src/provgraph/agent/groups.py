"""Tool groups and states: which tools one agent request may use (docs/configuration.md, "Agent tool groups").

As in TrustGraph's agent, every tool belongs to groups (a tool configured with none is in
``default``) and may list the states it applies in (none listed: every state). A request names
groups (none: ``default``; ``*``: every group) and a state (none: ``undefined``); the agent gets
the tools that share a group with the request and apply in its state. A group no tool has is an
error, and so is a request that leaves no tool.

The built-in tools' groups: ``knowledge-query`` in default and knowledge, ``document-query`` in
default and documents, ``text-completion`` in default and text, MCP tools in default and mcp; the
``agent_tools`` setting overrides them per tool name (``{"document-query": {"group": ["docs"],
"applicable-states": ["undefined"]}}``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from provgraph.agent.tools import Tool
from provgraph.errors import ConfigError, InputError

__all__ = ["BUILTIN_GROUPS", "tool_groups", "select_tools", "request_tools", "DEFAULT_STATE"]

DEFAULT_GROUP = "default"
DEFAULT_STATE = "undefined"
BUILTIN_GROUPS: dict[str, tuple[str, ...]] = {
    "knowledge-query": (DEFAULT_GROUP, "knowledge"),
    "document-query": (DEFAULT_GROUP, "documents"),
    "text-completion": (DEFAULT_GROUP, "text"),
}
_MCP_GROUPS = (DEFAULT_GROUP, "mcp")


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"agent_tools: {what} must be a list of names, got {value!r}")
    return tuple(value)


def tool_groups(name: str, overrides: Mapping[str, Any], *, mcp: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A tool's groups and applicable states (empty: every state)."""
    config = overrides.get(name, {})
    if not isinstance(config, Mapping):
        raise ConfigError(f"agent_tools: {name!r} must map to an object, got {config!r}")
    groups = BUILTIN_GROUPS.get(name, _MCP_GROUPS if mcp else (DEFAULT_GROUP,))
    if "group" in config:
        groups = _strings(config["group"], f"{name}'s group") or (DEFAULT_GROUP,)
    states = _strings(config["applicable-states"], f"{name}'s applicable-states") if "applicable-states" in config \
        else ()
    return groups, states


def select_tools(tools: Sequence[Tool], requested: Sequence[str] | None, state: str | None,
                 overrides: Mapping[str, Any], *, mcp_names: Sequence[str] = ()) -> list[Tool]:
    """The tools a request with these groups and this state may use; InputError for an unknown group."""
    wanted = list(requested) if requested else [DEFAULT_GROUP]
    here = state or DEFAULT_STATE
    configured = {t.spec.name: tool_groups(t.spec.name, overrides, mcp=t.spec.name in mcp_names) for t in tools}
    known = sorted({g for groups, _ in configured.values() for g in groups})
    unknown = [g for g in wanted if g != "*" and g not in known]
    if unknown:
        raise InputError(f"unknown tool group {unknown[0]!r}: the groups are {', '.join(known)} (or * for all)")
    chosen = [t for t in tools
              if ("*" in wanted or set(configured[t.spec.name][0]) & set(wanted))
              and (not configured[t.spec.name][1] or here in configured[t.spec.name][1])]
    if not chosen:
        raise InputError(f"no agent tool is in group(s) {', '.join(wanted)} in state {here!r}")
    return chosen


def request_tools(builtin: Sequence[Tool], mcp: Sequence[Tool], groups: Sequence[str] | None, state: str | None,
                  overrides: Mapping[str, Any]) -> tuple[list[Tool], tuple[list[str], str | None] | None]:
    """The tools of one agent request, and the groups and state to record (None: the request named neither)."""
    tools = select_tools([*builtin, *mcp], groups, state, overrides, mcp_names=[t.spec.name for t in mcp])
    return tools, ((list(groups or [DEFAULT_GROUP]), state) if groups or state else None)
