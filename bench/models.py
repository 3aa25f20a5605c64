"""Embedder throughput and vector search latency.

    .venv/bin/python bench/models.py [--names 10000] [--chunks 1000] [--vectors 100000] [--seed 7]

Texts are made from the default model's own vocabulary (so every word is known to it): entity
names of 1-3 capitalised words and chunks of 1,000 characters. The vector index is filled with
real embeddings of generated names (256 dims), which cluster like production data; uniformly
random vectors are a pathological case for HNSW and are not what the index serves.
Targets (issue 4): >= 20,000 names/s, >= 500 chunks/s, p99 search < 2 ms at 100,000 x 256.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import percentiles, report, time_each  # noqa: E402

from provgraph.models.embedders import DEFAULT_MODEL_DIR, Model2VecEmbedder  # noqa: E402
from provgraph.vectors import open_index  # noqa: E402


def vocabulary() -> list[str]:
    """Whole words of the default model's tokenizer."""
    vocab = json.loads((DEFAULT_MODEL_DIR / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(w for w in vocab if w.isalpha() and len(w) >= 3)


def names(n: int, words: list[str], rng: random.Random) -> list[str]:
    """Entity-like names: 1-3 capitalised words."""
    return [" ".join(rng.choice(words).capitalize() for _ in range(rng.randint(1, 3))) for _ in range(n)]


def chunks(n: int, words: list[str], rng: random.Random, size: int = 1000) -> list[str]:
    """Sentences of vocabulary words, cut to ``size`` characters."""
    out = []
    for _ in range(n):
        parts: list[str] = []
        length = 0
        while length < size:
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))).capitalize() + "."
            parts.append(sentence)
            length += len(sentence) + 1
        out.append(" ".join(parts)[:size])
    return out


def bench_embedder(n_names: int, n_chunks: int, rng: random.Random) -> Model2VecEmbedder:
    started = time.perf_counter()
    embedder = Model2VecEmbedder()
    report(
        "embedder_load",
        model=embedder.name,
        dimension=embedder.dimension,
        seconds=round(time.perf_counter() - started, 3),
        target="< 1 s",
    )
    words = vocabulary()
    embedder.embed(names(200, words, rng))  # warm-up
    for label, texts, target in (
        ("embed_names", names(n_names, words, rng), ">= 20000 names/s"),
        ("embed_chunks_1000_chars", chunks(n_chunks, words, rng), ">= 500 chunks/s"),
    ):
        started = time.perf_counter()
        embedder.embed(texts)
        elapsed = time.perf_counter() - started
        report(
            label, texts=len(texts), seconds=round(elapsed, 3), per_second=round(len(texts) / elapsed), target=target
        )
    return embedder


def bench_index(embedder: Model2VecEmbedder, n_vectors: int, n_queries: int, rng: random.Random) -> None:
    words = vocabulary()
    data = embedder.embed(names(n_vectors + n_queries, words, rng))
    vectors, queries = data[:n_vectors], data[n_vectors:]
    ids = [f"urn:provgraph:entity:e{i}" for i in range(n_vectors)]
    payloads = [{"entity": ids[i], "doc": f"urn:doc:d{i % 20}"} for i in range(n_vectors)]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        with open_index(Path(tmp), "entities", model=embedder.name, dimension=embedder.dimension) as index:
            for start in range(0, n_vectors, 10_000):
                index.upsert(
                    ids[start : start + 10_000], vectors[start : start + 10_000], payloads[start : start + 10_000]
                )
            built = time.perf_counter() - started
        report("index_build_and_save", vectors=n_vectors, dimension=embedder.dimension, seconds=round(built, 1))

        started = time.perf_counter()
        index = open_index(Path(tmp), "entities", model=embedder.name, dimension=embedder.dimension)
        reopened = time.perf_counter() - started
        index.search(queries[0], 10)
        report(
            "index_reopen",
            vectors=n_vectors,
            open_s=round(reopened, 3),
            first_search_total_s=round(time.perf_counter() - started, 3),
        )

        samples = time_each(lambda q: index.search(q, 10), list(queries))
        exact = np.argsort(-(queries[:200] @ vectors.T), axis=1)[:, :10]
        found = sum(len({h.id for h in index.search(q, 10)} & {ids[j] for j in row}) for q, row in zip(queries, exact))
        report(
            "search_hnsw_k10",
            vectors=n_vectors,
            queries=len(samples),
            recall_at_10=round(found / (10 * len(exact)), 4),
            target="p99 < 2 ms",
            **percentiles(samples),
        )

        broad = time_each(lambda q: index.search(q, 10, where={"doc": "urn:doc:d3"}), list(queries[:300]))
        report("search_hnsw_k10_filter_5pct", vectors=n_vectors, queries=len(broad), **percentiles(broad))

        matrix = index._records.matrix  # noqa: SLF001 - the exact path's own data, for comparison
        brute = time_each(lambda q: np.argpartition(-(matrix @ q), 10)[:10], list(queries[:200]))
        report("search_numpy_exact_k10", vectors=n_vectors, queries=len(brute), **percentiles(brute))
        index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=1_000)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    embedder = bench_embedder(args.names, args.chunks, rng)
    bench_index(embedder, args.vectors, args.queries, rng)


if __name__ == "__main__":
    main()
