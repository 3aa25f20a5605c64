"""The ``traces`` commands: list the stored query traces of a collection, show one in full, delete."""

from __future__ import annotations

from enum import Enum

import typer

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, echo, json_text, open_runtime, settings_from
from provgraph.explain.render_json import summary_json, trace_json
from provgraph.explain.render_text import render_list, render_trace
from provgraph.errors import InputError
from provgraph.explain.lifecycle import delete_traces, parse_moment, traces_before
from provgraph.explain.traces import list_traces, load_trace

__all__ = ["register", "traces_app"]


class ListFormat(str, Enum):
    table = "table"
    json = "json"


class ShowFormat(str, Enum):
    text = "text"
    json = "json"


traces_app = typer.Typer(help="List and show query traces (GraphRAG, Document RAG, agent).", no_args_is_help=True)


@traces_app.command("list")
def traces_list(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: ListFormat = typer.Option(ListFormat.table, "--format", "-f", help="table or json."),
    include_all: bool = typer.Option(False, "--all", "-a", help="Include sub-traces (questions an agent asked)."),
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Show at most N traces."),
) -> None:
    """List traces, newest first: Session ID, Type (GraphRAG/DocRAG/Agent), Question, Time (UTC).

    Example: provgraph traces list -C research --limit 10
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        found = list_traces(rt.store, include_sub_traces=include_all, limit=limit)
    if fmt is ListFormat.json:
        echo(json_text([summary_json(s) for s in found], indent=2))
    elif not found:
        echo(f"no traces in {rt.ref}")
    else:
        echo(render_list(found, show_parent=include_all), nl=False)


@traces_app.command("show")
def traces_show(
    ctx: typer.Context,
    trace_id: str = typer.Argument(..., metavar="ID", help="Session ID, question IRI or the IRI of any step of the trace."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    show_provenance: bool = typer.Option(
        False, "--show-provenance", "-p",
        help="Trace every selected edge to its chunk → page → document, with offsets and a text excerpt.",
    ),
    fmt: ShowFormat = typer.Option(ShowFormat.text, "--format", "-f", help="text or json."),
) -> None:
    """Show a trace step by step (its type is detected); agent sub-traces are nested.

    Example: provgraph traces show 6f1c2a9e-5d1b-4c8e-9a51-7072766772a1 --show-provenance
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        trace = load_trace(rt.store, trace_id, librarian=rt.librarian, provenance=show_provenance)
    if fmt is ShowFormat.json:
        echo(json_text(trace_json(trace), indent=2))
    else:
        echo(render_trace(trace), nl=False)


@traces_app.command("delete")
def traces_delete(
    ctx: typer.Context,
    trace_ids: list[str] = typer.Argument(None, metavar="[ID]...", help="Session IDs or question IRIs."),
    before: str = typer.Option(None, "--before", help="Also delete every trace started before this date/time (UTC)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
) -> None:
    """Delete traces (an agent's sub-traces go with it) and their stored answers.

    Example: provgraph traces delete --before 2026-03-01 -C research
    """
    if not trace_ids and before is None:
        raise InputError("give trace IDs to delete, or --before DATE")
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        ids = list(trace_ids or [])
        if before is not None:
            ids += traces_before(rt.store, parse_moment(before, "--before"))
        deleted = delete_traces(rt.store, rt.librarian, ids)
    echo(f"deleted {len(deleted.questions)} trace(s) ({deleted.quads} quads) from {rt.ref}")


def register(app: typer.Typer) -> None:
    """Add the ``traces`` group to the app."""
    app.add_typer(traces_app, name="traces")
