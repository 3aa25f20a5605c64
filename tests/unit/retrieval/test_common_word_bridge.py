"""The bridge hop takes no capitalised common word ("Men", "College") as a bridge entity: a one-word label that
many chunks have, far more than name it as an entity."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from provgraph.librarian.lexical import Fts5Index
from provgraph.retrieval.graph_rank import GraphRanker


def test_a_words_share_counts_the_chunks_having_it_as_written(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    index.put("chunk", [("a", "1", "Men at work"), ("b", "1", "the men left"), ("c", "1", "mentioned"),
                        ("d", "1", "Ada Lovelace")])
    assert index.share("Men") == 0.5  # not "mentioned": the exact forms
    assert index.share("Ada Lovelace") == 0.0  # one word only
    index.put("chunk", [("d", "2", "men")])
    assert index.share("men") == 0.75  # the kept shares follow a write
    index.close()


def _ranker(labels: dict[str, str], shares: dict[str, float], named_in: dict[str, int]) -> GraphRanker:
    retriever: Any = SimpleNamespace(names=lambda e: [labels[e]],
                                     lexical=SimpleNamespace(share=lambda w: shares[w]))
    graph: Any = SimpleNamespace(chunk_count=1000, chunks_of=lambda e: set(range(named_in[e])))
    return GraphRanker(retriever, graph)


def test_a_one_word_label_in_many_chunks_but_rarely_an_entity_is_a_common_word() -> None:
    ranker = _ranker({"men": "Men", "moon": "Moon", "byron": "Byron", "ada": "Ada Lovelace"},
                     {"Men": 0.08, "Moon": 0.08, "Byron": 0.01, "Ada Lovelace": 0.5},
                     {"men": 3, "moon": 60, "byron": 3, "ada": 3})
    assert ranker._common_word("men")  # 80 chunks have the word, 3 name it
    assert not ranker._common_word("moon")  # named as an entity in most chunks that have it
    assert not ranker._common_word("byron")  # rare as a word
    assert not ranker._common_word("ada")  # a name of two words
