"""models layer: LLM (``ChatModel``) and ``Embedder`` contracts, their backends, and builders.

Backends' SDKs are imported when a backend is built, never when this package is imported.
"""

from provgraph.models.base import (
    ChatModel,
    Completion,
    Embedder,
    JsonCompletion,
    Message,
    StreamResult,
    Usage,
    assistant,
    system,
    user,
)
from provgraph.models.factory import build_chat_model, build_embedder
from provgraph.models.jsonrepair import parse_json, parse_jsonl, parse_validated

__all__ = [
    "ChatModel",
    "Completion",
    "Embedder",
    "JsonCompletion",
    "Message",
    "StreamResult",
    "Usage",
    "assistant",
    "system",
    "user",
    "build_chat_model",
    "build_embedder",
    "parse_json",
    "parse_jsonl",
    "parse_validated",
]
