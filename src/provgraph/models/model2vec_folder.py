"""A model2vec model read from its folder without model2vec's hub layer.

``StaticModel.from_pretrained(folder, quantize_to="float32")`` imports huggingface_hub (its model-card
and download code, 0.26 s of a process's start) and builds the model twice (loaded, then converted).
A folder in model2vec's own layout (``model.safetensors``, ``tokenizer.json``, ``config.json``) is
read here directly into the same model: the same vectors (as float32), tokenizer, weights, token
mapping, normalisation and maximum length. Any other layout goes through ``from_pretrained``.
Only the model card's metadata (base model name, language) is not read: encoding does not use it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["load_static_model"]

_TENSORS = {"embeddings", "weights", "mapping"}


def load_static_model(folder: Path) -> Any:
    """The folder's ``model2vec.StaticModel``, its vectors float32."""
    from model2vec import StaticModel

    if not ((folder / "tokenizer.json").is_file() and (folder / "config.json").is_file()):
        return StaticModel.from_pretrained(folder, quantize_to="float32")
    from safetensors import safe_open
    from tokenizers import Tokenizer

    with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
        names = set(tensors.keys())
        if "embeddings" not in names or not names <= _TENSORS:
            return StaticModel.from_pretrained(folder, quantize_to="float32")
        found = {name: tensors.get_tensor(name) for name in names}
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return StaticModel(vectors=np.asarray(found["embeddings"], dtype=np.float32),
                       tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")), config=config,
                       normalize=config.get("normalize", False), weights=found.get("weights"),
                       token_mapping=found.get("mapping"), max_length=config.get("max_length", 512))
