"""Conversations: the list, one as a thread, deletion (``conversations list|show|delete --format json``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from provgraph.api.routes_data import ERRORS
from provgraph.api.schemas import DeletedOut
from provgraph.api.state import request_settings, state_of
from provgraph.conversation.history import conversation_json, delete_conversation, list_conversations
from provgraph.conversation.thread import load_thread, thread_json
from provgraph.layout import check_name

__all__ = ["router"]

router = APIRouter(responses=ERRORS, tags=["conversations"])


@router.get("/collections/{collection}/conversations")
def conversations(request: Request, collection: str, limit: int | None = Query(None, ge=1, le=100_000)) -> list[Any]:
    """Conversations, newest first: id, turns, started, last question."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        found = list_conversations(rt.store, limit=limit)
    return [conversation_json(c)
            for c in found]


@router.get("/collections/{collection}/conversations/{conversation}")
def conversation(request: Request, collection: str, conversation: str) -> dict[str, Any]:
    """One conversation as a thread: each turn's question, rewrite, answer, citations and trace id."""
    with state_of(request).pool.use(request_settings(request, check_name("collection", collection))) as rt:
        return thread_json(load_thread(rt.store, rt.librarian, conversation))


@router.delete("/collections/{collection}/conversations/{conversation}", response_model=DeletedOut)
def delete(request: Request, collection: str, conversation: str) -> dict[str, Any]:
    """Delete a conversation and its turns' traces, under the write lock."""
    settings = request_settings(request, check_name("collection", collection))
    with state_of(request).pool.use(settings, write=True) as rt:
        deleted = delete_conversation(rt.store, rt.librarian, conversation)
    return {"deleted": [q.value for q in deleted.questions], "quads": deleted.quads, "collection": str(rt.ref)}
