"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import pytest

from provgraph.config import Settings
from provgraph.errors import ModelError, ModelUnavailable
from provgraph.models import build_embedder
from provgraph.models.embedders import OpenAIEmbedder
from tests.fakes.openai_server import FakeOpenAIServer, Reply, error, fake_vector

pytestmark = pytest.mark.server


def test_embeds_in_batches_with_unit_rows(server: FakeOpenAIServer) -> None:
    embedder = OpenAIEmbedder(model="nomic", base_url=server.base_url, batch_size=2)
    texts = ["a", "b", "c", "d", "e"]
    vectors = embedder.embed(texts)
    embedder.close()
    assert vectors.shape == (5, 8) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    expected = np.asarray(fake_vector("c", 8), dtype=np.float32)
    assert np.allclose(vectors[2], expected / np.linalg.norm(expected), atol=1e-6)
    assert [r.body["input"] for r in server.requests] == [["a", "b"], ["c", "d"], ["e"]]
    assert all(r.path == "/v1/embeddings" and r.body["model"] == "nomic" for r in server.requests)
    assert embedder.dimension == 8 and len(server.requests) == 3


def test_dimension_is_probed_once(server: FakeOpenAIServer) -> None:
    embedder = build_embedder(Settings(embedder="openai", embedder_model="nomic", embedder_base_url=server.base_url))
    assert embedder.name == "openai:nomic"
    assert embedder.dimension == 8 and embedder.dimension == 8
    assert len(server.requests) == 1


def test_errors_are_translated(server: FakeOpenAIServer) -> None:
    embedder = OpenAIEmbedder(model="nomic", base_url=server.base_url, max_retries=0)
    server.push(error(404, "model 'nomic' not found"))
    with pytest.raises(ModelError, match="HTTP 404: model 'nomic' not found") as info:
        embedder.embed(["x"])
    assert not isinstance(info.value, ModelUnavailable)
    server.push(error(503, "overloaded"))
    with pytest.raises(ModelUnavailable, match="openai embedder at .* model nomic: HTTP 503"):
        embedder.embed(["x"])
    server.push(Reply(body={"object": "list", "data": [], "model": "nomic"}))
    with pytest.raises(ModelError, match="asked 1 embeddings, got 0"):
        embedder.embed(["x"])
