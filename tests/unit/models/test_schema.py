"""The JSON schema subset validator."""

from __future__ import annotations

from typing import Any

import pytest

from provgraph.models.schema import schema_errors, schema_instruction

EDGES: dict[str, Any] = {
    "type": "object",
    "required": ["edges"],
    "additionalProperties": False,
    "properties": {
        "edges": {
            "type": "array",
            "maxItems": 2,
            "items": {
                "type": "object",
                "required": ["id", "score"],
                "properties": {
                    "id": {"type": "string", "maxLength": 8},
                    "score": {"type": "number"},
                    "kind": {"enum": ["fact", "label"]},
                    "rank": {"type": "integer"},
                    "keep": {"type": "boolean"},
                },
            },
        }
    },
}


def test_valid_data_has_no_errors() -> None:
    data = {"edges": [{"id": "ab12cd34", "score": 0.5, "kind": "fact", "rank": 2, "keep": True}]}
    assert schema_errors(data, EDGES) == []


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ([], "$: expected object, got array"),
        ({}, "$: missing required property 'edges'"),
        ({"edges": [], "x": 1}, "$: unexpected property 'x'"),
        ({"edges": [{}, {}, {}]}, "$.edges: more than 2 items"),
        ({"edges": [{"id": "a", "score": "high"}]}, "$.edges[0].score: expected number, got string"),
        ({"edges": [{"id": "123456789", "score": 1}]}, "$.edges[0].id: longer than 8 characters"),
        (
            {"edges": [{"id": "a", "score": 1, "kind": "other"}]},
            "$.edges[0].kind: 'other' is not one of ['fact', 'label']",
        ),
        ({"edges": [{"id": "a", "score": 1, "rank": 1.5}]}, "$.edges[0].rank: expected integer, got number"),
        ({"edges": [{"id": "a", "score": True}]}, "$.edges[0].score: expected number, got boolean"),
        ({"edges": [{"id": "a", "score": 1, "keep": 1}]}, "$.edges[0].keep: expected boolean, got integer"),
    ],
)
def test_each_break_is_reported_with_its_path(data: Any, error: str) -> None:
    assert error in schema_errors(data, EDGES)


def test_union_types_nullable_and_additional_schema() -> None:
    schema = {"type": "object", "additionalProperties": {"type": ["string", "null"]}}
    assert schema_errors({"a": "x", "b": None}, schema) == []
    assert schema_errors({"a": 3}, schema) == ["$.a: expected string or null, got integer"]


def test_integral_float_counts_as_integer_and_errors_are_capped() -> None:
    assert schema_errors(2.0, {"type": "integer"}) == []
    many = {"type": "array", "items": {"type": "string"}}
    assert len(schema_errors(list(range(100)), many, limit=5)) == 5


def test_instruction_embeds_the_schema() -> None:
    text = schema_instruction({"type": "object"})
    assert text.endswith('{"type":"object"}') and "JSON" in text
