"""The quality harness's scoring rules (bench/quality_score.py) and keyword baseline (bench/quality_bm25.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from quality_bm25 import Bm25Baseline, sentences, terms  # noqa: E402
from quality_score import (  # noqa: E402
    EvalSetError,
    covers,
    evidence_found,
    find_sets,
    is_correct,
    load_set,
    normalize,
    quote_spans,
)


def test_normalize_folds_case_accents_markup_and_space() -> None:
    assert normalize("  Irène  JOLIOT-Curie\n_Le Monde_ **x**") == "irene joliot-curie le monde x"


@pytest.mark.parametrize(("answer", "gold", "expected"), [
    ("Marie Curie discovered polonium in 1898 [1].", [["1898"], ["polonium"]], True),
    ("She discovered polonium [1].", [["1898"], ["polonium"]], False),           # every item is required
    ("It was Pierre [2].", [["Pierre Curie", "Pierre"]], True),                   # any alternative will do
    ("IRÈNE joliot-curie", [["Irene Joliot-Curie"]], True),                       # case and accents folded
    ("_Le Monde_ reported it", [["Le Monde"]], True),                             # emphasis markup ignored
    ("Poland and Warsaw", [["Po"]], False),                                       # whole words only
    ("in 18981 copies", [["1898"]], False),
    ("x" * 800 + " 1898", [["1898"]], False),                                     # beyond the 800-char window
    ("x" * 790 + " 1898", [["1898"]], True),
])
def test_is_correct(answer: str, gold: list[list[str]], expected: bool) -> None:
    assert is_correct(answer, gold) is expected


def test_quote_spans_finds_every_occurrence() -> None:
    assert quote_spans("abcabca", "abca") == [(0, 4), (3, 7)]
    assert quote_spans("abc", "zz") == []


def test_covers_needs_half_the_quote_or_forty_characters() -> None:
    assert covers((0, 100), (90, 110)) is True       # 10 of a 20-char quote
    assert covers((0, 100), (91, 111)) is False      # 9 of 20
    assert covers((0, 100), (60, 300)) is True       # 40 shared: enough for a long quote
    assert covers((0, 100), (61, 300)) is False
    assert covers((0, 10), (10, 20)) is False        # touching is not overlapping


def test_evidence_found_matches_document_and_span() -> None:
    quotes = [("doc-a", [(100, 140)]), ("doc-b", [(0, 30), (500, 530)])]
    assert evidence_found([("doc-a", 0, 130), ("doc-b", 480, 520)], quotes) == [True, True]
    assert evidence_found([("doc-b", 100, 140)], quotes) == [False, False]


def _write_set(root: Path, lines: list[dict]) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "questions.jsonl").write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return root


def _q(**kw: object) -> dict:
    base = {"id": "q1", "type": "single", "question": "Who?", "gold": [["Curie"]],
            "evidence": [{"document": "a.txt", "quote": "Curie found it"}]}
    return {**base, **kw}


def test_load_set_checks_quotes_verbatim(tmp_path: Path) -> None:
    root = _write_set(tmp_path / "s", [_q()])
    ev = load_set(root, {"a.txt": "Marie Curie found it in 1898."})
    assert [(q.id, q.gold, q.evidence[0].document) for q in ev.questions] == [("q1", (("Curie",),), "a.txt")]
    with pytest.raises(EvalSetError, match=r"quote not verbatim in a.txt: 'Curie found it'"):
        load_set(root, {"a.txt": "Marie Curie  found it"})
    with pytest.raises(EvalSetError, match=r"evidence document 'a.txt' is not in"):
        load_set(root, {"b.txt": "Curie found it"})


@pytest.mark.parametrize(("bad", "message"), [
    ({"type": "trivia"}, "type 'trivia' is not one of single, relation, two-passage"),
    ({"gold": [[]]}, "gold must be a non-empty list"),
    ({"gold": ["Curie"]}, "gold must be a non-empty list"),
    ({"evidence": []}, "evidence must be a non-empty list"),
    ({"question": "Was it Curie?"}, r"gold \['Curie'\] occurs in the question itself"),
    ({"gold": [["Curie"], ["1898"]]}, r"gold \['1898'\] occurs in none of the evidence quotes"),
])
def test_load_set_rejects_malformed_questions(tmp_path: Path, bad: dict, message: str) -> None:
    root = _write_set(tmp_path / "s", [_q(**bad)])
    with pytest.raises(EvalSetError, match=message):
        load_set(root)


def test_load_set_rejects_duplicate_ids(tmp_path: Path) -> None:
    root = _write_set(tmp_path / "s", [_q(), _q()])
    with pytest.raises(EvalSetError, match="duplicate id q1"):
        load_set(root)


def test_find_sets_sees_heldout_sets(tmp_path: Path) -> None:
    _write_set(tmp_path / "dev", [_q()])
    _write_set(tmp_path / "heldout" / "secret", [_q()])
    assert find_sets(tmp_path) == {"dev": tmp_path / "dev", "secret": tmp_path / "heldout" / "secret"}


def test_terms_and_sentences() -> None:
    assert terms("Who discovered the element Polonium, and when?") == ["discovered", "element", "polonium"]
    assert terms("What was the diameter of Sputnik 1, in cm?") == ["diameter", "sputnik", "1", "cm"]
    assert sentences("Radium\nMarie Curie found it. In 1898 she named it.\n\nNext") == [
        "Radium", "Marie Curie found it.", "In 1898 she named it.", "Next"]


def test_bm25_baseline_ranks_chunks_and_picks_best_sentences() -> None:
    chunks = [
        ("c1", "Cats sleep a lot. The weather was fine."),
        ("c2", "Polonium was discovered in 1898. Marie Curie named polonium after Poland. Bread is baked."),
        ("c3", "Unrelated text about trains."),
    ]
    bm25 = Bm25Baseline(chunks)
    try:
        ans = bm25.answer("Who named polonium after Poland?")
        assert ans.chunks == ("c2",)
        assert ans.text == "Polonium was discovered in 1898. Marie Curie named polonium after Poland."
        assert bm25.search("nothing matches zebra") == []
    finally:
        bm25.close()


def test_run_set_scores_the_baseline_on_real_chunks(tmp_path: Path) -> None:
    from quality import run_set, table

    root = _write_set(tmp_path / "mini", [
        _q(id="a", question="Which element did Marie Curie name after Poland?", gold=[["polonium"]],
           evidence=[{"document": "curie.txt", "quote": "Marie Curie named polonium after Poland"}]),
        _q(id="b", type="two-passage", question="Where was Becquerel born and what did Curie name?",
           gold=[["Paris"], ["polonium"]],
           evidence=[{"document": "curie.txt", "quote": "Marie Curie named polonium after Poland"},
                     {"document": "notes/becquerel.md", "quote": "Becquerel was born in Paris"}]),
    ])
    (root / "docs" / "notes").mkdir()
    (root / "docs" / "curie.txt").write_text(
        "Radium and polonium\n\nMarie Curie named polonium after Poland, her native country. " * 3, encoding="utf-8")
    (root / "docs" / "notes" / "becquerel.md").write_text("# Becquerel\n\nHenri Becquerel was born in Paris.\n",
                                                          encoding="utf-8")
    out = run_set(load_set(root), ("bm25",), None, 3, lambda _msg: None)
    bm25 = out["systems"][0]
    assert (out["set"], out["documents"], out["warnings"]) == ("mini", 2, [])
    assert [(d["id"], d["correct"], d["found_at_k"], d["all_at_k"]) for d in bm25["details"]] == [
        ("a", True, True, True),  # only the Curie chunk holds a question word
        ("b", False, True, True),  # both chunks found, but the two best sentences are both about Becquerel
    ]
    assert (bm25["single"], bm25["two-passage"], bm25["overall"], bm25["evidence@3"]) == ([1, 1], [0, 1], [1, 2],
                                                                                          [2, 2])
    assert table(out).splitlines()[3].split()[:9] == ["bm25", "1/1", "0/0", "0/1", "1/2", "2/2", "2/2", "2/2", "1.5"]


def test_run_set_fails_before_loading_when_a_quote_is_not_verbatim(tmp_path: Path) -> None:
    from quality import run_set

    root = _write_set(tmp_path / "mini", [_q(evidence=[{"document": "a.txt", "quote": "Curie  found it"}])])
    (root / "docs" / "a.txt").write_text("Curie found it.", encoding="utf-8")
    with pytest.raises(EvalSetError, match="quote not verbatim in a.txt"):
        run_set(load_set(root), ("bm25",), None, 3, lambda _msg: None)
