"""The shipped model read from its folder directly is the model model2vec's own loader builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from model2vec import StaticModel

from provgraph.models.embedders import DEFAULT_MODEL_DIR
from provgraph.models.model2vec_folder import load_static_model

TEXTS = ["Marie Curie discovered polonium and radium.", "", "naïve café — 東京 😀", "word " * 600]


def test_the_folder_read_directly_is_from_pretrained_s_model() -> None:
    ours, theirs = load_static_model(DEFAULT_MODEL_DIR), StaticModel.from_pretrained(DEFAULT_MODEL_DIR,
                                                                                     quantize_to="float32")
    assert ours.embedding.dtype == np.float32 and np.array_equal(ours.embedding, theirs.embedding)
    assert (ours.tokens, ours.config, ours.normalize, ours.max_length, ours.weights, ours.token_mapping) == (
        theirs.tokens, theirs.config, theirs.normalize, theirs.max_length, None, None)
    assert np.array_equal(ours.encode(TEXTS), theirs.encode(TEXTS))


def test_another_layout_goes_through_from_pretrained(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    shutil.copytree(DEFAULT_MODEL_DIR, folder)
    (folder / "config.json").unlink()  # from_pretrained's own answer to a folder without config.json
    try:
        StaticModel.from_pretrained(folder)
    except Exception as exc:  # noqa: BLE001 - whatever model2vec raises, ours raises too
        expected: type[BaseException] | None = type(exc)
    else:
        expected = None
    try:
        load_static_model(folder)
    except Exception as exc:  # noqa: BLE001
        assert type(exc) is expected
    else:
        assert expected is None
