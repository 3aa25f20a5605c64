"""With backends.py, the only place that picks backends: settings in, a collection's open parts out.

Parts are opened lazily (a ``sparql`` call never loads the embedder) and closed together;
a runtime serves one ``(user, collection)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from provgraph.config import Settings
from provgraph.errors import ConfigError, NotFound
from provgraph.layout import CollectionRef, note_part, set_aside_index, verify_part
from provgraph.backends import (collection_exists, collections, create_collection, documents_store,  # noqa: F401
                                 drop_collection, job_queue, job_table, postgres_url)
from provgraph.store.collections import create_collection as create_folder
from provgraph.store.collections import open_store

if TYPE_CHECKING:  # imported where built: `provgraph sparql` loads neither numpy, the models nor the librarian
    from provgraph.communities.global_rag import GlobalParams, GlobalRag
    from provgraph.events import Event
    from provgraph.extract.base import Extractor
    from provgraph.extract.extraction_tools import ExtractionTools
    from provgraph.extract.pipeline import ExtractionPipeline
    from provgraph.integrity.check import CheckReport
    from provgraph.ingest.pipeline import DocumentLoader
    from provgraph.librarian.lexical import Fts5Index
    from provgraph.librarian.base import Librarian
    from provgraph.models.base import ChatModel, Embedder
    from provgraph.rdf.terms import Iri
    from provgraph.retrieval.document_rag import DocumentRag
    from provgraph.retrieval.graph_rag import GraphRag, GraphRagParams
    from provgraph.retrieval.hybrid import HybridRetriever
    from provgraph.retrieval.read_cache import ReadCache
    from provgraph.store.base import QuadStore
    from provgraph.store.oxigraph import OxigraphStore
    from provgraph.store.replica import OxigraphReplica
    from provgraph.vectors.base import VectorIndex

__all__ = ["Runtime", "Removal", "collection_exists", "collections", "drop_collection", "job_queue", "job_table"]


def build_chat_model(settings: Settings) -> ChatModel | None:
    """The settings' LLM (the models are imported on first use)."""
    from provgraph.models import factory

    return factory.build_chat_model(settings)


def build_embedder(settings: Settings) -> Embedder:
    """The settings' embedder (the models are imported on first use)."""
    from provgraph.models import factory

    return factory.build_embedder(settings)


class Removal(NamedTuple):
    """What removing a document did: quads removed, and traces marked stale by its retraction record."""

    quads: int
    stale_traces: int


