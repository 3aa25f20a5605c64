"""``/api/v1/socket``: one WebSocket, many requests at once, told apart by ``id``.

    → {"id": "1", "service": "graph-rag", "request": {"collection": "demo", "question": "…"}}
    ← {"id": "1", "response": {"message_type": "explain", …}, "complete": false}
    ← {"id": "1", "response": {"message_type": "final", …}, "complete": true}

Query services stream their messages; read services answer once. A bad request gets one error
message (``{"message_type": "error", "error": {…}}``) with ``complete: true``. Each request takes one
of its token's slots while it runs, as an HTTP request does (api/budget.py): past them it gets a
``TooManyRequests`` error message at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from pydantic import ValidationError

from provgraph.api.errors import one_line
from provgraph.api.routes_rag import RAG_SERVICES, query_messages, translated
from provgraph.api.trustgraph_wire import check_wire, from_trustgraph_request
from provgraph.api.state import ServerState
from provgraph.errors import InputError, ProvgraphError
from provgraph.explain.documents import document_detail, document_rows
from provgraph.explain.render_json import summary_json, trace_json
from provgraph.explain.traces import list_traces, load_trace
from provgraph.rdf.ids import document_iri
from provgraph.runtime import Runtime, collections

__all__ = ["install", "READ_SERVICES"]

READ_SERVICES: dict[str, Callable[[Runtime, dict[str, Any]], Any]] = {
    "documents": lambda rt, r: document_rows(rt.librarian),
    "document": lambda rt, r: document_detail(rt.librarian, document_iri(str(r.get("document", ""))), str(rt.ref)),
    "traces": lambda rt, r: [summary_json(s) for s in list_traces(rt.store, include_sub_traces=bool(r.get("all")))],
    "trace": lambda rt, r: trace_json(load_trace(rt.store, str(r.get("id", "")), librarian=rt.librarian,
                                                 provenance=bool(r.get("provenance")))),
    "check": lambda rt, r: rt.check().to_json(),
}


def _error(exc: BaseException, type_: str | None = None) -> dict[str, Any]:
    return {"message_type": "error", "error": {"type": type_ or type(exc).__name__, "message": one_line(exc)},
            "end_of_session": True}


class _Session:
    def __init__(self, socket: WebSocket, state: ServerState, user: str, budget_key: str) -> None:
        self.socket = socket
        self.state = state
        self.user = user
        self.budget_key = budget_key
        self.send_lock = asyncio.Lock()
        self.wire = "provgraph"  # or "trustgraph" (?wire=trustgraph): TrustGraph's message shapes

    async def send(self, request_id: Any, response: Any, complete: bool) -> None:
        envelope: dict[str, Any] = {"id": request_id, "response": response, "complete": complete}
        if self.wire == "trustgraph" and isinstance(response, dict) and "error" in response:
            envelope = {"id": request_id, "error": response["error"], "complete": True}  # where its client looks
        async with self.send_lock:
            await self.socket.send_json(envelope)

    def settings(self, request: dict[str, Any], **overrides: Any) -> Any:
        collection = request.get("collection")
        if collection is not None and not isinstance(collection, str):
            raise InputError("collection must be a string")
        return self.state.settings_for(self.user, collection, **overrides)

    async def handle(self, message: Any) -> None:
        request_id = message.get("id") if isinstance(message, dict) else None
        budget = self.state.budget
        if not budget.take(self.budget_key):
            await self.send(request_id, _error(InputError(budget.refusal()), "TooManyRequests"), True)
            return
        try:
            await self._handle(request_id, message)
        finally:
            budget.give(self.budget_key)

    async def _handle(self, request_id: Any, message: Any) -> None:
        try:
            if not isinstance(message, dict) or not isinstance(message.get("request", {}), dict):
                raise InputError('send {"id", "service", "request": {...}}')
            service, request = message.get("service"), message.get("request", {})
            if service in RAG_SERVICES:
                model, plan = RAG_SERVICES[service]
                if self.wire == "trustgraph":
                    request = from_trustgraph_request(request)
                overrides, start = plan(model.model_validate(request))
                previous: dict[str, Any] | None = None
                messages = query_messages(self.state, self.settings(request, **overrides), start)
                if self.wire == "trustgraph":
                    messages = translated(messages, agent=service == "agent")
                async for m in messages:
                    if previous is not None:
                        await self.send(request_id, previous, False)
                    previous = m
                await self.send(request_id, previous, True)
            elif service == "collections":
                await self.send(request_id, [{"user": c.user, "collection": c.collection}
                                             for c in collections(self.state.settings, self.user)], True)
            elif service in READ_SERVICES:
                def read() -> Any:
                    with self.state.pool.use(self.settings(request)) as rt:
                        return READ_SERVICES[service](rt, request)

                await self.send(request_id, await run_in_threadpool(read), True)
            else:
                known = ", ".join([*RAG_SERVICES, "collections", *READ_SERVICES])
                raise InputError(f"unknown service {service!r}: use one of {known}")
        except ValidationError as exc:
            await self.send(request_id, _error(InputError(f"invalid request: {exc.errors()[0]['msg']}")), True)
        except ProvgraphError as exc:
            await self.send(request_id, _error(exc), True)


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the WebSocket route."""

    @app.websocket(f"{prefix}/socket")
    async def socket(ws: WebSocket) -> None:
        await ws.accept()
        session = _Session(ws, state, ws.scope["provgraph.user"], ws.scope["provgraph.budget"])
        try:
            session.wire = check_wire(ws.query_params.get("wire"))
        except ProvgraphError as exc:
            await session.send(None, _error(exc), True)
            await ws.close()
            return
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    message = await ws.receive_json()
                except ValueError:
                    await session.send(None, _error(InputError("not JSON")), True)
                    continue
                task = asyncio.create_task(session.handle(message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except WebSocketDisconnect:
            for task in tasks:
                task.cancel()
