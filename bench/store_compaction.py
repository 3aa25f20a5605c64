"""RocksDB compaction CPU per load as a pyoxigraph store grows, for three ways of writing a load.

    .venv/bin/python bench/store_compaction.py [--loads 12] [--modes provgraph,one_ingest,transactions]

Each load is shaped like one of ``bench/scale.py`` (1,000 chunks): 100 documents of 100 quads in a
named graph, 40,000 extracted quads (half default graph, half named graphs), 1,000 "done" marks.
``provgraph`` writes them as ingest does (one transaction per document, one bulk load, the marks in
one transaction, then a flush); ``one_ingest`` puts all of them in one bulk load; ``transactions``
writes all of them in transactions. After each load the script waits for background work to settle
and prints the CPU the store's background threads (``rocksdb:…``) used, beside the load's own.
Keys are hashes, so every SST file a load adds spans the whole key range, and pyoxigraph 0.5's
fixed options (level-0 compaction trigger 2, a 512 MB base level) merge it with every stored key:
the background CPU of a load grows with the store, whichever way the load is written.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import report, rocksdb_cpu_seconds  # noqa: E402


def one_load(rng: random.Random) -> tuple[list[list[ox.Quad]], list[ox.Quad], list[ox.Quad]]:
    """Documents (a list of quads each), extracted quads, marks."""
    preds = [ox.NamedNode(f"http://example.org/p/{i}") for i in range(30)]
    source = ox.NamedNode("http://example.org/graph/source")

    def node() -> ox.NamedNode:
        return ox.NamedNode(f"http://example.org/e/{rng.getrandbits(64):x}")

    docs = [[ox.Quad(node(), rng.choice(preds), ox.Literal(f"text {rng.getrandbits(40)}"), source)
             for _ in range(100)] for _ in range(100)]
    extracted = [ox.Quad(node(), rng.choice(preds), node()) for _ in range(20_000)]
    extracted += [ox.Quad(node(), rng.choice(preds), ox.Literal(f"2026-12-01T{rng.getrandbits(30)}"),
                          ox.NamedNode(f"http://example.org/sg/{rng.getrandbits(64):x}")) for _ in range(20_000)]
    marks = [ox.Quad(node(), preds[0], preds[1], source) for _ in range(1_000)]
    return docs, extracted, marks


def run(mode: str, loads: int, settle: float) -> None:
    folder = tempfile.mkdtemp(prefix="provgraph-compaction-")
    try:
        store = ox.Store(folder)
        rng = random.Random(16)
        for n in range(1, loads + 1):
            docs, extracted, marks = one_load(rng)
            bg, cpu = rocksdb_cpu_seconds(), time.process_time()
            if mode == "provgraph":
                for doc in docs:
                    store.extend(doc)
                store.bulk_extend(extracted)
                store.extend(marks)
            elif mode == "one_ingest":
                store.bulk_extend([q for doc in docs for q in doc] + extracted + marks)
            else:
                for doc in docs:
                    store.extend(doc)
                store.extend(extracted)
                store.extend(marks)
            store.flush()
            time.sleep(settle)  # compaction runs after the load returns
            bg = rocksdb_cpu_seconds() - bg
            report("store_compaction.load", mode=mode, load=n, quads_per_load=51_000,
                   cpu_ms=round((time.process_time() - cpu) * 1000), of_which_background_ms=round(bg * 1000),
                   uptime="load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
        del store
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loads", type=int, default=12)
    ap.add_argument("--modes", default="provgraph,one_ingest,transactions")
    ap.add_argument("--settle", type=float, default=1.5, help="seconds to wait after each load")
    args = ap.parse_args()
    for mode in args.modes.split(","):
        run(mode, args.loads, args.settle)


if __name__ == "__main__":
    main()
