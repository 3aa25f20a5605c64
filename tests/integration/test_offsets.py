"""The offset invariant, end to end: for EVERY chunk and page in the store, slicing the parent's text
at tg:charOffset/tg:charLength gives back exactly the text the librarian holds for it."""

from __future__ import annotations

from pathlib import Path

from provgraph.config import Settings
from provgraph.ingest.pipeline import DocumentLoader
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.librarian.base import Librarian
from provgraph.store import OxigraphStore
from provgraph.store.replica import OxigraphReplica

PARTS = """
SELECT ?node ?parent ?off ?len WHERE { GRAPH <urn:graph:source> {
  ?node prov:wasDerivedFrom ?parent ; tg:charOffset ?off ; tg:charLength ?len .
} }
"""


def _check_all(store: OxigraphStore | OxigraphReplica, lib: Librarian) -> int:
    rows = store.select(PARTS).rows
    texts = lib.texts({r["node"].value for r in rows} | {r["parent"].value for r in rows})  # type: ignore[union-attr]
    for r in rows:
        off, length = int(r["off"].value), int(r["len"].value)  # type: ignore[union-attr]
        parent = texts[r["parent"].value]  # type: ignore[union-attr]
        assert parent[off : off + length] == texts[r["node"].value], r["node"]  # type: ignore[union-attr]
    return len(rows)


def test_every_part_of_the_corpus_slices_back(corpus_settings: Settings) -> None:
    from provgraph.runtime import Runtime

    with Runtime(corpus_settings, create=False) as rt:
        assert _check_all(rt.sparql_store, rt.librarian) > 15


def test_unicode_offsets_count_code_points(tmp_path: Path) -> None:
    text = "\n\n".join([
        "Marie Curie (Maria Skłodowska) 🧪 was born in Warsaw. " * 20,
        "Irène Joliot-Curie — e\u0301lan, cafe\u0301, naïve. " * 30,
        "מארי קירי גילתה את הפולוניום. ماري كوري اكتشفت الراديوم. " * 25,
        "👩‍🔬👨‍👩‍👧 emoji sequences with zero-width joiners. " * 30,
    ])
    md = tmp_path / "unicode.md"
    md.write_text("# Résumé 🧪\n\n" + text + "\n\n## Second — section\n\n" + text, encoding="utf-8")
    store, lib = OxigraphStore(), SqliteLibrarian(tmp_path / "lib")
    result = DocumentLoader(store, lib, chunk_size=300, chunk_overlap=40).load_file(md)
    assert len(result.chunks) > 20
    assert _check_all(store, lib) == result.sections + len(result.chunks)
