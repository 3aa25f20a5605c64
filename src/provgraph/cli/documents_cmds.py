"""``documents list|show|remove`` and ``provenance``: what is loaded and where each fact came from."""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, cell, echo, json_text, open_runtime, settings_from, stdout
from provgraph.cli.render import document_id
from provgraph.explain.documents import document_detail, document_rows, provenance_json
from provgraph.explain.provenance_tree import ChunkNode, DocumentTree, document_tree
from provgraph.rdf.ids import document_iri

__all__ = ["register", "render_tree"]

documents_app = typer.Typer(help="List, show and remove loaded documents.", no_args_is_help=True)


@documents_app.command("list")
def documents_list(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
) -> None:
    """List the collection's documents. Example: provgraph documents list -C demo"""
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        rows = document_rows(rt.librarian)
    if fmt == "json":
        echo(json_text(rows))
        return
    cells = [(document_id(r["id"]), r["title"] or "", _kind(r["mime_type"]), f"{r['size']:,}", r["parts"],
              _minute(r["loaded"])) for r in rows]
    width = stdout.width
    table, needed = _listing(cells, width)
    stdout.width = max(width, needed)  # a terminal too narrow for the whole ids wraps the lines instead
    try:
        stdout.print(table)
    finally:
        stdout.width = width


_HEADS = ("Document", "Title", "Type", "Bytes", "Parts", "Loaded (UTC)")
_GAP = 2


def _listing(rows: Sequence[tuple[object, ...]], width: int) -> tuple[Table, int]:
    """One line per document: every column whole (the id is what `documents show` and `remove` take) but the
    title, which gets the width left and ends in … where it does not fit (the whole one: `documents show`);
    and the width the table needs."""
    table = Table(box=None, pad_edge=False, padding=(0, _GAP, 0, 0), header_style="bold")
    widths = [max([len(h), *(len(str(r[i])) for r in rows)]) for i, h in enumerate(_HEADS)]
    rest = width - sum(w for i, w in enumerate(widths) if i != 1) - _GAP * (len(_HEADS) - 1)
    for i, name in enumerate(_HEADS):
        if i == 1:
            table.add_column(name, no_wrap=True, overflow="ellipsis", max_width=max(rest, len(name)))
        else:
            table.add_column(name, no_wrap=True)
    for r in rows:
        table.add_row(*(cell(v) for v in r))  # data, not markup
    return table, width - rest + max(rest, len(_HEADS[1]))


def _kind(mime_type: object) -> str:
    """A media type as a short kind: ``text/plain`` → text, ``application/pdf`` → pdf, ``text/markdown`` → markdown."""
    sub = str(mime_type or "").split(";")[0].split("/")[-1].strip()
    return "text" if sub == "plain" else sub


def _minute(stamp: object) -> str:
    """An ISO time in UTC to the minute, as the table shows it ("2026-12-02 02:59")."""
    text = str(stamp or "")
    return text[:16].replace("T", " ") if len(text) >= 16 and text[10:11] == "T" else text


@documents_app.command("show")
def documents_show(
    ctx: typer.Context,
    doc: str = typer.Argument(..., help="Document ID or IRI."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Show a document's metadata and parts. Example: provgraph documents show report.pdf -C demo"""
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        data = document_detail(rt.librarian, document_iri(doc), str(rt.ref))
    if fmt == "json":
        echo(json_text(data))
        return
    for key in ("id", "title", "mime_type", "size", "content_hash", "loaded"):
        echo(f"{key:>12}: {data[key]}")
    for key, value in data["metadata"].items():
        echo(f"{key:>12}: {value}")
    for p in data["parts"]:
        end = (p["offset"] or 0) + (p["length"] or 0)
        echo(f"  {p['kind']} {p['number']}: {p['title'] or ''} (chars {p['offset']}–{end})")


@documents_app.command("remove")
def documents_remove(
    ctx: typer.Context,
    doc: str = typer.Argument(..., help="Document ID or IRI."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
) -> None:
    """Remove a document, its parts, its provenance and the facts only it supported.

    Example: provgraph documents remove report.pdf -C demo
    """
    settings = settings_from(ctx, collection=collection, user=user)
    iri = document_iri(doc)
    with open_runtime(settings) as rt:
        removed = rt.remove_document(iri)
    echo(f"removed {iri.value} ({removed.quads} quads)")
    if removed.stale_traces:
        echo(f"{removed.stale_traces} trace(s) that used it are now marked stale (provgraph traces show ID)")


def _chunk_branch(parent: Tree, chunk: ChunkNode) -> None:
    end = chunk.offset + chunk.length
    branch = parent.add(Text(f"Chunk {chunk.index} ") + cell(f"(chars {chunk.offset}–{end}, {chunk.iri.value})", "dim"))
    for s, p, o in chunk.edges:
        branch.add(cell(f"({s}, {p}, {o})"), highlight=False)


def render_tree(tree: DocumentTree) -> Tree:
    """The SPEC §8 provenance tree as a Rich tree."""
    pages = f", {tree.page_count} pages" if tree.page_count else ""
    root = Tree(cell(tree.title, "bold") + cell(f" ({tree.iri.value}, {tree.mime_type}{pages})", "dim"))
    for part in tree.parts:
        end = part.offset + part.length
        name = f"Page {part.number}" if part.kind == "page" else f"Section: {' '.join(part.label.split())}"
        branch = root.add(cell(f"{name} ") + Text(f"(chars {part.offset}–{end})", "dim"))
        for chunk in part.chunks:
            _chunk_branch(branch, chunk)
    for chunk in tree.chunks:
        _chunk_branch(root, chunk)
    return root


def provenance(
    ctx: typer.Context,
    doc: str = typer.Argument(..., help="Document ID or IRI."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Print the document → page → chunk → extracted edges tree.

    Example: provgraph provenance curie.pdf -C demo
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        tree = document_tree(rt.store, document_iri(doc))
    if fmt == "json":
        echo(json_text(provenance_json(tree)))
        return
    stdout.print(render_tree(tree))


def register(app: typer.Typer) -> None:
    """Add ``documents`` and ``provenance``."""
    app.add_typer(documents_app, name="documents")
    app.command("provenance")(provenance)
