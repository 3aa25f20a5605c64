"""The multi-hop sets of ``bench/multihop.py``: one JSON Lines file per set, made from a public copy of the data.

Each line is one question with its own paragraphs (supporting and distractors)::

    {"id": "...", "type": "2hop", "question": "...", "answers": ["gold", "alias", ...],
     "paragraphs": [{"title": "...", "text": "...", "supporting": true}, ...]}

The data files are not part of the repository (they are other people's text under their own licences): this
module writes them from a git directory holding the source files (see ``bench/eval/multihop/SOURCES.md`` for
the repository, commit and paths), into ``bench/eval/multihop/<set>/data.jsonl`` (git-ignored)::

    .venv/bin/python bench/multihop_data.py --source /path/to/AdelWang+MIGRES/repo     # a bare or full git dir

Conversion only: the questions, answers, types and paragraphs are the source's, in the source's order; a
paragraph's text is its sentences joined (HotpotQA's sentences carry their own leading spaces).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["DATA_ROOT", "SETS", "SOURCE_COMMIT", "convert", "data_file"]

DATA_ROOT = Path(__file__).resolve().parent / "eval" / "multihop"
SOURCE_COMMIT = "1de6265c9ca1014054d6ba875738e785830908f8"
SETS = {"2wiki": "data/wikihop.json", "musique": "data/musique.json", "hotpotqa": "data/hotpot.json"}
"""Set name → path of its file in the source repository (JSON Lines, one question a line)."""

_MUSIQUE_HOPS = {"2hop": "2hop", "3hop1": "3hop", "3hop2": "3hop", "4hop1": "4hop", "4hop2": "4hop", "4hop3": "4hop"}


def data_file(name: str, root: Path = DATA_ROOT) -> Path:
    """Where set ``name``'s converted file lives."""
    return root / name / "data.jsonl"


def _sentences(parts: list[str]) -> str:
    out = ""
    for s in parts:
        out += s if not out or s[:1].isspace() else " " + s
    return out.strip()


def _wiki_style(row: dict) -> dict | None:
    """HotpotQA / 2WikiMultiHopQA: ``context`` [title, sentences], ``supporting_facts`` [title, sentence]."""
    if "context" not in row:
        return None  # some 2Wiki rows of the source carry no paragraphs
    support = {t for t, _ in row["supporting_facts"]}
    paragraphs = [{"title": t, "text": _sentences(s), "supporting": t in support} for t, s in row["context"]]
    return {"id": row["_id"], "type": row["type"], "question": row["question"], "answers": [row["answer"]],
            "paragraphs": paragraphs}


def _musique(row: dict) -> dict | None:
    paragraphs = [{"title": p["title"], "text": p["paragraph_text"], "supporting": bool(p["is_supporting"])}
                  for p in row["paragraphs"]]
    return {"id": row["id"], "type": _MUSIQUE_HOPS[row["id"].split("__")[0]], "question": row["question"],
            "answers": [row["answer"], *row.get("answer_aliases", [])], "paragraphs": paragraphs}


_CONVERT: dict[str, Callable[[dict], dict | None]] = {"2wiki": _wiki_style, "hotpotqa": _wiki_style,
                                                      "musique": _musique}


def convert(name: str, lines: Iterator[str]) -> list[dict]:
    """Set ``name``'s source lines as question records (rows without paragraphs skipped)."""
    out = []
    for line in lines:
        if line.strip():
            rec = _CONVERT[name](json.loads(line))
            if rec is not None:
                out.append(rec)
    return out


def _git_show(source: Path, commit: str, path: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(source), "show", f"{commit}:{path}"], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"{source}: cannot read {commit}:{path}: {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, required=True, help="git directory of the source repository")
    ap.add_argument("--commit", default=SOURCE_COMMIT)
    ap.add_argument("--out", type=Path, default=DATA_ROOT)
    args = ap.parse_args(argv)
    source = args.source / ".git" if (args.source / ".git").exists() else args.source
    for name, path in SETS.items():
        records = convert(name, iter(_git_show(source, args.commit, path).splitlines()))
        target = data_file(name, args.out)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        pooled = len({(p["title"], p["text"]) for r in records for p in r["paragraphs"]})
        print(f"{name}: {len(records)} questions, {pooled} distinct paragraphs -> {target}"
              f" ({target.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
