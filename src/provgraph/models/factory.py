"""Build the configured chat model and embedder from :class:`~provgraph.config.Settings`.

``build_chat_model`` returns ``None`` for the "no LLM" state (``llm_provider == "none"``).
"""

from __future__ import annotations

from pathlib import Path

from provgraph.config import Settings
from provgraph.errors import ConfigError
from provgraph.models.base import ChatModel, Embedder

__all__ = ["build_chat_model", "build_embedder", "EMBEDDERS"]

EMBEDDERS = ("model2vec", "sentence-transformers", "openai")
"""Accepted values of ``PROVGRAPH_EMBEDDER``."""


def build_chat_model(settings: Settings) -> ChatModel | None:
    """The LLM in effect, or ``None`` when there is none. Raises ConfigError when half-configured."""
    provider = settings.llm_provider
    if provider == "none":
        return None
    if provider == "openai":
        from provgraph.models.openai_compat import OpenAIChatModel

        if not settings.llm_model:
            raise ConfigError("the openai LLM provider needs a model: set PROVGRAPH_LLM_MODEL")
        return OpenAIChatModel(
            model=settings.llm_model,
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            concurrency=settings.llm_concurrency,
            max_tokens=settings.llm_max_tokens,
        )
    if provider == "local":
        from provgraph.models.local import LocalChatModel

        if settings.llm_gguf_path is None:
            raise ConfigError("the local LLM provider needs a GGUF file: set PROVGRAPH_LLM_GGUF_PATH")
        return LocalChatModel(gguf_path=settings.llm_gguf_path, n_threads=settings.llm_threads,
                              default_max_tokens=settings.llm_max_tokens)
    raise ConfigError(f"unknown LLM provider {provider!r}: use none, openai or local (PROVGRAPH_LLM)")


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedder (default: the shipped model2vec model). Raises ConfigError."""
    kind = settings.embedder.strip().lower()
    if kind == "model2vec":
        from provgraph.models.embedders import Model2VecEmbedder

        path = Path(settings.embedder_model) if settings.embedder_model else None
        return Model2VecEmbedder(path, batch_size=settings.embedder_batch_size)
    if kind in ("sentence-transformers", "st"):
        from provgraph.models.embedders import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(settings.embedder_model, batch_size=min(settings.embedder_batch_size, 64))
    if kind == "openai":
        from provgraph.models.embedders import OpenAIEmbedder

        base_url = settings.embedder_base_url or settings.llm_base_url
        if not settings.embedder_model:
            raise ConfigError("the openai embedder needs a model: set PROVGRAPH_EMBEDDER_MODEL")
        key = settings.embedder_api_key or settings.llm_api_key
        return OpenAIEmbedder(
            model=settings.embedder_model,
            base_url=base_url,
            api_key=key.get_secret_value() if key else None,
            batch_size=settings.embedder_batch_size,
            timeout=settings.llm_timeout,
        )
    raise ConfigError(f"unknown embedder {settings.embedder!r}: use one of {', '.join(EMBEDDERS)} (PROVGRAPH_EMBEDDER)")
