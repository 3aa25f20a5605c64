"""One ReAct step as the LLM gives it: a bounded JSON object, its prompt, and its validation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from provgraph.agent.tools import ToolSpec
from provgraph.errors import MalformedOutput

__all__ = ["STEP_SCHEMA", "STEP_SCHEMA_NAME", "AgentStep", "parse_step", "system_prompt", "observation_message"]

STEP_SCHEMA_NAME = "agent_step"

STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 500},
        "action": {"type": ["string", "null"], "maxLength": 100},
        "arguments": {"type": ["object", "null"]},
        "final_answer": {"type": ["string", "null"], "maxLength": 1000},
    },
    "required": ["thought"],
    "additionalProperties": False,
}
"""``{"thought", "action", "arguments", "final_answer"}``: exactly one of action / final_answer.

Bounded for grammar-constrained decoding (:mod:`provgraph.models.bounds`): llama.cpp's grammar
builder failed on the earlier 4000/20000-character bounds."""

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
    limits = STEP_SCHEMA["properties"]
    return _SYSTEM.format(tools="\n".join(lines) if lines else "(none)", thought_limit=limits["thought"]["maxLength"],
                          answer_limit=limits["final_answer"]["maxLength"])


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
