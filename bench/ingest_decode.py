"""Ingest decoding throughput: PDF pages/s, Markdown and HTML MB/s (decode + chunk).

Generates its inputs in a temporary folder (a reportlab PDF and a Markdown file), then prints
one JSON line per result (``bench/_harness.py``). Targets: >= 100 PDF pages/s, >= 5 MB/s
for Markdown decode + chunk. Figures only; nothing is asserted.

    .venv/bin/python bench/ingest_decode.py [--pages 200] [--markdown-mb 10] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import report  # noqa: E402

from provgraph.ingest.chunker import chunk_text  # noqa: E402
from provgraph.ingest.decoders import decode_file  # noqa: E402

WORDS = (
    "radium polonium uranium isotope laboratory Warsaw Paris Sorbonne Nobel prize physics chemistry "
    "measurement crystal electrometer piezoelectric discovery element radiation decay half-life the of and "
    "a in to was with for by on from as that which naïve café"
).split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def make_pdf(path: Path, pages: int, rng: random.Random) -> None:
    pdf = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    for _ in range(pages):
        text = pdf.beginText(56, 800)
        text.setFont("Helvetica", 10)
        for _ in range(50):
            text.textLine(sentence(rng)[:95])
        pdf.drawText(text)
        pdf.showPage()
    pdf.save()


def make_markdown(path: Path, megabytes: float, rng: random.Random) -> None:
    target = int(megabytes * 1_000_000)
    out: list[str] = []
    size = n = 0
    while size < target:
        n += 1
        if n % 12 == 1:
            block = f"{'#' * rng.randint(1, 3)} Section {n}\n"
        elif n % 12 == 6:
            block = "```\n" + "\n".join(sentence(rng) for _ in range(3)) + "\n```\n"
        else:
            block = " ".join(sentence(rng) for _ in range(rng.randint(2, 9))) + "\n"
        out.append(block)
        size += len(block.encode()) + 1
    path.write_text("\n".join(out), encoding="utf-8")


def timed(fn: Callable[[], object], repeat: int) -> float:
    """The best of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - began)
    return best


def decode_and_chunk(path: Path) -> int:
    doc = decode_file(path)
    parents = [doc.part_text(p) for p in doc.parts] or [doc.text]
    return sum(len(chunk_text(text)) for text in parents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--markdown-mb", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        pdf_path, md_path = Path(tmp) / "bench.pdf", Path(tmp) / "bench.md"
        make_pdf(pdf_path, args.pages, rng)
        make_markdown(md_path, args.markdown_mb, rng)
        md_mb = md_path.stat().st_size / 1e6

        pdf_s = timed(lambda: decode_file(pdf_path), args.repeat)
        md_decode_s = timed(lambda: decode_file(md_path), args.repeat)
        md_total_s = timed(lambda: decode_and_chunk(md_path), args.repeat)
        chunks = decode_and_chunk(md_path)
        text = decode_file(md_path).text
        chunk_s = timed(lambda: chunk_text(text), args.repeat)

    report("pdf_decode", target=">= 100 pages/s", pages=args.pages, seconds=round(pdf_s, 3),
           pages_per_s=round(args.pages / pdf_s, 1))
    report("markdown_decode", megabytes=round(md_mb, 2), mb_per_s=round(md_mb / md_decode_s, 1))
    report("markdown_decode_chunk", target=">= 5 MB/s", megabytes=round(md_mb, 2), chunks=chunks,
           mb_per_s=round(md_mb / md_total_s, 1))
    report("chunker_only", megabytes=round(md_mb, 2), mb_per_s=round(md_mb / chunk_s, 1))

if __name__ == "__main__":
    main()
