"""Choosing the LLM and the embedder from settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from provgraph.config import Settings
from provgraph.errors import ConfigError
from provgraph.models import build_chat_model, build_embedder
from provgraph.models.embedders import Model2VecEmbedder
from provgraph.models.local import LocalChatModel
from provgraph.models.openai_compat import OpenAIChatModel


def test_no_llm_is_none_not_an_error() -> None:
    assert build_chat_model(Settings()) is None
    assert build_chat_model(Settings(llm="none", llm_model="x")) is None


def test_auto_picks_openai_when_an_endpoint_is_set() -> None:
    llm = build_chat_model(Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="qwen"))
    assert isinstance(llm, OpenAIChatModel)
    assert llm.name == "openai:qwen"
    assert llm.base_url == "http://127.0.0.1:9/v1"


def test_openai_without_model_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="PROVGRAPH_LLM_MODEL"):
        build_chat_model(Settings(llm="openai"))


def test_local_needs_an_existing_gguf(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PROVGRAPH_LLM_GGUF_PATH"):
        build_chat_model(Settings(llm="local"))
    with pytest.raises(ConfigError, match="not found"):
        build_chat_model(Settings(llm="local", llm_gguf_path=tmp_path / "missing.gguf"))
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    llm = build_chat_model(Settings(llm="local", llm_gguf_path=gguf, llm_threads=1))
    assert isinstance(llm, LocalChatModel) and llm.name == "local:tiny"


def test_a_gguf_path_alone_selects_the_local_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = tmp_path / "smol.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("PROVGRAPH_LLM_GGUF_PATH", str(gguf))
    settings = Settings()
    assert settings.llm == "auto" and settings.llm_provider == "local"
    llm = build_chat_model(settings)
    assert isinstance(llm, LocalChatModel) and llm.name == "local:smol"
    monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # an endpoint still wins
    assert Settings().llm_provider == "openai"


def test_the_max_tokens_setting_reaches_both_providers(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    local = build_chat_model(Settings(llm_gguf_path=gguf, llm_max_tokens=77))
    remote = build_chat_model(Settings(llm_model="m", llm_max_tokens=77))
    assert local._default_max_tokens == 77 and remote._max_tokens == 77  # type: ignore[union-attr]


def test_default_embedder_is_the_shipped_model() -> None:
    embedder = build_embedder(Settings())
    assert isinstance(embedder, Model2VecEmbedder)
    assert (embedder.name, embedder.dimension) == ("model2vec:minilm-l6-v2-m2v", 256)


def test_embedder_errors_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PROVGRAPH_EMBEDDER"):
        build_embedder(Settings(embedder="word2vec"))
    with pytest.raises(ConfigError, match="PROVGRAPH_EMBEDDER_MODEL"):
        build_embedder(Settings(embedder="openai"))
    with pytest.raises(ConfigError, match="no model2vec model"):
        build_embedder(Settings(embedder_model=str(tmp_path)))
