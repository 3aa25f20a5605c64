"""``documents list|show|remove`` and ``provenance``: what is loaded and where each fact came from."""

from __future__ import annotations

from datetime import datetime, timezone

import typer
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, cell, echo, json_text, settings_from, stdout
from provgraph.errors import NotFound
from provgraph.explain.provenance_tree import ChunkNode, DocumentTree, document_tree
from provgraph.ingest.removal import remove_document
from provgraph.rdf.ids import document_iri
from provgraph.rdf.vocab import TG
from provgraph.runtime import Runtime
from provgraph.store.retraction import retraction_for

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
    with Runtime(settings, create=False) as rt:
        docs = rt.librarian.list(kind="document")
        counts = {d.id: len(rt.librarian.children(d.id)) for d in docs}
    rows = [{"id": d.id, "title": d.title, "mime_type": d.mime_type, "size": d.size, "parts": counts[d.id],
             "loaded": d.created.isoformat(timespec="seconds")} for d in docs]
    if fmt == "json":
        echo(json_text(rows))
        return
    table = Table("Document", "Title", "Type", "Bytes", "Parts", "Loaded (UTC)")
    for r in rows:
        table.add_row(*(cell(v) for v in (r["id"], r["title"] or "", r["mime_type"], f"{r['size']:,}",
                                                 r["parts"], r["loaded"])))  # user text is data, not markup
    stdout.print(table)


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
    with Runtime(settings, create=False) as rt:
        iri = document_iri(doc)
        if not rt.librarian.exists(iri.value):
            raise NotFound(f"document {iri.value} is not in collection {rt.ref}")
        rec = rt.librarian.get(iri.value)
        parts = rt.librarian.children(iri.value)
    data = {"id": rec.id, "title": rec.title, "mime_type": rec.mime_type, "size": rec.size,
            "content_hash": rec.content_hash, "loaded": rec.created.isoformat(timespec="seconds"),
            "metadata": rec.metadata, "tags": list(rec.tags),
            "parts": [{"id": p.id, "kind": p.kind, "number": p.number, "title": p.title, "offset": p.offset,
                       "length": p.length} for p in parts]}
    if fmt == "json":
        echo(json_text(data))
        return
    for key in ("id", "title", "mime_type", "size", "content_hash", "loaded"):
        echo(f"{key:>12}: {data[key]}")
    for key, value in rec.metadata.items():
        echo(f"{key:>12}: {value}")
    for p in parts:
        end = (p.offset or 0) + (p.length or 0)
        echo(f"  {p.kind} {p.number}: {p.title or ''} (chars {p.offset}–{end})")


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
    with Runtime(settings, create=False) as rt:
        iri = document_iri(doc)
        if not rt.librarian.exists(iri.value) and not rt.store.count(iri, None, None):  # store-only: leftovers
            raise NotFound(f"document {iri.value} is not in collection {rt.ref}")
        retraction = retraction_for(rt.store, iri, at=datetime.now(timezone.utc), reason="removed")
        removed = remove_document(rt.store, rt.librarian, iri, chunk_index=rt.chunk_index,
                                  entity_index=rt.entity_index, also_add=retraction)
    echo(f"removed {iri.value} ({removed} quads)")
    if retraction:
        affected = sum(1 for q in retraction if q.p == TG.affectedTrace)
        echo(f"{affected} trace(s) that used it are now marked stale (provgraph traces show ID)")


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
    with Runtime(settings, create=False) as rt:
        tree = document_tree(rt.store, document_iri(doc))
    if fmt == "json":
        def chunk_json(c: ChunkNode) -> dict[str, object]:
            return {"chunk": c.iri.value, "index": c.index, "offset": c.offset, "length": c.length,
                    "extractors": c.components, "edges": [list(e) for e in c.edges]}

        echo(json_text({
            "document": tree.iri.value, "title": tree.title, "mime_type": tree.mime_type, "pages": tree.page_count,
            "parts": [{"part": p.iri.value, "kind": p.kind, "label": p.label, "number": p.number, "offset": p.offset,
                       "length": p.length, "chunks": [chunk_json(c) for c in p.chunks]} for p in tree.parts],
            "chunks": [chunk_json(c) for c in tree.chunks],
        }))
        return
    stdout.print(render_tree(tree))


def register(app: typer.Typer) -> None:
    """Add ``documents`` and ``provenance``."""
    app.add_typer(documents_app, name="documents")
    app.command("provenance")(provenance)
