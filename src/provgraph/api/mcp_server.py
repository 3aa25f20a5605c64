"""provgraph as an MCP server (``provgraph mcp``): its questions and traces as tools for other clients.

Tools: ``graph_rag``, ``document_rag`` (answers with their citation markers, each citation's
document, page or section and character offsets, and the trace's session ID), ``retrieve`` (the
ranked passages and their facts, no answer), ``traces_show``
(a stored trace, as ``traces show --format json``) and ``documents_list``. Over stdio the server
acts as the local user (``--user``); over streamable HTTP every request needs a provgraph token
(``Authorization: Bearer …``, ``provgraph tokens create USER``) and acts as that token's user, so
one user's token never reaches another's collections. Collections are opened on first use and
stay open for the process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from provgraph import __version__
from provgraph.api.tokens import TokenStore
from provgraph.config import Settings
from provgraph.conversation.turn import ask_in
from provgraph.errors import InputError, NotFound, ProvgraphError
from provgraph.events import Event, Final, Source, to_json
from provgraph.explain.documents import document_rows
from provgraph.explain.render_json import trace_json
from provgraph.explain.traces import load_trace
from provgraph.layout import CollectionRef, check_name
from provgraph.retrieval.graph_rag import GraphRagParams
from provgraph.retrieval.retrieve import Retriever
from provgraph.retrieval.retrieve import to_json as retrieval_json
from provgraph.runtime import Runtime
from provgraph.session import collect_answer

__all__ = ["ProvgraphMcp", "TokenGate"]

USER_KEY = "provgraph.user"


async def _keeping_final(events: AsyncIterator[Event], finals: list[Final]) -> AsyncIterator[Event]:
    """The events unchanged; the final one also put in ``finals`` (its sources still carry their sentences)."""
    async for ev in events:
        if isinstance(ev, Final):
            finals.append(ev)
        yield ev


def _cited_sentences(sources: tuple[Source, ...], answer: str) -> tuple[Source, ...]:
    """Each cited (marker, chunk, sentence) once, by marker: the sources the answer's markers cite (all of
    them when it cites none), without the edge each supports (that is in the trace)."""
    cited = [s for s in sources if s.marker and s.marker in answer] or list(sources)
    unique: dict[tuple[str | None, str, tuple[int, int] | None], Source] = {}
    for s in cited:
        unique.setdefault((s.marker, s.chunk, s.evidence), replace(s, edge=None, subgraph=None))
    return tuple(sorted(unique.values(), key=lambda s: _marker_number(s.marker)))


def _marker_number(marker: str | None) -> int:
    number = marker[1:-1] if marker else ""
    return int(number) if number.isdigit() else 1 << 30


class ProvgraphMcp:
    """The MCP server over one data directory (``settings.home``); ``user`` is stdio's."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: dict[tuple[str, str], Runtime] = {}
        self.server: MCPServer[Any] = MCPServer(
            "provgraph", version=__version__, log_level="ERROR",
            instructions="Explainable answers from provgraph collections: every answer cites its sources "
                         "(document, page or section, character offsets) and names its stored trace.")
        for fn, name, what in (
            (self.graph_rag, "graph_rag", "Answer a question from a collection's knowledge graph, citing sources."),
            (self.document_rag, "document_rag", "Answer a question from a collection's most similar passages, "
                                                "citing sources."),
            (self.retrieve, "retrieve", "The passages that answer a question, ranked, with their sources and facts; "
                                        "no answer."),
            (self.traces_show, "traces_show", "A stored query trace (session ID or step IRI), step by step."),
            (self.documents_list, "documents_list", "The documents loaded in a collection."),
        ):
            self.server.add_tool(fn, name=name, description=what)

    def _user(self, ctx: Context[Any, Any] | None) -> str:
        request = getattr(ctx.request_context, "request", None) if ctx is not None else None
        scope = getattr(request, "scope", None)
        if isinstance(scope, dict) and USER_KEY in scope:
            return str(scope[USER_KEY])
        return self.settings.user

    def runtime(self, ctx: Context[Any, Any] | None, collection: str | None) -> Runtime:
        """The caller's collection, opened once; NotFound when the caller has no such collection."""
        user = self._user(ctx)
        name = check_name("collection", collection or self.settings.collection)
        key = (user, name)
        if key not in self._open:
            ref = CollectionRef(self.settings.home, user, name)
            if not ref.exists():
                raise NotFound(f"collection {user}/{name} does not exist")
            self._open[key] = Runtime(self.settings.model_copy(update={"user": user, "collection": name}),
                                      create=False)
        return self._open[key]

    async def _answer(self, rt: Runtime, question: str, conversation: str | None,
                      ask: Callable[[str], AsyncIterator[Event]]) -> dict[str, Any]:
        finals: list[Final] = []
        answer = await collect_answer(_keeping_final(ask_in(rt.store, rt.llm, rt.settings, conversation,
                                                            question, ask), finals))
        cited = _cited_sentences(finals[-1].sources, answer.text)
        return {"answer": answer.text, "session_id": answer.session_id, "collection": rt.settings.collection,
                "sources": to_json(Final(session_id=answer.session_id, answer="", sources=cited))["sources"],
                "warnings": list(answer.warnings),
                "conversation": answer.conversation, "turn": answer.turn}

    async def graph_rag(self, question: str, collection: str | None = None, conversation: str | None = None,
                        ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Answer from the knowledge graph: the answer with [n] markers, the cited sources, the trace's session ID."""
        with _one_line():
            rt = self.runtime(ctx, collection)
            engine = rt.graph_rag(GraphRagParams.from_settings(rt.settings))
            return await self._answer(rt, question, conversation, engine.ask)

    async def document_rag(self, question: str, collection: str | None = None, conversation: str | None = None,
                           ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Answer from the most similar passages: the answer with [n] markers, the cited sources, the session ID."""
        with _one_line():
            rt = self.runtime(ctx, collection)
            return await self._answer(rt, question, conversation, rt.document_rag().ask)

    def retrieve(self, question: str, k: int = 5, mode: str = "graph", collection: str | None = None,
                 ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """Ranked passages (document, page or section, offsets, text, scores) and the facts between them."""
        with _one_line():
            if not 1 <= k <= 100:
                raise InputError(f"k must be between 1 and 100, got {k}")
            rt = self.runtime(ctx, collection)
            return retrieval_json(Retriever.of(rt).retrieve(question, k=k, mode=mode))

    def traces_show(self, trace_id: str, collection: str | None = None,
                    ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """A stored trace: its question, steps, selected edges or chunks, answer and citations."""
        with _one_line():
            rt = self.runtime(ctx, collection)
            return trace_json(load_trace(rt.store, trace_id, librarian=rt.librarian))

    def documents_list(self, collection: str | None = None, ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """The collection's documents: id, title, type, size, parts, when loaded."""
        with _one_line():
            rt = self.runtime(ctx, collection)
            return {"collection": rt.settings.collection, "documents": document_rows(rt.librarian)}

    def close(self) -> None:
        """Close every collection opened."""
        for rt in self._open.values():
            rt.close()
        self._open.clear()


@contextmanager
def _one_line() -> Iterator[None]:
    """A provgraph error reaches the MCP client as the tool's error: ``NotFound: …`` (one line)."""
    try:
        yield
    except ProvgraphError as exc:
        raise ToolError(f"{type(exc).__name__}: {' '.join(str(exc).split())}") from None


class TokenGate:
    """ASGI middleware for the HTTP transport: a request without a known token is 401; others carry their user."""

    def __init__(self, app: Any, tokens: TokenStore) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        try:
            user = self.tokens.user_of(token) if token else None
        except ProvgraphError:
            user = None
        if user is None:
            body = b'{"error": {"type": "Unauthorized", "message": "missing or unknown token (Authorization: Bearer TOKEN)"}}'
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app({**scope, USER_KEY: user}, receive, send)
