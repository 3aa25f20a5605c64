"""``graph-rag``, ``document-rag`` and ``agent``: one JSON answer, or an SSE stream of the same messages.

With ``Accept: text/event-stream`` every message goes out as ``data: {json}`` the moment its step is
written, in the order ``--format json`` prints them; otherwise the response collects them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse

from provgraph.api.errors import error_body, one_line, status_for
from provgraph.api.routes_data import ERRORS
from provgraph.api.schemas import (
    AgentRequest, DocumentRagRequest, GlobalRagRequest, GraphRagRequest, RagResponse, RetrieveRequest,
)
from provgraph.api.state import request_settings, state_of
from provgraph.api.trustgraph_wire import check_wire, to_trustgraph
from provgraph.cli.common import timeout_message
from provgraph.config import Settings
from provgraph.conversation.turn import ask_in
from provgraph.errors import ProvgraphError
from provgraph.events import Event, to_json
from provgraph.explain.neutralise import escape_json
from provgraph.retrieval.graph_rag import GraphRagParams
from provgraph.retrieval.retrieve import Retriever
from provgraph.retrieval.retrieve import to_json as retrieval_json
from provgraph.runtime import Runtime

__all__ = ["router", "query_messages", "RAG_SERVICES", "message_status", "sse", "translated"]

router = APIRouter(responses=ERRORS, tags=["query"])
_STREAM: dict[int | str, dict[str, Any]] = {200: {"model": RagResponse, "content": {"text/event-stream": {"schema": {"type": "string"}}},
                 "description": "one JSON object, or with Accept: text/event-stream one `data:` line per message"}}

Starter = Callable[[Runtime], AsyncIterator[Event]]


def _graph_rag(body: GraphRagRequest) -> tuple[dict[str, Any], Starter]:
    limits = body.model_dump(include={"entity_limit", "triple_limit", "max_subgraph_size", "max_path_length",
                                      "edge_score_limit", "edge_limit"})

    def start(rt: Runtime) -> AsyncIterator[Event]:
        rag = rt.graph_rag(GraphRagParams.from_settings(rt.settings, grounding=body.grounding))
        return _turn(rt, body, rag.ask)

    return {**limits, "llm": body.llm}, start


def _turn(rt: Runtime, body: Any, ask: Callable[[str], AsyncIterator[Event]]) -> AsyncIterator[Event]:
    return ask_in(rt.store, rt.llm, rt.settings, body.conversation, body.question, ask)


def _document_rag(body: DocumentRagRequest) -> tuple[dict[str, Any], Starter]:
    return {"doc_limit": body.doc_limit, "llm": body.llm}, lambda rt: _turn(rt, body, rt.document_rag().ask)


def _global_rag(body: GlobalRagRequest) -> tuple[dict[str, Any], Starter]:
    def start(rt: Runtime) -> AsyncIterator[Event]:
        from provgraph.communities.global_rag import GlobalParams

        params = GlobalParams(level=body.level, max_reports=body.max_reports, map_limit=body.map_limit,
                              question_deadline=rt.settings.question_deadline)
        return _turn(rt, body, rt.global_rag(params).ask)

    return {"llm": body.llm}, start


def _agent(body: AgentRequest) -> tuple[dict[str, Any], Starter]:
    def start(rt: Runtime) -> AsyncIterator[Event]:
        return _turn(rt, body, lambda q: rt.ask_agent(q, groups=body.group, state=body.state))

    return {"max_iterations": body.max_iterations}, start


RAG_SERVICES: dict[str, tuple[type[Any], Callable[[Any], tuple[dict[str, Any], Starter]]]] = {
    "graph-rag": (GraphRagRequest, _graph_rag),
    "document-rag": (DocumentRagRequest, _document_rag),
    "agent": (AgentRequest, _agent),
    "global-rag": (GlobalRagRequest, _global_rag),
}


def _error(type_: str, message: str) -> dict[str, Any]:
    return {"message_type": "error", "error": {"type": type_, "message": message}, "session_id": "",
            "end_of_session": True}


async def query_messages(request_state: Any, settings: Settings, start: Starter,
                         engine: list[float] | None = None) -> AsyncIterator[dict[str, Any]]:
    """The JSON messages of one query, as they happen; a failure before the first step is one error message.

    Runs on the collection the pool holds open; gives up with an error message at the server's timeout.
    ``engine`` (one number) adds up the seconds spent in the query's own steps, for ``Server-Timing``.
    """
    deadline = time.monotonic() + request_state.limits.timeout_s
    try:
        with request_state.pool.use(settings) as rt:
            try:
                events = start(rt)
                while True:
                    left = deadline - time.monotonic()
                    try:
                        if left <= 0:  # steps that never wait are checked between steps
                            raise asyncio.TimeoutError
                        began = time.perf_counter()
                        try:
                            ev = await asyncio.wait_for(anext(events), timeout=left)
                        finally:
                            if engine is not None:
                                engine[0] += time.perf_counter() - began
                    except StopAsyncIteration:
                        break
                    except asyncio.TimeoutError:
                        await events.aclose()  # type: ignore[attr-defined]
                        yield _error("Timeout", timeout_message(request_state.limits.timeout_s))
                        break
                    yield to_json(ev)
            finally:
                if "llm" in rt.__dict__ and rt.llm is not None:
                    await rt.llm.aclose()
    except ProvgraphError as exc:
        yield _error(type(exc).__name__, one_line(exc))


def message_status(detail: dict[str, str]) -> int:
    """The HTTP status of a stream's error message (``{"type", "message"}``)."""
    from provgraph import errors

    cls = getattr(errors, detail["type"], None)
    if detail["type"] == "Timeout":
        return 408
    return status_for(cls(detail["message"])) if isinstance(cls, type) and issubclass(cls, ProvgraphError) else 500


