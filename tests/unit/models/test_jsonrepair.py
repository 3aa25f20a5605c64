"""JSON recovery from LLM text."""

from __future__ import annotations

import pytest

from provgraph.errors import MalformedOutput
from provgraph.models.jsonrepair import parse_json, parse_jsonl, parse_validated, strip_trailing_commas


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2, 3]\n", [1, 2, 3]),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Sure, here it is:\n```\n{"a": [1, 2]}\n```\nAnything else?', {"a": [1, 2]}),
        ('The answer is {"a": "b"} as requested.', {"a": "b"}),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ('{"id": "x"}\n', {"id": "x"}),
        ('{"id": "a"}\n{"id": "b"}\n', [{"id": "a"}, {"id": "b"}]),
        ('{"text": "a } inside, and a ] too,"}', {"text": "a } inside, and a ] too,"}),
        ('noise {"a": "esc \\" quote"} tail', {"a": 'esc " quote'}),
    ],
)
def test_parse_json_recovers_the_value(text: str, expected: object) -> None:
    assert parse_json(text) == expected


def test_prose_with_stray_brackets_before_the_json() -> None:
    assert parse_json('Note [see below] then {"ok": true}') == {"ok": True}
    assert parse_json('Options {a, b}: {"ok": true}') == {"ok": True}


@pytest.mark.parametrize("text", ["", "   ", "I cannot help with that.", '{"a": [1, 2'])
def test_unrecoverable_output_raises_with_the_raw_text(text: str) -> None:
    with pytest.raises(MalformedOutput) as info:
        parse_json(text)
    assert info.value.raw == text


def test_truncated_json_is_named_as_cut_off() -> None:
    with pytest.raises(MalformedOutput, match="cut off"):
        parse_json('Here: {"edges": [{"id": "a1"}, {"id": ')


def test_trailing_commas_inside_strings_are_kept() -> None:
    assert strip_trailing_commas('{"a": "x,]", "b": [1,],}') == '{"a": "x,]", "b": [1]}'


def test_parse_jsonl_keeps_objects_and_counts_the_rest() -> None:
    text = '```jsonl\n{"id": "a", "reasoning": "r1"}\nnot json\n{"id": "b"},\n[1, 2]\n```'
    lines = parse_jsonl(text)
    assert lines.items == [{"id": "a", "reasoning": "r1"}, {"id": "b"}]
    assert lines.dropped == 2


def test_parse_jsonl_accepts_an_array_of_objects_and_prose_lines() -> None:
    lines = parse_jsonl('Relevant edges:\n[{"id": "a"}, {"id": "b"}]\n- {"id": "c"}')
    assert [i["id"] for i in lines.items] == ["a", "b", "c"]
    assert lines.dropped == 1


def test_parse_validated_reports_schema_breaks() -> None:
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
    assert parse_validated('{"id": "a"}', schema, what="m") == {"id": "a"}
    with pytest.raises(MalformedOutput, match=r"m does not match the schema: \$\.id: expected string") as info:
        parse_validated('{"id": 1}', schema, what="m")
    assert info.value.raw == '{"id": 1}'


def test_close_truncated_keeps_the_complete_items() -> None:
    from provgraph.models.jsonrepair import close_truncated

    assert close_truncated('{"a": [{"x": 1}, {"x": 2}, {"x": "thr') == '{"a": [{"x": 1}, {"x": 2}]}'
    assert close_truncated('{"a": [{"x": 1}, {"y": 2, "x"', lambda v: all("x" in i for i in v["a"])) == \
        '{"a": [{"x": 1}]}'
    assert close_truncated('{"a": ["unfinished') == '{"a": []}'
    assert close_truncated('{"a": [1, 2]}') is None  # complete: nothing to close
    assert close_truncated("no json here") is None


def test_a_cut_off_answer_is_salvaged_only_down_to_valid_items() -> None:
    from provgraph.models.base import Usage
    from provgraph.models.jsonrepair import json_completion

    schema = {"type": "object", "required": ["r"], "properties": {"r": {"type": "array", "maxItems": 5, "items": {
        "type": "object", "required": ["s", "o"], "properties": {"s": {"type": "string", "maxLength": 9},
                                                                  "o": {"type": "string", "maxLength": 9}}}}}}
    text = '{"r": [{"s": "a", "o": "b"}, {"s": "c", "o"'
    done = json_completion(text, Usage(1, 1, "m"), schema, model="m", schema_name="rel", cut_off=True)
    assert done.data == {"r": [{"s": "a", "o": "b"}]} and done.text == text
