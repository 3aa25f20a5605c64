"""OpenAI-compatible chat on ``provgraph serve``: ``GET /v1/models`` and ``POST /v1/chat/completions``.

A chat front end that speaks OpenAI's protocol uses a collection as a model named
``provgraph:COLLECTION:MODE`` (MODE ``graph-rag``, ``document-rag`` or ``agent``), with its
provgraph token as the API key. The last message is the question; the user/assistant pairs before
it are the conversation, with which the question is rewritten (docs/trace-format.md,
"Conversations"); an extra ``conversation`` field continues a stored conversation instead. The
answer text carries the citation markers; the sources, the trace's session ID and where to read
it come in the extra ``provgraph`` field of the completion (non-streaming) or of the last chunk
(streaming). Errors have provgraph's one shape, whose ``error.message`` OpenAI clients read.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from provgraph.api.errors import ApiError
from provgraph.api.routes_rag import Starter, message_status, query_messages
from provgraph.api.state import request_settings, state_of, user_of
from provgraph.conversation.rewrite import Said
from provgraph.conversation.turn import ask_in, ask_with_history
from provgraph.errors import InputError
from provgraph.events import Event
from provgraph.explain.neutralise import escape_json
from provgraph.layout import check_name
from provgraph.retrieval.graph_rag import GraphRagParams
from provgraph.runtime import Runtime, collections

__all__ = ["router", "parse_model", "MODES"]

router = APIRouter(prefix="/v1", tags=["openai"])
MODES = ("graph-rag", "document-rag", "agent")
_CID = r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$"


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str = Field(max_length=40)
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """OpenAI's chat request; fields provgraph does not use (temperature, max_tokens, …) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(max_length=200, examples=["provgraph:demo:graph-rag"])
    messages: list[ChatMessage] = Field(min_length=1, max_length=1000)
    stream: bool = False
    conversation: str | None = Field(None, pattern=_CID, description="continue this stored conversation instead")


def parse_model(name: str) -> tuple[str, str]:
    """``provgraph:COLLECTION:MODE`` → (collection, mode); a one-line InputError otherwise."""
    parts = name.split(":")
    if len(parts) != 3 or parts[0] != "provgraph" or parts[2] not in MODES:
        raise InputError(f"bad model {name!r}: use provgraph:COLLECTION:MODE, MODE one of {', '.join(MODES)} "
                         "(GET /v1/models lists them)")
    return check_name("collection", parts[1]), parts[2]


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, list):
        return " ".join(str(p.get("text", "")) for p in message.content if p.get("type") == "text")
    return message.content or ""


def _dialogue(messages: list[ChatMessage]) -> tuple[list[Said], str]:
    """The question/answer pairs before the last message, and the last message (a user's question)."""
    said = [m for m in messages if m.role in ("user", "assistant")]
    if not said or said[-1].role != "user" or not _text(said[-1]).strip():
        raise InputError("the last message must be the user's question")
    history: list[Said] = []
    asked: str | None = None
    for m in said[:-1]:
        if m.role == "user":
            asked = _text(m)
        elif asked is not None:
            history.append(Said(asked, _text(m)))
            asked = None
    return history, _text(said[-1])


def _starter(mode: str, body: ChatRequest, history: list[Said], question: str) -> Starter:
    def start(rt: Runtime) -> AsyncIterator[Event]:
        ask: Callable[[str], AsyncIterator[Event]]
        if mode == "graph-rag":
            ask = rt.graph_rag(GraphRagParams.from_settings(rt.settings)).ask
        elif mode == "document-rag":
            ask = rt.document_rag().ask
        else:
            ask = rt.ask_agent
        if body.conversation is not None:
            return ask_in(rt.store, rt.llm, rt.settings, body.conversation, question, ask)
        return ask_with_history(rt.store, rt.llm, rt.settings, history, question, ask)

    return start


def _extra(final: dict[str, Any], collection: str, mode: str) -> dict[str, Any]:
    sid = final["session_id"]
    return {"session_id": sid, "collection": collection, "mode": mode,
            "trace": f"/api/v1/collections/{collection}/traces/{sid}", "sources": final["sources"],
            "warnings": final["warnings"], "conversation": final.get("conversation")}


def _usage(final: dict[str, Any]) -> dict[str, int]:
    u = final.get("usage") or {}
    prompt, completion = int(u.get("input_tokens", 0)), int(u.get("output_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _frame(payload: dict[str, Any] | str) -> bytes:
    text = payload if isinstance(payload, str) else escape_json(json.dumps(payload, ensure_ascii=False))
    return b"data: " + text.encode("utf-8") + b"\n\n"


async def _stream(messages: AsyncIterator[dict[str, Any]], head: dict[str, Any], collection: str,
                  mode: str) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _frame({**head, "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    streamed = False
    async for m in messages:
        kind = m["message_type"]
        if kind == "chunk" and mode != "agent" and m["response"]:  # an agent's tools stream their own answers
            streamed = True
            yield chunk({"content": m["response"]})
        elif kind == "final":
            if not streamed:
                yield chunk({"content": m["answer"]})
            yield chunk({}, "stop", usage=_usage(m), provgraph=_extra(m, collection, mode))
        elif kind == "error":
            yield _frame({"error": {**m["error"], "code": message_status(m["error"])}})
    yield _frame("[DONE]")


@router.get("/models")
def models(request: Request) -> dict[str, Any]:
    """One model per collection of the caller and mode: ``provgraph:COLLECTION:MODE``."""
    found = collections(state_of(request).settings, user_of(request))
    return {"object": "list", "data": [{"id": f"provgraph:{c.collection}:{mode}", "object": "model", "created": 0,
                                        "owned_by": "provgraph"} for c in found for mode in MODES]}


@router.post("/chat/completions")
async def chat_completions(request: Request, body: ChatRequest) -> Any:
    """Answer the last message from the model's collection and mode (streamed with ``stream: true``)."""
    collection, mode = parse_model(body.model)
    history, question = _dialogue(body.messages)
    settings = request_settings(request, collection)
    messages = query_messages(state_of(request), settings, _starter(mode, body, history, question))
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": body.model}
    if body.stream:
        return StreamingResponse(_stream(messages, head, collection, mode), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    events = [m async for m in messages]
    last: dict[str, Any] = events[-1] if events else {
        "message_type": "error", "error": {"type": "ProvgraphError", "message": "the query ended early"}}
    if last["message_type"] == "error":
        raise ApiError(message_status(last["error"]), last["error"]["type"], last["error"]["message"])
    return JSONResponse({**head, "object": "chat.completion",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": last["answer"]},
                                      "finish_reason": "stop"}],
                         "usage": _usage(last), "provgraph": _extra(last, collection, mode)})


def install(app: Any, state: Any, prefix: str) -> None:
    """Add the OpenAI-compatible routes at ``/v1`` (beside the API's ``prefix``, not under it)."""
    app.include_router(router)
