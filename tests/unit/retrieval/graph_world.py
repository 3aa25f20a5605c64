"""A tiny, fully known collection for GraphRAG tests: two documents, a handful of facts.

``discovered`` (Marie Curie → polonium) is supported by BOTH documents' subgraphs; the other
facts by one each. Facts are written by hand (not by an extractor) so every test knows exactly
which chunk supports which edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.extract.entities import FactBuilder
from provgraph.ingest.pipeline import DocumentLoader
from provgraph.librarian.sqlite import SqliteLibrarian
from provgraph.models.base import Embedder
from provgraph.models.factory import build_embedder
from provgraph.provenance.subgraph import subgraph_quads
from provgraph.rdf.ids import activity_iri, subgraph_iri
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, GRAPH_SOURCE, RDF, SKOS
from provgraph.store.oxigraph import OxigraphStore
from provgraph.vectors.base import VectorIndex
from provgraph.vectors.usearch_index import UsearchIndex

BASE = "urn:provgraph:entity:"
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

CURIE_TXT = (
    "Marie Curie discovered polonium in July 1898. Marie Curie was born in Warsaw. "
    "Polonium was named after Poland, the homeland of Marie Curie."
)
RADIUM_TXT = (
    "Working with Pierre Curie, Marie Curie discovered polonium and then radium. "
    "Radium glows faintly in the dark."
)


@dataclass
class World:
    store: OxigraphStore
    librarian: SqliteLibrarian
    embedder: Embedder
    index: VectorIndex
    e: dict[str, Iri]
    facts: dict[str, TripleTerm]
    docs: dict[str, Iri]
    chunks: dict[str, Iri]


_EMBEDDER: list[Embedder] = []


def embedder() -> Embedder:
    """The real shipped embedder, loaded once per test session."""
    if not _EMBEDDER:
        _EMBEDDER.append(build_embedder(load_settings(llm="none")))
    return _EMBEDDER[0]


def _support(store: OxigraphStore, chunk: Iri, facts: list[TripleTerm]) -> None:
    sg = subgraph_iri(chunk, "hand-written", "1", None)
    store.add(subgraph_quads(sg, facts=facts, chunk=chunk, activity=activity_iri(sg.value), component="hand-written",
                             version="1", started=WHEN))


def build_world(tmp: Path) -> World:
    """A world in memory (store) and under ``tmp`` (librarian, entity index)."""
    index = UsearchIndex(tmp / "vectors" / "entities", model=embedder().name, dimension=embedder().dimension)
    return populate(OxigraphStore(), SqliteLibrarian(tmp / "librarian"), index, tmp)


def populate(store: OxigraphStore, librarian: SqliteLibrarian, index: VectorIndex, tmp: Path) -> World:
    """Load the two documents, write the facts with their support, and index the entities."""
    (tmp / "curie.txt").write_text(CURIE_TXT, encoding="utf-8")
    (tmp / "radium.txt").write_text(RADIUM_TXT, encoding="utf-8")
    loader = DocumentLoader(store, librarian, clock=lambda: WHEN)
    a = loader.load_file(tmp / "curie.txt", title="Curie notes")
    b = loader.load_file(tmp / "radium.txt", title="Radium notes")
    fb = FactBuilder(BASE)
    e = {k: fb.entity(v) for k, v in {
        "curie": "Marie Curie", "polonium": "polonium", "warsaw": "Warsaw", "poland": "Poland",
        "pierre": "Pierre Curie", "radium": "radium",
    }.items()}
    facts = {
        "discovered": fb.relation("Marie Curie", "discovered", "polonium"),
        "born": fb.relation("Marie Curie", "was born in", "Warsaw"),
        "named": fb.relation("polonium", "was named after", "Poland"),
        "year": fb.relation("polonium", "discovered in", "July 1898", literal=True),
        "worked": fb.relation("Pierre Curie", "worked with", "Marie Curie"),
        "radium": fb.relation("Marie Curie", "discovered", "radium"),
        "glows": fb.definition("radium", "glows faintly in the dark"),
    }
    knowledge = [Quad(f.s, f.p, f.o) for f in facts.values()] + list(fb.label_quads())
    knowledge.append(Quad(e["curie"], RDF.type, Iri("urn:provgraph:class:Person")))  # a schema edge
    store.add(knowledge)
    _support(store, a.chunks[0].iri, [facts[k] for k in ("discovered", "born", "named", "year")])
    _support(store, b.chunks[0].iri, [facts[k] for k in ("discovered", "worked", "radium", "glows")])
    labels = {"curie": "Marie Curie", "polonium": "polonium", "warsaw": "Warsaw", "poland": "Poland",
              "pierre": "Pierre Curie", "radium": "radium"}
    index.upsert([e[k].value for k in labels], embedder().embed(list(labels.values())),
                 [{"entity": e[k].value, "label": v, "definition": None, "chunks": []} for k, v in labels.items()])
    return World(store, librarian, embedder(), index, e, facts, {"curie": a.document, "radium": b.document},
                 {"curie": a.chunks[0].iri, "radium": b.chunks[0].iri})


def add_noise(store: OxigraphStore, e: dict[str, Iri]) -> None:
    """Edges about the seed entities in the provenance and retrieval graphs: never walked."""
    store.add([
        Quad(e["curie"], Iri("urn:noise:p"), Iri("urn:noise:o1"), GRAPH_RETRIEVAL),
        Quad(Iri("urn:noise:s"), Iri("urn:noise:p"), e["polonium"], GRAPH_RETRIEVAL),
        Quad(e["curie"], Iri("urn:noise:p"), Literal("old trace"), GRAPH_SOURCE),
        Quad(e["radium"], SKOS.definition, Literal("noise"), GRAPH_SOURCE),
    ])


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = build_world(tmp_path)
    yield w
    w.index.close()
    w.librarian.close()
