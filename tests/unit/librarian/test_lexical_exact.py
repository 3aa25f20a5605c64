"""A chunk's lexical score adds its exact word forms to its stemmed ones: the question's own forms rank first."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from provgraph.librarian.lexical import EXACT, LEXICAL_DB, Fts5Index


def test_the_questions_own_word_form_ranks_above_another_form(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    # the same stems and lengths: without the exact forms the two tie, and the first written ranks first
    index.put("chunk", [("other", "1", "the launch of Sputnik in October"),
                        ("same", "1", "Sputnik was launched in October")])
    assert [h.id for h in index.search("chunk", "When was Sputnik launched?", 5)] == ["same", "other"]
    assert [h.id for h in index.search("chunk", "the launch of Sputnik", 5)] == ["other", "same"]
    assert {h.id for h in index.search("chunk", "launching", 5)} == {"other", "same"}  # stems still meet
    index.close()


def test_a_rewritten_or_removed_chunk_takes_its_exact_forms_along(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    index.put("chunk", [("a", "1", "polonium discovered"), ("b", "1", "radium")])
    index.put("chunk", [("a", "2", "uranium studied")])
    assert [h.id for h in index.search("chunk", "discovered", 5)] == []
    index.remove("chunk", ["b"])
    assert index.search("chunk", "radium", 5) == []
    rows = index._db.execute(f"SELECT rowid FROM {EXACT}").fetchall()
    assert rows == index._db.execute("SELECT rowid FROM lexical_chunk").fetchall()  # one copy a chunk, same rowid
    index.close()


def test_an_index_without_exact_forms_is_dropped_to_be_filled_again(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / LEXICAL_DB)
    db.execute("CREATE VIRTUAL TABLE lexical_chunk USING fts5(id UNINDEXED, stamp UNINDEXED, body, "
               "tokenize = 'porter unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO lexical_chunk (id, stamp, body) VALUES ('a', '1', 'polonium')")
    db.commit()
    db.close()
    index = Fts5Index(tmp_path)
    assert index.stamps("chunk") == {}  # derived data: the next sync puts every chunk again
    index.put("chunk", [("a", "1", "polonium")])
    assert [h.id for h in index.search("chunk", "polonium", 5)] == ["a"]
    index.close()


def test_a_word_form_no_chunk_writes_keeps_its_weight_through_its_stem(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    # "discover" is written nowhere: its stem's matches stand in for its exact form, so the names the question
    # also says (written as asked, everywhere) do not outweigh the chunk that says what was discovered
    index.put("chunk", [("names", "1", "Marie Curie and Pierre Curie shared a prize; Marie Curie taught"),
                        ("found", "1", "Radium was discovered by Marie Curie in December 1898")])
    assert [h.id for h in index.search("chunk", "What did Marie Curie discover?", 5)] == ["found", "names"]
    index.close()