def sse(messages: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    async def frames() -> AsyncIterator[bytes]:
        async for message in messages:
            yield b"data: " + escape_json(json.dumps(message, ensure_ascii=False)).encode("utf-8") + b"\n\n"

    return frames()


async def translated(messages: AsyncIterator[dict[str, Any]], *, agent: bool) -> AsyncIterator[dict[str, Any]]:
    async for m in messages:
        yield to_trustgraph(m, agent=agent)


async def _answer(request: Request, service: str, body: Any) -> Any:
    wire = check_wire(request.query_params.get("wire"))
    overrides, start = RAG_SERVICES[service][1](body)
    settings = request_settings(request, body.collection, **overrides)
    state = state_of(request)
    engine = [0.0]
    messages = query_messages(state, settings, start, engine)
    if wire == "trustgraph":
        messages = translated(messages, agent=service == "agent")
    if "text/event-stream" in request.headers.get("accept", ""):
        return StreamingResponse(sse(messages), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    events = [m async for m in messages]
    timing = {"Server-Timing": f"query;dur={engine[0] * 1000:.3f};desc=\"the query's own steps\""}
    last = events[-1] if events else _error("ProvgraphError", "the query ended without a final message")
    steps = [m for m in events if m["message_type"] == "explain"]
    if last["message_type"] == "error":
        detail = last["error"]
        return JSONResponse({**error_body(detail["type"], detail["message"]), "steps": steps},
                            status_code=message_status(detail), headers=timing)
    return JSONResponse({"final": last, "steps": steps}, headers=timing)  # the wire form: no second validation


@router.post("/graph-rag", responses=_STREAM, response_model=RagResponse)
async def graph_rag(request: Request, body: GraphRagRequest) -> Any:
    """Answer from the knowledge graph (``graph-rag --format json``)."""
    return await _answer(request, "graph-rag", body)


@router.post("/document-rag", responses=_STREAM, response_model=RagResponse)
async def document_rag(request: Request, body: DocumentRagRequest) -> Any:
    """Answer from the most similar chunks (``document-rag --format json``)."""
    return await _answer(request, "document-rag", body)


@router.post("/global-rag", responses=_STREAM, response_model=RagResponse)
async def global_rag(request: Request, body: GlobalRagRequest) -> Any:
    """Answer a question about the whole corpus from the community reports (``global-rag --format json``)."""
    return await _answer(request, "global-rag", body)


@router.post("/agent", responses=_STREAM, response_model=RagResponse)
async def agent(request: Request, body: AgentRequest) -> Any:
    """The ReAct agent (``agent --format json``); needs an LLM."""
    return await _answer(request, "agent", body)


@router.post("/retrieve")
def retrieve(request: Request, body: RetrieveRequest) -> dict[str, Any]:
    """The ranked passages with scores, provenance and their facts, no answer (``retrieve --format json``)."""
    with state_of(request).pool.use(request_settings(request, body.collection, llm="none")) as rt:
        return retrieval_json(Retriever.of(rt).retrieve(body.question, k=body.k, mode=body.mode))
