"""Dense-only retrieval on the multi-hop sets without a collection: to compare embedders quickly.

Each distinct paragraph is embedded as the document ``bench/multihop.py`` loads (``title\\n\\ntext``), each question
is ranked against all of them by exact cosine, and recall@2/@5 are scored as there; embedder throughput on those
texts (paragraphs and their titles, the latter entity-name-like) is printed too. No entity extraction, so it takes
a fraction of a full run's time with a slow embedder.

    .venv/bin/python bench/multihop_dense.py --half tune                                   # default embedder
    .venv/bin/python bench/multihop_dense.py --half tune --embedder sentence-transformers   # extra provgraph[st]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from multihop import DEPTH, HALVES, read_set, score, table  # noqa: E402
from multihop_data import DATA_ROOT, SETS, data_file  # noqa: E402

from provgraph.config import load_settings  # noqa: E402
from provgraph.models.factory import build_embedder  # noqa: E402


def run(name: str, path: Path, embedder: object, half: str, limit: int | None) -> dict:
    """Dense-only figures for one set, in the shape :func:`multihop.table` prints."""
    questions, paragraphs = read_set(path, limit)
    pids = list(paragraphs)
    texts = [f"{title}\n\n{text}" for title, text in paragraphs.values()]
    t0 = time.perf_counter()
    matrix = embedder.embed(texts)  # type: ignore[attr-defined]
    chunk_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    embedder.embed([title for title, _ in paragraphs.values()])  # type: ignore[attr-defined]
    name_s = time.perf_counter() - t0
    details = []
    for q in (q for q in questions if half == "both" or q.half == half):
        t1 = time.perf_counter()
        scores = matrix @ embedder.embed([q.question])[0]  # type: ignore[attr-defined]
        ranked = [pids[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]
        details.append({"id": q.id, "type": q.type, "half": q.half, **score(q, None, ranked),
                        "ms": round((time.perf_counter() - t1) * 1000, 2), "error": None})
    return {"set": name, "questions": len(questions), "paragraphs": len(paragraphs), "chunks": len(texts),
            "load_seconds": round(chunk_s, 1), "embedder": embedder.name,  # type: ignore[attr-defined]
            "chunks_per_s": round(len(texts) / chunk_s, 1), "names_per_s": round(len(texts) / name_s, 1),
            "systems": {"dense": {"details": details}}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", dest="sets", choices=list(SETS))
    ap.add_argument("--half", choices=("tune", "report", "both"), default="tune")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("PROVGRAPH_MULTIHOP_DATA", DATA_ROOT)))
    ap.add_argument("--embedder")
    ap.add_argument("--embedder-model")
    args = ap.parse_args(argv)
    given = {k: v for k, v in (("embedder", args.embedder), ("embedder_model", args.embedder_model)) if v}
    t0 = time.perf_counter()
    embedder = build_embedder(load_settings(**given))
    print(f"embedder {embedder.name} ({embedder.dimension} dims) loaded in {time.perf_counter() - t0:.1f} s",
          flush=True)
    for name in args.sets or list(SETS):
        res = run(name, data_file(name, args.data), embedder, args.half, args.limit)
        print(f"{name}: {res['chunks_per_s']} paragraphs/s, {res['names_per_s']} titles/s")
        for half in (HALVES if args.half == "both" else (args.half,)):
            print(table(res, half), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
