"""Request and response bodies of the HTTP API (pydantic), with the examples OpenAPI shows.

Event objects are exactly what ``--format json`` prints (``provgraph.events.to_json``); their
models here describe them for OpenAPI and allow the fields each message type adds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ErrorDetail", "ErrorResponse", "CollectionOut", "CollectionCreate", "CollectionCreated",
    "GraphRagRequest", "DocumentRagRequest", "AgentRequest", "EventOut", "RagResponse",
    "SparqlRequest", "ExtractRequest", "RemovedOut", "DeletedOut", "RestoredOut", "ImportedOut", "JobOut", "TokenUser",
]

NAME = r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}$"
LlmChoice = Literal["auto", "none", "openai", "local"]


class ErrorDetail(BaseModel):
    type: str = Field(examples=["NotFound"])
    message: str = Field(examples=["collection alice/demo does not exist (create it with: provgraph collections create)"])


class ErrorResponse(BaseModel):
    """Every error: the CLI's message and the error class."""

    error: ErrorDetail


class CollectionOut(BaseModel):
    user: str = Field(examples=["alice"])
    collection: str = Field(examples=["demo"])


class CollectionCreate(BaseModel):
    name: str = Field(pattern=NAME, examples=["demo"])


class CollectionCreated(CollectionOut):
    created: bool = Field(description="false when it already existed")


class _Ask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    collection: str = Field("default", pattern=NAME, examples=["demo"])
    question: str = Field(min_length=1, max_length=10_000, examples=["Who discovered polonium?"])
    conversation: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$", examples=["c1"],
                                     description="ask as the next turn of this conversation (started when new)")


class GraphRagRequest(_Ask):
    """``graph-rag``'s options; limits default to the server's settings."""

    entity_limit: int | None = Field(None, ge=1, le=10_000)
    triple_limit: int | None = Field(None, ge=1, le=10_000)
    max_subgraph_size: int | None = Field(None, ge=1, le=100_000)
    max_path_length: int | None = Field(None, ge=1, le=10)
    edge_score_limit: int | None = Field(None, ge=1, le=10_000)
    edge_limit: int | None = Field(None, ge=1, le=10_000)
    grounding: bool = False
    llm: LlmChoice | None = Field(None, examples=["none"])


class DocumentRagRequest(_Ask):
    doc_limit: int | None = Field(None, ge=1, le=1_000)
    llm: LlmChoice | None = None


class RetrieveRequest(_Ask):
    """``retrieve``'s options: how many passages and the ranking mode."""

    k: int = Field(5, ge=1, le=1_000)
    mode: Literal["graph", "hybrid", "lexical", "dense"] = "graph"


class GlobalRagRequest(_Ask):
    """``global-rag``'s options (map-reduce over the community reports)."""

    level: int = Field(0, ge=0, le=10, description="community level searched (0: the top)")
    max_reports: int = Field(5, ge=1, le=50, description="reports the answer draws on at most")
    map_limit: int = Field(8, ge=1, le=50, description="reports the LLM scores at most (one call each)")
    llm: LlmChoice | None = Field(None, examples=["none"])


class AgentRequest(_Ask):
    max_iterations: int | None = Field(None, ge=1, le=100)
    group: list[str] | None = Field(None, max_length=50, examples=[["knowledge"]],
                                    description="tool groups the agent may use (default: default; * for all)")
    state: str | None = Field(None, max_length=100, examples=["undefined"],
                              description="the agent's state: only tools applicable in it")


class EventOut(BaseModel):
    """One stream message (SPEC §6): ``message_type`` is explain, chunk, thought, action, observation,
    final or error; the other fields are those ``--format json`` prints for that type."""

    model_config = ConfigDict(extra="allow")
    message_type: str = Field(examples=["explain"])
    end_of_session: bool = False


class RagResponse(BaseModel):
    """A whole query at once: the final (or error) message and the explain steps in order."""

    final: EventOut | None = Field(None, description="the final message; null when the query failed")
    error: ErrorDetail | None = None
    steps: list[EventOut] = Field(default_factory=list, description="explain messages, in order")


class SparqlRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=100_000,
                       examples=["SELECT ?s ?o WHERE { GRAPH <urn:graph:source> { ?s tg:contains ?o } } LIMIT 5"])


class RemovedOut(BaseModel):
    removed: str
    quads: int


class DeletedOut(BaseModel):
    """Traces deleted: their question IRIs (sub-traces included) and the quads removed."""

    deleted: list[str]
    quads: int
    collection: str


class RestoredOut(BaseModel):
    """A restored collection and the counts its backup's manifest records."""

    collection: str
    documents: int
    quads: int


class ProblemOut(BaseModel):
    """One broken invariant (docs/integrity.md)."""

    kind: str
    subject: str
    detail: str
    repairable: bool


class CheckOut(BaseModel):
    """What ``provgraph check --format json`` prints."""

    collection: str
    consistent: bool
    documents: int
    quads: int
    problems: list[ProblemOut]
    repaired: list[str]
    remaining: list[ProblemOut]


class ImportedOut(BaseModel):
    imported: int
    collection: str


class ExtractRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunks: list[dict[str, Any]] = Field(max_length=100_000, description="ChunkInput objects in the typed form",
                                         examples=[[{"$type": "ChunkInput", "fields": {
                                             "iri": {"$type": "Iri", "fields": {"value": "urn:chunk:a.txt:0"}},
                                             "text": "Polonium was discovered in 1898.",
                                             "document": {"$type": "Iri", "fields": {"value": "urn:doc:a.txt"}}}}]])
    extractors: str | None = Field(None, max_length=200, examples=["cooccurrence"])


class JobOut(BaseModel):
    """A background load: progress counters, then each document's outcome."""

    model_config = ConfigDict(extra="allow")
    id: str
    status: Literal["queued", "running", "done", "failed"]
    collection: str
    files: int
    files_done: int
    chunks: int
    chunks_done: int
    result: dict[str, Any] | None = None
    errors: list[str] = Field(default_factory=list)


class TokenUser(BaseModel):
    user: str
