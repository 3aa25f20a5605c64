"""Every schema provgraph sends to a model is grammar-safe, by our own check and by llama.cpp's converter."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from provgraph.agent.step import STEP_SCHEMA, step_schema
from provgraph.agent.tools import BUILTIN_TOOLS
from provgraph.extract import agent_extractor, llm_extractors
from provgraph.extract.ontology import ONTOLOGY_SCHEMA
from provgraph.models.bounds import (MAX_STRING_LENGTH, clamped, ensure_grammar_safe, grammar_problems, output_tokens,
                                     token_budget)
from provgraph.models.probe import _SCHEMA as PROBE_SCHEMA
from provgraph.errors import ModelError
from provgraph.retrieval.graph_rag import GROUNDING_SCHEMA

OLD_STEP_SCHEMA: dict[str, Any] = {  # the agent step schema that broke llama.cpp's grammar builder
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 4000},
        "action": {"type": ["string", "null"], "maxLength": 200},
        "arguments": {"type": ["object", "null"]},
        "final_answer": {"type": ["string", "null"], "maxLength": 20000},
    },
    "required": ["thought"],
}


SENT: dict[str, dict[str, Any]] = {
    "definitions": llm_extractors._DEFINITIONS.schema,
    "relationships": llm_extractors._RELATIONSHIPS.schema,
    "agent-extractor": agent_extractor._AGENT.schema,
    "agent-extractor-step": agent_extractor.STEP_SCHEMA,
    "ontology": ONTOLOGY_SCHEMA,
    "agent_step": STEP_SCHEMA,
    "agent_step_with_tools": step_schema(BUILTIN_TOOLS),
    "grounding": GROUNDING_SCHEMA,
    "probe": PROBE_SCHEMA,
}


@pytest.mark.parametrize("name", sorted(SENT))
def test_every_schema_sent_to_a_model_is_bounded(name: str) -> None:
    assert grammar_problems(SENT[name]) == []


def test_the_old_agent_step_schema_is_refused_with_reasons() -> None:
    assert grammar_problems(OLD_STEP_SCHEMA) == [
        "$.thought: maxLength 4000 is above 1000",
        "$.final_answer: maxLength 20000 is above 1000",
    ]
    with pytest.raises(ModelError, match="schema 'agent_step' is not safe to send to a model"):
        ensure_grammar_safe(OLD_STEP_SCHEMA, "agent_step")


def test_a_json_call_asks_the_smallest_of_schema_budget_backend_cap_and_caller_bound() -> None:
    names = {"type": "array", "maxItems": 60, "items": {"type": "string", "maxLength": 300}}  # budget 6302
    assert output_tokens(names, 1024) == 1024
    assert output_tokens(names, 1024, 385) == 385
    assert output_tokens(names, 1024, 5000) == 1024
    assert output_tokens({"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 30}}, 1024, 385) == 32


def test_clamped_bounds_every_string_and_array_of_a_copy() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 20000},
                                               "tags": {"type": "array", "items": {"type": "string"}},
                                               "kind": {"type": "string", "enum": ["a", "b"]}}}
    assert clamped(schema, string_limit=50, items_limit=3) == {"type": "object", "properties": {
        "q": {"type": "string", "maxLength": 50},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 3},
        "kind": {"type": "string", "enum": ["a", "b"]}}}
    assert schema["properties"]["q"] == {"type": "string", "maxLength": 20000}


def test_unbounded_strings_and_arrays_are_named() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {
        "type": "string", "enum": ["x", "y"]}}, "c": {"type": "array", "maxItems": 500, "items": {
            "type": "integer"}}}}
    assert grammar_problems(schema) == [
        "$.a: string without maxLength", "$.b: array without maxItems", "$.c: maxItems 500 is above 60"]


def test_many_bounded_strings_add_up_to_too_much() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string", "maxLength": 1000} for i in range(4)}}
    assert grammar_problems(schema) == ["$: string bounds add up to 4000, above 3000"]


def test_token_budget_grows_with_the_bounds() -> None:
    small = {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 30}}
    assert token_budget(small) == 2 * (30 // 3 + 4 + 1) + 2
    assert token_budget({**small, "maxItems": 4}) == 4 * (30 // 3 + 4 + 1) + 2
    assert token_budget({"type": "boolean"}) == 4


def _llama_grammar() -> ModuleType | None:
    """llama.cpp's JSON-schema → GBNF converter as shipped in llama-cpp-python's sdist, if present."""
    candidates = [os.environ.get("PROVGRAPH_LLAMA_GRAMMAR_PY", "")]
    cache = Path.home() / ".cache" / "provgraph" / "llama.cpp"
    candidates += glob.glob(str(cache / "llama_cpp_python-*" / "llama_cpp" / "llama_grammar.py"))
    candidates += glob.glob(str(cache / "llama_cpp_python-*" / "vendor" / "llama.cpp" / "examples"
                                / "json_schema_to_grammar.py"))
    for path in filter(None, candidates):
        if Path(path).is_file():
            spec = importlib.util.spec_from_file_location("llama_grammar_converter", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


def _nesting(grammar: str) -> int:
    """Deepest parenthesis nesting of a GBNF grammar, outside string literals and classes."""
    depth = deepest = 0
    quote: str | None = None
    escaped = False
    for ch in grammar:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif quote is not None:
            if ch == quote:
                quote = None
        elif ch in "\"[":
            quote = "\"" if ch == "\"" else "]"
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest


@pytest.mark.parametrize("name", sorted(SENT))
def test_llama_cpp_converts_every_schema_to_a_grammar_it_can_parse(name: str) -> None:
    converter = _llama_grammar()
    if converter is None:
        pytest.skip("llama.cpp's converter not found (run scripts/llama_servers.py build, or set "
                    "PROVGRAPH_LLAMA_GRAMMAR_PY)")
    grammar = converter.json_schema_to_gbnf(json.dumps(SENT[name]))
    assert "root ::=" in grammar
    # maxLength N becomes N nested optional groups; the measured server parsed 1000 but not 20000
    assert _nesting(grammar) <= MAX_STRING_LENGTH + 10
    assert len(grammar) < 200_000


def test_llama_cpp_turns_the_old_step_schema_into_a_grammar_nested_too_deep() -> None:
    converter = _llama_grammar()
    if converter is None:
        pytest.skip("llama.cpp's converter not found")
    assert _nesting(converter.json_schema_to_gbnf(json.dumps(OLD_STEP_SCHEMA))) >= 4000
