"""One ReAct step as the LLM gives it: a bounded JSON object, its prompt, and its validation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from provgraph.agent.tools import ToolSpec
from provgraph.errors import MalformedOutput
from provgraph.models.bounds import clamped, grammar_problems

__all__ = ["STEP_SCHEMA", "step_schema", "STEP_SCHEMA_NAME", "AgentStep", "parse_step", "system_prompt", "observation_message"]

STEP_SCHEMA_NAME = "agent_step"

THOUGHT_LIMIT = 200
ANSWER_LIMIT = 600
ARGUMENT_LIMIT = 200
"""Longest string the step's grammar lets a model put in a tool argument (the tool may allow more)."""


def step_schema(tools: Sequence[ToolSpec] = ()) -> dict[str, Any]:
    """The step's JSON schema: the four keys, and ``anyOf`` a call of one of ``tools`` or a final answer.

    provgraph's own validator reads the flat ``properties`` (``anyOf`` is beyond its subset), so
    :func:`parse_step` says in words what is wrong with a step that gives both or neither; servers
    that build a grammar from the schema (llama.cpp) follow ``anyOf``, so even a tiny model must
    give exactly one, name a listed tool and shape its arguments as that tool's schema (its
    strings cut to :data:`ARGUMENT_LIMIT`; free-form arguments when that would not be
    grammar-safe). Bounded for grammar-constrained decoding (:mod:`provgraph.models.bounds`):
    llama.cpp's grammar builder failed on the earlier 4000/20000-character bounds.
    """
    thought = {"type": "string", "maxLength": THOUGHT_LIMIT}
    answer = _variant(thought, final_answer={"type": "string", "maxLength": ANSWER_LIMIT})
    flat = {
        "type": "object",
        "properties": {
            "thought": thought,
            "action": {"type": ["string", "null"], "maxLength": 100},
            "arguments": {"type": ["object", "null"]},
            "final_answer": {"type": ["string", "null"], "maxLength": ANSWER_LIMIT},
        },
        "required": ["thought"],
        "additionalProperties": False,
    }
    names = [t.name for t in tools]
    any_tool = _variant(thought, action={"type": "string", "enum": names} if names else
                        {"type": "string", "maxLength": 100}, arguments={"type": "object"})
    per_tool = [_variant(thought, action={"type": "string", "enum": [t.name]},
                         arguments=clamped(t.parameters, string_limit=ARGUMENT_LIMIT, items_limit=10)) for t in tools]
    shaped = {**flat, "anyOf": [*per_tool, answer]}
    return shaped if per_tool and not grammar_problems(shaped) else {**flat, "anyOf": [any_tool, answer]}


def _variant(thought: dict[str, Any], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"thought": thought, **properties},
            "required": ["thought", *properties], "additionalProperties": False}


STEP_SCHEMA: dict[str, Any] = step_schema()
"""The step schema without a tool list (any action name)."""

OBSERVATION_LIMIT = 8000
"""Characters of an observation shown back to the LLM (the trace keeps all of it)."""

_SYSTEM = """You are a research agent. Answer the user's question by thinking step by step and \
using tools to gather facts; base your answer on what the tools return.

At every step reply with exactly one JSON object:
{{"thought": "<your reasoning>", "action": "<tool name>", "arguments": {{...}}, "final_answer": null}}
to use a tool, or, when you can answer:
{{"thought": "<your reasoning>", "action": null, "arguments": null, "final_answer": "<the answer>"}}
Give either an action or a final_answer, never both. After each action you get its observation.
Keep the thought under {thought_limit} characters and the final answer under {answer_limit}.

Tools:
{tools}"""


@dataclass(frozen=True, slots=True)
class AgentStep:
    """A valid step: a thought and either a tool call or the final answer."""

    thought: str
    action: str | None
    arguments: dict[str, Any]
    final_answer: str | None


def system_prompt(tools: Sequence[ToolSpec]) -> str:
    """The instructions, with every tool's name, description and argument schema."""
    lines = [
        f"- {t.name}: {t.description}\n  arguments: {json.dumps(t.parameters, ensure_ascii=False, sort_keys=True)}"
        for t in tools
    ]
    return _SYSTEM.format(tools="\n".join(lines) if lines else "(none)", thought_limit=THOUGHT_LIMIT,
                          answer_limit=ANSWER_LIMIT)


def parse_step(data: Any, raw: str) -> AgentStep:
    """The step in ``data`` (already schema-valid); MalformedOutput unless exactly one of action / final_answer."""
    action = data.get("action") or None
    final = data.get("final_answer")
    if (action is None) == (final is None):
        which = "both an action and a final_answer" if action else "neither an action nor a final_answer"
        raise MalformedOutput(f"the step gives {which}; give exactly one", raw=raw)
    return AgentStep(thought=data["thought"], action=action, arguments=dict(data.get("arguments") or {}),
                     final_answer=final)


def observation_message(text: str, *, error: bool) -> str:
    """What the LLM reads after an action (cut to ``OBSERVATION_LIMIT`` characters)."""
    shown = text if len(text) <= OBSERVATION_LIMIT else text[:OBSERVATION_LIMIT] + " […]"
    return f"Observation{' (error)' if error else ''}: {shown}"
