"""Ingestion through the store: decode + chunk + librarian + provenance quads, per document.

    .venv/bin/python bench/ingest.py [--pages 200] [--markdown-mb 10]

Uses DocumentLoader exactly as `provgraph load` does (without extraction). Targets: >= 100 PDF
pages/s, >= 5 MB/s of text through decode + chunk + store.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import report  # noqa: E402
from ingest_decode import make_markdown, make_pdf  # noqa: E402

from provgraph.ingest.pipeline import DocumentLoader  # noqa: E402
from provgraph.librarian.sqlite import SqliteLibrarian  # noqa: E402
from provgraph.store import OxigraphStore  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--markdown-mb", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pdf, md = root / "big.pdf", root / "big.md"
        make_pdf(pdf, args.pages, rng)
        make_markdown(md, args.markdown_mb, rng)
        store = OxigraphStore(root / "store")
        loader = DocumentLoader(store, SqliteLibrarian(root / "lib"), max_bytes=256 * 2**20)
        for path, unit in ((pdf, "pages"), (md, "MB")):
            t0 = time.perf_counter()
            result = loader.load_file(path)
            dt = time.perf_counter() - t0
            size_mb = path.stat().st_size / 2**20
            figures = {"seconds": round(dt, 2), "chunks": len(result.chunks),
                       "chunks_per_s": round(len(result.chunks) / dt), "quads": len(store)}
            if unit == "pages":
                report("ingest.pdf", target=">= 100 pages/s", pages=result.pages,
                       pages_per_s=round(result.pages / dt, 1), **figures)
            else:
                report("ingest.markdown", target=">= 5 MB/s", megabytes=round(size_mb, 1),
                       mb_per_s=round(size_mb / dt, 2), sections=result.sections, **figures)
            t0 = time.perf_counter()
            again = loader.load_file(path)
            report(f"ingest.reload_{unit}", status=again.status, seconds=round(time.perf_counter() - t0, 3))
        store.close()


if __name__ == "__main__":
    main()