class Runtime:
    """A collection's store, librarian, vector indexes and models, built from settings."""

    def __init__(self, settings: Settings, *, create: bool = True, llm: ChatModel | None | str = "settings",
                 embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.ref = CollectionRef(settings.home, settings.user, settings.collection)
        self._create = create
        self._opened: list[Any] = []
        self._llm_override = llm
        self._embedder_override = embedder
        if create:
            create_folder(self.ref)
        else:
            collection_exists(settings, self.ref)  # a PostgreSQL collection another process created: its local folder

    @cached_property
    def store(self) -> QuadStore:
        """The collection's quad store: PostgreSQL when ``PROVGRAPH_STORE_URL`` names one, else embedded."""
        url = postgres_url(self.settings)
        if url is None:
            store: QuadStore = open_store(self.ref, create=self._create)
        else:
            from provgraph.store.postgres import PostgresStore

            if not self._create and not self.ref.exists():
                raise NotFound(f"collection {self.ref} does not exist (create it with: provgraph collections create)")
            store = PostgresStore(url, self.ref.user, self.ref.collection, create=self._create)
        self._opened.append(store)
        return store

    def _pg_schema(self) -> str:
        """The PostgreSQL schema of this collection (its quad store opened, and so created, first)."""
        from provgraph.store.postgres import PostgresStore

        store = self.store
        assert isinstance(store, PostgresStore)
        return store.schema

    @property
    def sparql_store(self) -> OxigraphStore | OxigraphReplica:
        """What answers SPARQL (``sparql``, the API's route): the embedded store, or a PostgreSQL collection's replica."""
        from provgraph.store.oxigraph import OxigraphStore

        return self.store if isinstance(self.store, OxigraphStore) else self.replica()

    def replica(self) -> OxigraphReplica:
        """The Oxigraph server replica of this PostgreSQL collection (ConfigError without ``PROVGRAPH_REPLICA_URL``)."""
        from provgraph.store.replica import replica_of
        return replica_of(self.store, self.settings.replica_url)

    @cached_property
    def librarian(self) -> Librarian:
        """The collection's document/page/chunk/answer texts (in PostgreSQL when the quads are)."""
        from provgraph.librarian.sqlite import SqliteLibrarian

        if not self.ref.exists():
            open_store(self.ref, create=self._create)  # raises NotFound when it must exist
        url = postgres_url(self.settings)
        if url is not None:  # beside the quads, in the collection's schema
            from provgraph.librarian.postgres import PgLibrarian

            schema = self._pg_schema()
            pg = PgLibrarian(url, schema, name=str(self.ref), documents=documents_store(self.settings, schema))
            self._opened.append(pg)
            return pg
        if (self.settings.blob_url or "").strip():
            raise ConfigError("PROVGRAPH_BLOB_URL needs PROVGRAPH_STORE_URL (postgresql://…): the embedded store keeps "
                              "documents inside it")
        existed = verify_part(self.ref, "librarian")  # one that vanished is an error, never recreated over
        lib = SqliteLibrarian(self.ref.librarian_dir)
        self._opened.append(lib)
        if not existed:
            note_part(self.ref, "librarian")
        return lib

    @cached_property
    def lexical(self) -> Fts5Index:
        """The lexical (BM25, SQLite FTS5) index of chunk texts and entity labels, beside the librarian."""
        from provgraph.librarian.lexical import Fts5Index

        self.librarian  # noqa: B018 - opened (or found missing) first
        index = Fts5Index(self.ref.librarian_dir)  # derived, so local also when the librarian is in PostgreSQL
        self._opened.append(index)
        return index

    def retriever(self) -> HybridRetriever:
        """Hybrid (lexical + dense) retrieval of chunks and entities (one per runtime: it remembers what the
        lexical index last caught up with)."""
        return self._hybrid

    @cached_property
    def _hybrid(self) -> HybridRetriever:
        from provgraph.retrieval.hybrid import HybridRetriever
        from provgraph.retrieval.passage_cache import GRAPH_FILE

        return HybridRetriever(self.lexical, self.librarian, self.store, chunk_index=self.chunk_index,
                               entity_index=self.entity_index, graph_file=self.ref.librarian_dir / GRAPH_FILE)

    @cached_property
    def llm(self) -> ChatModel | None:
        """The LLM in effect, or None in the no-LLM mode."""
        if self._llm_override != "settings":
            return self._llm_override  # type: ignore[return-value]
        return build_chat_model(self.settings)  # async: callers close it inside their event loop

    @cached_property
    def embedder(self) -> Embedder:
        """The embedder (default: the shipped model2vec model)."""
        return self._embedder_override or build_embedder(self.settings)

    def _index(self, name: str) -> VectorIndex:
        url = postgres_url(self.settings)
        if url is not None:  # beside the quads, in the collection's schema
            from provgraph.vectors.pgvector_index import PgVectorIndex

            pg_index = PgVectorIndex(url, self._pg_schema(), name, model=self.embedder.name,
                                     dimension=self.embedder.dimension)
            self._opened.append(pg_index)
            return pg_index
        from provgraph.vectors.usearch_index import open_index

        existed = verify_part(self.ref, f"vectors/{name}")
        index = open_index(self.ref.vectors_dir, name, model=self.embedder.name, dimension=self.embedder.dimension)
        self._opened.append(index)
        if not existed:
            note_part(self.ref, f"vectors/{name}")
        return index

    def backup(self, file: Path, *, wait: float = 0.0) -> dict[str, object]:
        """Write a backup archive of this collection to ``file``; returns its manifest (docs/integrity.md).

        Consistent while the collection is in use: this runtime's store is copied by RocksDB's own
        checkpoint. When another process has the store open, waits up to ``wait`` seconds for it,
        then raises StoreUnavailable (one line saying what to do).
        """
        from provgraph.errors import StoreUnavailable
        from provgraph.integrity.backup import make_backup, settings_that_matter

        if postgres_url(self.settings) is not None:
            raise ConfigError(f"collection {self.ref}: a backup archive holds an embedded store; with the quads in "
                              "PostgreSQL (PROVGRAPH_STORE_URL) use provgraph export (and pg_dump) instead")
        try:  # embedded (checked above); None when another process has it: make_backup waits for it, or refuses
            store: OxigraphStore | None = self.sparql_store  # type: ignore[assignment]
        except StoreUnavailable:
            store = None
        return make_backup(self.ref, Path(file), settings=settings_that_matter(self.settings), store=store, wait=wait)

    def check(self, *, repair: bool = False) -> CheckReport:
        """Verify every cross-store invariant (docs/integrity.md); ``repair`` fixes what can be derived."""
        from provgraph.integrity.check import CheckReport, Parts, run_check

        self.store, self.librarian  # noqa: B018 - a store or librarian that cannot be opened is reported as it is
        found, done, problems = run_check(
            lambda name: self.chunk_index if name == "chunks" else self.entity_index,
            lambda name: set_aside_index(self.ref, name),
            lambda: Parts(self.store, self.librarian, self.chunk_index, self.entity_index, self.embedder),
            self.ref.vectors_dir, fix=repair)
        counts = {"documents": len(self.librarian.list(kind="document")), "quads": len(self.store)}
        if postgres_url(self.settings) is not None and (self.settings.replica_url or "").strip():
            counts["replica_pending"] = self.replica().lag().behind  # not a problem: a query catches up first
        return CheckReport(str(self.ref), found, done, problems, counts, repair)

    @cached_property
    def entity_index(self) -> VectorIndex:
        """Entity vectors (payload: entity, label, definition, chunks)."""
        return self._index("entities")

    @cached_property
    def chunk_index(self) -> VectorIndex:
        """Chunk vectors (payload: chunk, document)."""
        return self._index("chunks")

    def extractors(self, names: str | None = None, *, ontology: Path | None = None) -> list[Extractor]:
        """The named extractors (comma-separated; default: the settings'); see :func:`choose_extractors`."""
        from provgraph.extract.choose import choose_extractors

        return choose_extractors(names, default=self.settings.extractors, llm=self.llm,
                                 entity_base=self.settings.entity_base, ontology=ontology, tools=self._extraction_tools)

    def _extraction_tools(self) -> ExtractionTools:
        """The agent extractor's tools over this collection (known entities, a chunk's neighbours)."""
        from provgraph.extract.extraction_tools import ExtractionTools

        return ExtractionTools(self.store, self.librarian, entity_base=self.settings.entity_base,
                               embedder=self.embedder, entity_index=self.entity_index)

    def loader(self, *, max_bytes: int | None = None) -> DocumentLoader:
        """A document loader with the settings' chunking and file-size limit."""
        from provgraph.ingest.pipeline import DocumentLoader

        limit = max_bytes if max_bytes is not None else int(self.settings.max_file_mb * 2**20)
        return DocumentLoader(self.store, self.librarian, chunk_size=self.settings.chunk_size,
                              chunk_overlap=self.settings.chunk_overlap, max_bytes=limit,
                              chunk_index=self.chunk_index, entity_index=self.entity_index)

    def commit_documents(self, documents: Sequence[Iri]) -> None:
        """Make the documents' quads and vectors durable, then write their completion records (last)."""
        if not documents:
            return
        self.store.flush()
        for index in (self.chunk_index, self.entity_index):
            index.flush()
        self.librarian.mark_complete([d.value for d in documents])
        from provgraph.communities.stale import stale_after_load  # reports of communities the new facts touch
        if marks := stale_after_load(self.store, documents):
            self.store.add(marks)

    def extraction(self, extractors: list[Extractor] | None = None, *,
                   concurrency: int | None = None) -> ExtractionPipeline:
        """The extraction pipeline writing to this collection's store and vector indexes."""
        from provgraph.extract.pipeline import ExtractionPipeline

        return ExtractionPipeline(self.store, extractors if extractors is not None else self.extractors(),
                                  embedder=self.embedder, entity_index=self.entity_index, chunk_index=self.chunk_index,
                                  concurrency=concurrency or self.settings.extract_concurrency)

    def graph_rag(self, params: GraphRagParams | None = None) -> GraphRag:
        """The GraphRAG engine (limits from the settings unless given)."""
        from provgraph.retrieval.graph_rag import GraphRag, GraphRagParams

        return GraphRag(self.store, self.librarian, self.embedder, self.entity_index, self.llm,
                        params or GraphRagParams.from_settings(self.settings), trace=self.settings.traces,
                        retriever=self.retriever(), reads=self._graph_reads)

    @cached_property
    def _graph_reads(self) -> ReadCache:
        """What GraphRAG questions read again, shared by every engine of this runtime."""
        from provgraph.retrieval.read_cache import ReadCache

        return ReadCache(self.store)

    def global_rag(self, params: GlobalParams | None = None) -> GlobalRag:
        """The global (community map-reduce) search engine; the reports it reads are shared by this runtime's."""
        from provgraph.communities.global_rag import GlobalParams, GlobalRag

        return GlobalRag(self.store, self.librarian, self.embedder, self.llm, params or GlobalParams(
            question_deadline=self.settings.question_deadline), trace=self.settings.traces)

    def document_rag(self) -> DocumentRag:
        """The Document RAG engine."""
        from provgraph.retrieval.document_rag import DocumentRag

        return DocumentRag(self.store, self.librarian, self.embedder, self.chunk_index, self.llm,
                           doc_limit=self.settings.doc_limit, trace=self.settings.traces,
                           retriever=self.retriever(), question_deadline=self.settings.question_deadline)

    def ask_agent(self, question: str, *, groups: Sequence[str] | None = None, state: str | None = None
                  ) -> AsyncIterator[Event]:
        """The ReAct agent's events on ``question``: the built-in and MCP tools of ``groups`` in ``state``
        (agent/groups.py). Raises :class:`ConfigError` at once when no LLM is configured."""
        from provgraph.agent.react import NO_LLM_MESSAGE
        from provgraph.agent.request import AgentLimits, agent_events
        from provgraph.agent.tools import TextCompletionTool, Tool, document_query, knowledge_query

        llm = self.llm
        if llm is None:
            raise ConfigError(NO_LLM_MESSAGE)
        builtin: list[Tool] = [knowledge_query(self.graph_rag()), document_query(self.document_rag()),
                               TextCompletionTool(llm)]
        s = self.settings
        limits = AgentLimits(max_iterations=s.max_iterations, deadline=s.agent_deadline, collection=s.collection,
                             trace=s.traces, overrides=s.agent_tools, mcp_servers=s.mcp_servers)
        return agent_events(question, store=self.store, librarian=self.librarian, llm=llm, builtin=builtin,
                            limits=limits, groups=groups, state=state)

    def remove_document(self, document: Iri) -> Removal:
        """Remove a document, its parts, provenance, chunk vectors and the facts only it supported.

        Returns the quads removed and the traces it made stale; :class:`NotFound` if the document is
        not loaded.
        """
        from provgraph.ingest.removal import remove_document
        from provgraph.rdf.vocab import TG
        from provgraph.store.retraction import retraction_for

        if not self.librarian.exists(document.value) and not self.store.count(document, None, None):
            raise NotFound(f"document {document.value} is not in collection {self.ref}")  # store-only: leftovers
        # traces that used it are marked stale by a retraction record, written in the removal's transaction
        retraction = retraction_for(self.store, document, at=datetime.now(timezone.utc), reason="removed")
        removed = remove_document(self.store, self.librarian, document, chunk_index=self.chunk_index,
                                  entity_index=self.entity_index, also_add=retraction)
        return Removal(removed, sum(1 for q in retraction if q.p == TG.affectedTrace))

    def sharing(self, settings: Settings) -> Runtime:
        """A runtime for the same collection with other settings (LLM, limits) over this one's open parts.

        The store, librarian, indexes and embedder already opened here are reused, not reopened (a
        store opens read-write once per process); closing the new runtime leaves them open.
        """
        if (settings.home, settings.user, settings.collection) != (self.ref.home, self.ref.user, self.ref.collection):
            raise ConfigError(f"cannot share {self.ref} with collection {settings.user}/{settings.collection}")
        other = Runtime(settings, create=False, llm=self._llm_override, embedder=self._embedder_override)
        for name in ("store", "librarian", "entity_index", "chunk_index", "embedder", "lexical", "_hybrid"):
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]
        return other

    def close(self) -> None:
        """Close everything this runtime opened (newest first)."""
        while self._opened:
            self._opened.pop().close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

