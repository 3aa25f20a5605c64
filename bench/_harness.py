"""Shared benchmark helpers: timing, percentiles, one JSON line per result. Benchmarks never assert."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def rocksdb_cpu_seconds() -> float:
    """CPU seconds this process's RocksDB background threads (named ``rocksdb:…``) have used so far (Linux /proc)."""
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").glob("*"):
        try:
            if (task / "comm").read_text().startswith("rocksdb"):
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except OSError:
            continue  # the thread ended
    return total / tick


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 of samples (seconds) in milliseconds."""
    ordered = sorted(samples)

    def at(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000

    return {"p50_ms": round(at(0.50), 4), "p95_ms": round(at(0.95), 4), "p99_ms": round(at(0.99), 4),
            "mean_ms": round(statistics.fmean(ordered) * 1000, 4)}


def time_each(fn: Callable[[Any], object], inputs: Sequence[Any], warmup: int = 20) -> list[float]:
    """Time ``fn(x)`` for every input after a warm-up; returns seconds per call."""
    for x in inputs[:warmup]:
        fn(x)
    out = []
    for x in inputs:
        t0 = time.perf_counter()
        fn(x)
        out.append(time.perf_counter() - t0)
    return out


def run_clients(fn: Callable[[int], object], clients: int) -> float:
    """Run ``fn(0) … fn(clients - 1)`` each in its own thread at once; the wall seconds until all return."""
    threads = [threading.Thread(target=fn, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def report(name: str, target: str | None = None, **figures: Any) -> None:
    """Print one result line: JSON with the figures and the issue's target."""
    line = {"bench": name, **figures}
    if target:
        line["target"] = target
    print(json.dumps(line, ensure_ascii=False), flush=True)
