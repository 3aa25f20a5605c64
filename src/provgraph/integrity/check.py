"""Cross-store invariants of a collection, and repairing what can be derived.

Invariants (the librarian and the store are the sources; vectors are derived):

* every librarian document has a completion record (else its load was interrupted);
* every complete document is in the store, and its chunks are the same in both;
* every store document is in the librarian;
* no page, section or chunk without its document, no subgraph without its chunk;
* every chunk of a complete document has its vector, and no chunk vector is left over;
* every entity with support has a vector, and none without;
* every blob file of the librarian is there with the bytes its name (SHA-256) says; each index's
  saved HNSW graph matches the SHA-256 recorded with it (checked by the command, which opens them).

Repair removes orphans from the store and rebuilds vectors; it never removes a document or a
librarian record, and says what it cannot fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from provgraph.errors import IndexError_
from provgraph.extract.derived import VectorRecord, chunk_records, entity_records, supported_entities
from provgraph.librarian.base import Librarian
from provgraph.models.base import Embedder
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV, RDF, TG
from provgraph.store.base import QuadStore
from provgraph.store.support import subgraph_removal
from provgraph.vectors.base import VectorIndex

__all__ = ["Problem", "Parts", "CheckReport", "find_problems", "repair", "check_graph", "run_check"]

_BATCH = 256


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken invariant: what kind, about what, and whether ``--repair`` can fix it."""

    kind: str
    subject: str
    detail: str
    repairable: bool

    def to_json(self) -> dict[str, object]:
        """As a JSON object."""
        return asdict(self)


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found, what ``--repair`` did, and what is left (``left`` empty: consistent)."""

    collection: str
    found: list[Problem]
    done: list[str]
    left: list[Problem]
    counts: dict[str, int]
    repaired: bool

    @property
    def consistent(self) -> bool:
        """No problem left."""
        return not self.left

    def to_json(self) -> dict[str, object]:
        """What ``provgraph check --format json`` prints."""
        return {"collection": self.collection, "consistent": self.consistent, **self.counts,
                "problems": [p.to_json() for p in self.found], "repaired": self.done,
                "remaining": [p.to_json() for p in self.left]}


@dataclass
class Parts:
    """The open parts of one collection."""

    store: QuadStore
    librarian: Librarian
    chunk_index: VectorIndex
    entity_index: VectorIndex
    embedder: Embedder


def _typed(store: QuadStore, cls: Iri) -> set[Iri]:
    return {q.s for q in store.match(None, RDF.type, cls, g=GRAPH_SOURCE) if isinstance(q.s, Iri)}


def _parent(store: QuadStore, node: Iri) -> Iri | None:
    for q in store.match(node, PROV.wasDerivedFrom, None, g=GRAPH_SOURCE):
        if isinstance(q.o, Iri):
            return q.o
    return None


def _store_chunks(doc: Iri, children: dict[Iri, set[Iri]], chunks: set[Iri]) -> set[Iri]:
    out: set[Iri] = set()
    for parent in (doc, *children.get(doc, set())):
        out |= children.get(parent, set())
    return out & chunks


def find_problems(parts: Parts) -> list[Problem]:
    """Every broken invariant, documents first, then store orphans, then vectors."""
    store, lib = parts.store, parts.librarian
    chunks = _typed(store, TG.Chunk)
    problems: list[Problem] = []
    in_lib = {r.id for r in lib.list(kind="document")}
    complete = lib.complete_documents() & in_lib
    in_store = {d.value for d in _typed(store, TG.Document)}
    for doc in sorted(in_lib - complete):
        problems.append(Problem("incomplete-document", doc, "its load was interrupted: run `provgraph load` on it "
                                "again (it redoes the document), or remove it with `provgraph documents remove`",
                                False))
    for doc in sorted(complete - in_store):
        problems.append(Problem("document-missing-from-store", doc, "in the librarian but not in the store: restore "
                                "a backup, or remove it and load it again", False))
    for doc in sorted(in_store - in_lib):
        problems.append(Problem("document-missing-from-librarian", doc, "in the store but not in the librarian "
                                "(imported graph data, or an interrupted removal): its text is not available; load "
                                "it again or remove it with `provgraph documents remove`", False))
    children: dict[Iri, set[Iri]] = {}
    for cls in (TG.Page, TG.Section, TG.Chunk):
        for node in _typed(store, cls):
            parent = _parent(store, node)
            if parent is not None:
                children.setdefault(parent, set()).add(node)
    for doc in sorted(complete & in_store):
        lib_chunks = {r.id for r in chunk_records(lib, [doc], texts=False)}
        st_chunks = {c.value for c in _store_chunks(Iri(doc), children, chunks)}
        if lib_chunks != st_chunks:
            problems.append(Problem("chunks-differ", doc, f"{len(lib_chunks - st_chunks)} chunk(s) only in the "
                                    f"librarian, {len(st_chunks - lib_chunks)} only in the store: load it again "
                                    "or restore a backup", False))
    for record, kind, path, why in lib.damaged_blobs():
        problems.append(Problem("bytes-lost", record, f"the {kind}'s stored bytes {path} are {why}; they cannot be "
                                "derived: restore a backup, or remove the document (`provgraph documents remove`) "
                                "and load its file again", False))
    problems += _store_orphans(store, chunks)
    problems += _vector_problems(parts, complete & in_store, in_lib - complete)
    return problems


def _store_orphans(store: QuadStore, chunks: set[Iri]) -> list[Problem]:
    docs = _typed(store, TG.Document)
    out: list[Problem] = []
    parts = _typed(store, TG.Page) | _typed(store, TG.Section)
    for node in sorted(parts | chunks, key=lambda n: n.value):
        parent = _parent(store, node)
        ok = parent in docs or (parent in parts and _parent(store, parent) in docs)
        if not ok:
            out.append(Problem("orphan-node", node.value, "a page, section or chunk without its document", True))
    for sg in sorted(_typed(store, TG.Subgraph), key=lambda n: n.value):
        if _parent(store, sg) not in chunks:
            out.append(Problem("orphan-subgraph", sg.value, "an extraction subgraph without its chunk", True))
    return out


def _vector_problems(parts: Parts, complete: set[str], incomplete: set[str]) -> list[Problem]:
    out: list[Problem] = []
    wanted = {r.id: r for r in chunk_records(parts.librarian, sorted(complete), texts=False)}
    have = parts.chunk_index.get(parts.chunk_index.ids())
    for chunk in sorted(set(wanted) - set(have)):
        out.append(Problem("chunk-vector-missing", chunk, "a chunk without its vector", True))
    for chunk, payload in sorted(have.items()):
        if chunk in wanted:
            if payload.get("document") != wanted[chunk].payload["document"]:
                out.append(Problem("chunk-vector-wrong", chunk, "its vector names another document", True))
        elif payload.get("document") not in incomplete:
            out.append(Problem("chunk-vector-orphan", chunk, "a vector for a chunk that is not loaded", True))
    supported = supported_entities(parts.store)
    entities = {e.value for e in supported}
    held = set(parts.entity_index.ids())
    for entity in sorted(entities - held):
        out.append(Problem("entity-vector-missing", entity, "an entity with support but no vector", True))
    for entity in sorted(held - entities):
        out.append(Problem("entity-vector-orphan", entity, "a vector for an entity without support", True))
    return out


def _upsert(index: VectorIndex, embedder: Embedder, records: list[VectorRecord]) -> None:
    for i in range(0, len(records), _BATCH):
        part = records[i : i + _BATCH]
        index.upsert([r.id for r in part], embedder.embed([r.text for r in part]), [r.payload for r in part])


def repair(parts: Parts, problems: Iterable[Problem]) -> list[str]:
    """Fix the repairable problems; returns one line per fix."""
    by_kind: dict[str, list[str]] = {}
    for p in problems:
        if p.repairable:
            by_kind.setdefault(p.kind, []).append(p.subject)
    done: list[str] = []
    store = parts.store
    subgraphs = [Iri(s) for s in by_kind.get("orphan-subgraph", [])]
    nodes = [Iri(s) for s in by_kind.get("orphan-node", [])]
    if subgraphs or nodes:
        removal = subgraph_removal(store, subgraphs)
        for node in nodes:
            removal += store.match(node, None, None, g=GRAPH_SOURCE)
        store.apply(remove=list(dict.fromkeys(removal)))
        done.append(f"removed {len(subgraphs)} orphan subgraph(s) and {len(nodes)} orphan node(s) "
                    f"({len(removal)} quads)")
    stale = by_kind.get("chunk-vector-orphan", [])
    if stale:
        parts.chunk_index.delete(stale)
        done.append(f"removed {len(stale)} orphan chunk vector(s)")
    fix = set(by_kind.get("chunk-vector-missing", [])) | set(by_kind.get("chunk-vector-wrong", []))
    if fix:
        docs = {r.id for r in parts.librarian.list(kind="document")}
        records = [r for r in chunk_records(parts.librarian, sorted(docs)) if r.id in fix]
        _upsert(parts.chunk_index, parts.embedder, records)
        done.append(f"embedded {len(records)} chunk vector(s)")
    orphans = by_kind.get("entity-vector-orphan", [])
    if orphans:
        parts.entity_index.delete(orphans)
        done.append(f"removed {len(orphans)} entity vector(s) without support")
    missing = set(by_kind.get("entity-vector-missing", []))
    if missing or subgraphs:
        supported = {e: c for e, c in supported_entities(store).items() if e.value in missing}
        _upsert(parts.entity_index, parts.embedder, entity_records(store, supported))
        if subgraphs:  # orphan subgraphs may have been the only support of some entities
            left = set(parts.entity_index.ids()) - {e.value for e in supported_entities(store)}
            parts.entity_index.delete(sorted(left))
        done.append(f"embedded {len(supported)} entity vector(s)")
    store.flush()
    for index in (parts.chunk_index, parts.entity_index):
        index.flush()
    return done


def check_graph(name: str, index: VectorIndex, problems: list[Problem], repair: bool) -> list[str]:
    """Report (and with ``repair`` rebuild) a damaged HNSW graph file of an embedded index; what was done."""
    from provgraph.vectors.usearch_index import UsearchIndex

    if not isinstance(index, UsearchIndex):  # PostgreSQL keeps its HNSW graph with the records
        return []
    why = index.graph_problem()
    if not why:
        return []
    problems.append(Problem("index-graph-damaged", str(index.graph_path), why, True))
    if not repair:
        return []
    aside = index.rebuild_graph()
    return [f"moved the HNSW graph of {name} to {aside}; rebuilt it from the index's records" if aside
            else f"rebuilt the missing HNSW graph of {name} from the index's records"]


def run_check(open_index: Callable[[str], VectorIndex], set_aside: Callable[[str], Path | None],
              open_parts: Callable[[], Parts], vectors_dir: Path, *, fix: bool
              ) -> tuple[list[Problem], list[str], list[Problem]]:
    """Check (and with ``fix`` repair) a collection: the problems found, what was done, what remains.

    An index that cannot be opened is a problem of its own; with ``fix`` it is set aside (kept) and rebuilt.
    The cross-store checks run only once both indexes open, or when repairing.
    """
    problems: list[Problem] = []
    done: list[str] = []
    for name in ("chunks", "entities"):
        try:
            index = open_index(name)
        except IndexError_ as exc:
            problems.append(Problem("index-unreadable", str(vectors_dir / name), str(exc), True))
            if fix:
                aside = set_aside(name)
                done.append(f"moved the unreadable index {name} to {aside}; rebuilding it" if aside
                            else f"recreating the missing index {name}")
            continue
        done += check_graph(name, index, problems, fix)
    found = problems
    if fix or not any(p.kind == "index-unreadable" for p in problems):
        parts = open_parts()
        found = problems + find_problems(parts)
        problems = found
        if fix:
            done += repair(parts, found)
            problems = find_problems(parts)
    return found, done, problems
