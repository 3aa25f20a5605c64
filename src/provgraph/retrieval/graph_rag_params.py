"""The limits of one GraphRAG request and the grounding reply's schema (SPEC §5.1).

Example::

    params = GraphRagParams.from_settings(settings, grounding=True)
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from provgraph.config import Settings
from provgraph.errors import InputError

__all__ = ["GraphRagParams", "GROUNDING_SCHEMA"]

GROUNDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "concepts": {"type": "array", "maxItems": 10, "items": {"type": "string", "minLength": 1, "maxLength": 120}},
    },
    "required": ["concepts"],
    "additionalProperties": False,
}


def _setting(name: str) -> Any:
    """A default written once, in :class:`Settings`."""
    return Settings.model_fields[name].default


@dataclass(frozen=True, slots=True)
class GraphRagParams:
    """Limits of one GraphRAG request; the numeric defaults are those of :class:`Settings`.

    ``min_similarity`` is the no-LLM cut-off: an edge less similar to the question is not
    selected. ``answer_sentences`` bounds the extractive (no-LLM) answer.
    """

    entity_limit: int = _setting("entity_limit")
    triple_limit: int = _setting("triple_limit")
    max_subgraph_size: int = _setting("max_subgraph_size")
    max_path_length: int = _setting("max_path_length")
    edge_score_limit: int = _setting("edge_score_limit")
    edge_limit: int = _setting("edge_limit")
    grounding: bool = False
    min_similarity: float = _setting("min_similarity")
    answer_sentences: int = 5
    question_deadline: float = _setting("question_deadline")

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise InputError(f"GraphRAG {f.name.replace('_', '-')} must be a positive integer, got {value!r}")

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> GraphRagParams:
        """Params from settings; ``None`` overrides are ignored."""
        names = ("entity_limit", "triple_limit", "max_subgraph_size", "max_path_length", "edge_score_limit",
                 "edge_limit", "min_similarity", "question_deadline")
        base = cls(**{n: getattr(settings, n) for n in names})
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})
