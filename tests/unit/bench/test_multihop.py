"""The multi-hop harness (bench/multihop.py, bench/multihop_data.py): conversion, halves, scoring, one real run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from multihop import SYSTEMS, halves, paragraph_id, read_set, run_set, score, summarise, Question  # noqa: E402
from multihop_data import convert  # noqa: E402

HOTPOT_ROW = {"_id": "h1", "type": "bridge", "question": "Q?", "answer": "Paris",
              "supporting_facts": [["B", 0], ["B", 1]],
              "context": [["A", ["First.", " Second."]], ["B", ["Third one.", " Fourth."]]]}
WIKI_ROW = {"_id": "w1", "type": "inference", "question": "Q?", "answer": "x", "supporting_facts": [["A", 0]],
            "context": [["A", ["One.", "Two."]]]}
MUSIQUE_ROW = {"id": "3hop2__1_2_3", "question": "Q?", "answer": "Rome", "answer_aliases": ["Roma"],
               "paragraphs": [{"idx": 0, "title": "T", "paragraph_text": "Text.", "is_supporting": True}]}


def test_convert_joins_sentences_marks_support_and_maps_hops() -> None:
    (h,) = convert("hotpotqa", iter([json.dumps(HOTPOT_ROW), ""]))
    assert h["paragraphs"] == [{"title": "A", "text": "First. Second.", "supporting": False},
                               {"title": "B", "text": "Third one. Fourth.", "supporting": True}]
    (w,) = convert("2wiki", iter([json.dumps(WIKI_ROW), json.dumps({"_id": "w2", "type": "inference"})]))
    assert w["paragraphs"][0]["text"] == "One. Two." and w["answers"] == ["x"]  # the row without context: skipped
    (m,) = convert("musique", iter([json.dumps(MUSIQUE_ROW)]))
    assert (m["type"], m["answers"], m["paragraphs"][0]["supporting"]) == ("3hop", ["Rome", "Roma"], True)


def test_halves_split_evenly_by_hash_whatever_the_order() -> None:
    ids = [f"q{i}" for i in range(11)]
    split = halves(ids)
    assert sum(h == "tune" for h in split.values()) == 6
    assert halves(list(reversed(ids))) == split


def test_score_counts_supporting_share_of_first_k_distinct_paragraphs() -> None:
    q = Question("q", "bridge", "Q?", ("Paris",), frozenset({"a", "b"}), "tune")
    assert score(q, "It is in Paris [1].", ["x", "a", "y", "z", "w", "b"]) == {"r@2": 0.5, "r@5": 0.5, "ans": True}
    assert score(q, None, ["b", "a"]) == {"r@2": 1.0, "r@5": 1.0, "ans": None}


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = []
    for i, (city, river) in enumerate([("Lyon", "Rhone"), ("Cologne", "Rhine"), ("Budapest", "Danube")]):
        rows.append({"id": f"t{i}", "type": "bridge", "question": f"Which river flows through {city}?",
                     "answers": [river], "paragraphs": [
                         {"title": city, "text": f"{city} is a large city. The {river} flows through {city}.",
                          "supporting": True},
                         {"title": f"{river} basin", "text": f"The {river} basin has many tributaries.",
                          "supporting": False}]})
    path = tmp_path_factory.mktemp("multihop") / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_real_run_pools_paragraphs_and_scores_every_system(tiny_set: Path) -> None:
    questions, paragraphs = read_set(tiny_set, None)
    assert len(questions) == 3 and len(paragraphs) == 6
    assert paragraph_id("Lyon", "x") == paragraph_id("Lyon", "x") != paragraph_id("Lyon", "y")
    assert [q.half for q in read_set(tiny_set, 2)[0]] == [q.half for q in questions[:2]]  # --limit keeps halves
    result = run_set("tiny", tiny_set, SYSTEMS, "both", None, lambda _: None)
    assert (result["paragraphs"], result["chunks"]) == (6, 6)
    rows = {r["system"]: r for r in summarise(result, "both")}
    assert set(rows) == set(SYSTEMS) and all(r["n"] == 3 and r["errors"] == 0 for r in rows.values())
    assert rows["bm25"]["all"]["r@5"] == 100.0  # the question's city names its one supporting paragraph
    assert rows["document-rag"]["all"]["r@5"] == 100.0  # five ranked passages of six cover it
    assert rows["dense"]["all"]["ans"] is None  # dense returns no answer text
    for d in result["systems"]["document-rag"]["details"]:
        assert len(d["paragraphs"]) == 5 and len(set(d["paragraphs"])) == 5
