"""The ``conversations`` commands: list a collection's conversations, show one as a thread, delete one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import Enum

import typer

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, echo, json_text, open_runtime, settings_from
from provgraph.cli.rag_cmds import citation_lines
from provgraph.conversation.history import conversation_json, delete_conversation, list_conversations
from provgraph.conversation.thread import Cited, Thread, load_thread, thread_json
from provgraph.explain.neutralise import neutralise
from provgraph.explain.render_json import iso_time

__all__ = ["register", "conversations_app", "render_thread"]


class Format(str, Enum):
    text = "text"
    json = "json"


conversations_app = typer.Typer(help="Conversations: the turns asked with --conversation ID, each with its trace.",
                                no_args_is_help=True)


def _line(text: str) -> str:
    return neutralise(" ".join(text.split()))


def _citations(cited: Sequence[Cited]) -> list[str]:
    """A turn's citations as graph-rag prints them (``[n] title, page p, chars a–b``); a source removed since last."""
    lines = citation_lines([replace(c.source, marker=c.marker) for c in cited if c.source is not None])
    return lines + [f"{c.marker} (source no longer stored)" for c in cited if c.source is None]


def render_thread(thread: Thread) -> str:
    """The thread as text: each turn's question (and what it was answered as), answer, citations, trace."""
    lines = [f"Conversation {_line(thread.id)} ({len(thread.turns)} turn(s))"]
    for t in thread.turns:
        turn = t.turn
        lines += ["", f"Turn {turn.number} · {turn.kind} · {iso_time(turn.started)} · trace {turn.session_id}",
                  f"  Q: {_line(turn.asked)}"]
        if turn.query != turn.asked:
            came_from = f" (from turn {turn.number - 1}: {', '.join(map(_line, turn.entities))})" if turn.entities else ""
            lines.append(f"  Answered as: {_line(turn.query)} [{turn.method}{came_from}]")
        lines.append(f"  A: {_line(turn.answer) or '(no answer stored)'}")
        lines += [f"     {_line(c)}" for c in _citations(t.citations)]
    return "\n".join(lines) + "\n"


@conversations_app.command("list")
def conversations_list(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="text or json."),
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Show at most N conversations."),
) -> None:
    """List conversations, newest first: ID, turns, started (UTC), last question.

    Example: provgraph conversations list -C research
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        found = list_conversations(rt.store, limit=limit)
    if fmt is Format.json:
        echo(json_text([conversation_json(c) for c in found], indent=2))
    elif not found:
        echo(f"no conversations in {rt.ref}")
    else:
        for c in found:
            echo(f"{_line(c.id)}\t{c.turns} turn(s)\t{iso_time(c.started)}\t{_line(c.last_question)}")


@conversations_app.command("show")
def conversations_show(
    ctx: typer.Context,
    conversation: str = typer.Argument(..., metavar="ID", help="The conversation ID (from conversations list)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="text or json."),
) -> None:
    """Show a conversation as a thread: each turn's question, what it was answered as, answer, citations, trace.

    Example: provgraph conversations show c1
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        thread = load_thread(rt.store, rt.librarian, conversation)
    if fmt is Format.json:
        echo(json_text(thread_json(thread), indent=2))
    else:
        echo(render_thread(thread), nl=False)


@conversations_app.command("delete")
def conversations_delete(
    ctx: typer.Context,
    conversation: str = typer.Argument(..., metavar="ID", help="The conversation ID."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
) -> None:
    """Delete a conversation and its turns' traces (their answers too).

    Example: provgraph conversations delete c1
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        deleted = delete_conversation(rt.store, rt.librarian, conversation)
    echo(f"deleted conversation {_line(conversation)}: {len(deleted.questions)} trace(s) ({deleted.quads} quads) "
         f"from {rt.ref}")


def register(app: typer.Typer) -> None:
    """Add the ``conversations`` group to the app."""
    app.add_typer(conversations_app, name="conversations")
