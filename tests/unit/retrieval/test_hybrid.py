"""Hybrid retrieval: the lexical index follows the librarian, fusion, duplicates, boilerplate, entities."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from provgraph.librarian import NewRecord, SqliteLibrarian
from provgraph.librarian.lexical import LEXICAL_DB, Fts5Index
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, RDFS
from provgraph.retrieval.hybrid import DENSE, LEXICAL, Finding, HybridRetriever, fuse
from provgraph.retrieval.lexical_sync import ALT_LABEL
from provgraph.store.oxigraph import OxigraphStore

CONTENT = "Ernest Rutherford discovered the proton in 1917 while working at Manchester."
LINKS = "[3] Rutherford, proton. p. 4 [4] [5]"
OTHER = "Marie Curie isolated radium with Pierre Curie in Paris, where she taught physics."


def doc(ident: str, chunks: list[str]) -> list[NewRecord]:
    text = "\n\n".join(chunks)
    out = [NewRecord(id=ident, kind="document", content=text)]
    offset = 0
    for i, chunk in enumerate(chunks):
        out.append(NewRecord(id=f"{ident}/c{i}", kind="chunk", content=chunk, parent_id=ident, number=i,
                             offset=offset, length=len(chunk)))
        offset += len(chunk) + 2
    return out


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[tuple[SqliteLibrarian, Fts5Index, OxigraphStore]]:
    lib = SqliteLibrarian(tmp_path / "lib")
    lexical = Fts5Index(tmp_path / "lib")
    yield lib, lexical, OxigraphStore()
    lexical.close()
    lib.close()


def test_fts5_index_puts_searches_and_removes(tmp_path: Path) -> None:
    index = Fts5Index(tmp_path)
    index.put("chunk", [("a", "h1", CONTENT), ("b", "h2", OTHER)])
    hits = index.search("chunk", "Who discovered the proton?", 5)
    assert [(h.id, h.rank) for h in hits] == [("a", 1)] and hits[0].score > 0
    assert index.stamps("chunk") == {"a": "h1", "b": "h2"} and index.stamps("entity") == {}
    index.remove("chunk", ["a"])
    assert index.search("chunk", "proton", 5) == []
    index.close()


def test_fusion_records_each_retrievers_rank_and_score() -> None:
    fused = fuse({LEXICAL: [("a", 7.5), ("b", 2.0)], DENSE: [("b", 0.8), ("c", 0.5)]})
    assert [r.id for r in fused] == ["b", "a", "c"]
    assert fused[0].found == (Finding(LEXICAL, 2, 2.0), Finding(DENSE, 1, 0.8))
    assert fused[0].score == pytest.approx(1 / (10 + 2) + 0.3 / (10 + 1))  # weighted RRF, k = 10


def test_duplicates_collapse_and_a_link_list_never_outranks_content(parts) -> None:
    lib, lexical, store = parts
    lib.add(doc("urn:d1", [LINKS, CONTENT]) + doc("urn:d2", [CONTENT, OTHER]))
    ranked = HybridRetriever(lexical, lib, store).chunks("Who discovered the proton? Rutherford", None, 5)
    ids = [r.id for r in ranked]
    assert ids[-1] == "urn:d1/c0" and ranked[-1].demoted  # the link list, after every content chunk
    assert len([i for i in ids if i in ("urn:d1/c1", "urn:d2/c0")]) == 1  # identical texts: one slot
    assert ranked[0].by(LEXICAL) is not None and ranked[0].by(LEXICAL).rank >= 1


def test_the_lexical_index_follows_removals_and_is_rebuilt_when_lost(parts, tmp_path: Path) -> None:
    lib, lexical, store = parts
    lib.add(doc("urn:d1", [CONTENT]) + doc("urn:d2", [OTHER]))
    retriever = HybridRetriever(lexical, lib, store)
    assert [r.id for r in retriever.chunks("radium Paris", None, 3)] == ["urn:d2/c0"]
    lib.remove("urn:d2")
    assert retriever.chunks("radium Paris", None, 3) == []
    assert set(lexical.stamps("chunk")) == {"urn:d1/c0"}
    lexical.close()
    (tmp_path / "lib" / LEXICAL_DB).unlink()
    rebuilt = Fts5Index(tmp_path / "lib")
    assert [r.id for r in HybridRetriever(rebuilt, lib, store).chunks("proton", None, 3)] == ["urn:d1/c0"]
    rebuilt.close()


def test_entities_named_in_the_question_come_first_including_aliases(parts) -> None:
    lib, lexical, store = parts
    e = "urn:provgraph:entity:"
    store.add([
        Quad(Iri(e + "ernest%20rutherford"), RDFS.label, Literal("Ernest Rutherford")),
        Quad(Iri(e + "ernest%20rutherford"), ALT_LABEL, Literal("Rutherford")),
        Quad(Iri(e + "proton"), RDFS.label, Literal("proton")),
        Quad(Iri(e + "proton%20therapy%20centre"), RDFS.label, Literal("proton therapy centre")),
        Quad(Iri(e + "rel/discovered"), RDFS.label, Literal("discovered")),
    ])
    ranked = HybridRetriever(lexical, lib, store).entities("What did Rutherford discover about the proton?", None, 5)
    ids = [r.id for r in ranked]
    assert set(ids[:2]) == {e + "ernest%20rutherford", e + "proton"} and all(r.exact for r in ranked[:2])
    assert e + "rel/discovered" not in ids  # predicates are not entities
    assert not ranked[-1].exact


def test_dense_hits_join_the_fusion(parts) -> None:
    lib, lexical, store = parts
    lib.add(doc("urn:d1", [CONTENT, OTHER]))

    class Dense:
        def search(self, vector: np.ndarray, k: int, *, where: object = None) -> list:
            from provgraph.vectors.base import Hit
            return [Hit("x", 0.9, {"chunk": "urn:d1/c1"})]

    ranked = HybridRetriever(lexical, lib, store, chunk_index=Dense()).chunks("proton", np.ones(3), 5)
    assert [r.id for r in ranked] == ["urn:d1/c0", "urn:d1/c1"]  # both rank 1 of one retriever: ties by id
    assert {f.retriever for r in ranked for f in r.found} == {LEXICAL, DENSE}



def test_one_question_searches_the_chunk_vectors_once_per_vector(parts) -> None:
    lib, lexical, store = parts
    lib.add(doc("urn:d1", [CONTENT, OTHER]))
    searched: list[bytes] = []

    class Dense:
        def search(self, vector: np.ndarray, k: int, *, where: object = None) -> list:
            from provgraph.vectors.base import Hit
            searched.append(np.asarray(vector).tobytes())
            return [Hit("x", 0.9, {"chunk": "urn:d1/c1"})]

    retriever = HybridRetriever(lexical, lib, store, chunk_index=Dense())
    with retriever.one_question():
        first = retriever.chunks("proton", np.ones(3), 5)
        again = retriever.chunks("Rutherford proton", np.ones(3), 5)  # a bridge search: other words, same vector
        retriever.chunks("proton", np.zeros(3), 5)
    assert len(searched) == 2 and [r.id for r in first] == [r.id for r in again] == ["urn:d1/c0", "urn:d1/c1"]
    retriever.chunks("proton", np.ones(3), 5)  # outside a question: searched again (the index may have changed)
    assert len(searched) == 3


def test_kept_texts_and_labels_follow_their_sources(parts) -> None:
    lib, lexical, store = parts
    lib.add(doc("urn:d1", [CONTENT]))
    retriever = HybridRetriever(lexical, lib, store)
    assert retriever.chunks("proton", None, 5)[0].text == CONTENT
    lib.remove("urn:d1")
    lib.add(doc("urn:d1", [CONTENT + " Twice."]))  # the same chunk id, another text
    assert retriever.chunks("proton", None, 5)[0].text == CONTENT + " Twice."
    e = Iri("urn:e:rutherford")
    store.add([Quad(e, RDFS.label, Literal("Rutherford"))])
    assert retriever.labels([e, Iri("urn:e:none")]) == {e: [Literal("Rutherford")]}
    store.apply(remove=[Quad(e, RDFS.label, Literal("Rutherford"))], add=[Quad(e, RDFS.label, Literal("Lord Rutherford"))])
    assert retriever.labels([e]) == {e: [Literal("Lord Rutherford")]}

def test_the_lexical_index_resyncs_only_after_its_source_was_written(
    parts: tuple[SqliteLibrarian, Fts5Index, OxigraphStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    import provgraph.retrieval.hybrid as hybrid

    lib, lexical, store = parts
    syncs: list[str] = []
    real_chunks, real_entities = hybrid.sync_chunks, hybrid.sync_entities
    monkeypatch.setattr(hybrid, "sync_chunks", lambda *a: syncs.append("chunk") or real_chunks(*a))
    monkeypatch.setattr(hybrid, "sync_entities", lambda *a: syncs.append("entity") or real_entities(*a))
    lib.add(doc("urn:doc:a", [CONTENT]))
    store.add([Quad(Iri("urn:e:rutherford"), RDFS.label, Literal("Ernest Rutherford"))])
    retriever = HybridRetriever(lexical, lib, store)
    for _ in range(3):  # nothing written in between: one sync of each kind
        assert [r.id for r in retriever.chunks("Who discovered the proton?", None, 3)] == ["urn:doc:a/c0"]
        assert [r.id for r in retriever.entities("Who was Rutherford?", None, 3)] == ["urn:e:rutherford"]
    assert syncs == ["chunk", "entity"]
    lib.add(doc("urn:doc:b", [OTHER]))
    store.add([Quad(Iri("urn:e:curie"), RDFS.label, Literal("Marie Curie"))])
    assert [r.id for r in retriever.chunks("Who isolated radium?", None, 3)] == ["urn:doc:b/c0"]
    assert [r.id for r in retriever.entities("Who was Marie Curie?", None, 3)][0] == "urn:e:curie"
    assert syncs == ["chunk", "entity", "chunk", "entity"]
    # a question's own writes (its answer record, its trace) are not sources of the index
    lib.add([NewRecord(id="urn:answer:1", kind="answer", content="Marie Curie.")])
    store.add([Quad(Iri("urn:q:1"), RDFS.label, Literal("a question"), GRAPH_RETRIEVAL)])
    retriever.chunks("Who isolated radium?", None, 3)
    retriever.entities("Who was Marie Curie?", None, 3)
    assert syncs == ["chunk", "entity", "chunk", "entity"]


def test_the_lexical_index_replaces_and_removes_rows_by_id(tmp_path: Path) -> None:
    lexical = Fts5Index(tmp_path)
    lexical.put("chunk", [("a", "h1", "proton"), ("b", "h2", "radium"), ("a", "h3", "neutron")])
    lexical.put("chunk", [("b", "h4", "polonium")])
    assert lexical.stamps("chunk") == {"a": "h3", "b": "h4"}
    assert {h.id for h in lexical.search("chunk", "neutron polonium", 5)} == {"a", "b"}
    assert {h.id for h in lexical.search("chunk", "proton radium", 5)} == set()
    lexical.remove("chunk", ["a", "unknown"])
    assert lexical.stamps("chunk") == {"b": "h4"}
    lexical.close()
