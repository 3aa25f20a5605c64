"""``check``, ``backup`` and ``restore``: is a collection consistent, and keep a copy of it."""

from __future__ import annotations

from pathlib import Path

import typer

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, echo, json_text, open_runtime, settings_from
from provgraph.errors import IndexError_
from provgraph.integrity.backup import restore_backup
from provgraph.integrity.check import Parts, Problem, find_problems, repair
from provgraph.layout import CollectionRef

__all__ = ["register"]

_INDEXES = {"chunks": "chunk_index", "entities": "entity_index"}


def check(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fix: bool = typer.Option(False, "--repair", help="Fix what can be derived (orphans, vectors); say what cannot."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """Verify every cross-store invariant (documents, librarian, store, vectors); exit 0 only when consistent.

    Example: provgraph check -C demo --repair
    """
    settings = settings_from(ctx, collection=collection, user=user)
    problems: list[Problem] = []
    done: list[str] = []
    with open_runtime(settings) as rt:
        rt.store, rt.librarian  # noqa: B018 - a store or librarian that cannot be opened is reported as it is
        for name, attr in _INDEXES.items():
            try:
                index = getattr(rt, attr)
            except IndexError_ as exc:
                problems.append(Problem("index-unreadable", str(rt.ref.vectors_dir / name), str(exc), True))
                if fix:
                    aside = rt.set_aside_index(name)
                    done.append(f"moved the unreadable index {name} to {aside}; rebuilding it" if aside
                                else f"recreating the missing index {name}")
                continue
            why = index.graph_problem()
            if why:
                problems.append(Problem("index-graph-damaged", str(index.graph_path), why, True))
                if fix:
                    aside = index.rebuild_graph()
                    done.append(f"moved the HNSW graph of {name} to {aside}; rebuilt it from the index's records"
                                if aside else f"rebuilt the missing HNSW graph of {name} from the index's records")
        if any(p.kind == "index-unreadable" for p in problems) and not fix:
            found = problems
        else:
            parts = Parts(rt.store, rt.librarian, rt.chunk_index, rt.entity_index, rt.embedder)
            found = problems + find_problems(parts)
            if fix:
                done += repair(parts, found)
                problems = find_problems(parts)
            else:
                problems = found
        counts = {"documents": len(rt.librarian.list(kind="document")), "quads": len(rt.store)}
    _report(rt.ref, found, done, problems, counts, repaired=fix, fmt=fmt)
    if problems:
        raise typer.Exit(1)


def _report(ref: CollectionRef, found: list[Problem], done: list[str], left: list[Problem],
            counts: dict[str, int], *, repaired: bool, fmt: str) -> None:
    if fmt == "json":
        echo(json_text({"collection": str(ref), "consistent": not left, **counts,
                               "problems": [p.to_json() for p in found], "repaired": done,
                               "remaining": [p.to_json() for p in left]}))
        return
    for p in found:
        echo(f"problem: {p.kind} {p.subject}: {p.detail}" + (" (repairable)" if p.repairable else ""))
    for line in done:
        echo(f"repaired: {line}")
    if repaired:
        for p in left:
            echo(f"cannot repair: {p.kind} {p.subject}: {p.detail}")
    verdict = "consistent" if not left else f"{len(left)} problem(s)" + ("" if repaired else
                                                                        "; `provgraph check --repair` fixes those marked repairable")
    echo(f"{ref}: {counts['documents']} document(s), {counts['quads']} quads: {verdict}")


def backup(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Archive to write (a .tar file)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    wait: float = typer.Option(0.0, "--wait", min=0.0, help="Seconds to wait for another process that has the "
                               "collection open (a running `load`); by default refuse at once."),
) -> None:
    """Write a consistent, complete, versioned archive of a collection (it may be in use meanwhile).

    Example: provgraph backup -C demo demo-backup.tar
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        manifest = rt.backup(file, wait=wait)
    counts = manifest["counts"]
    echo(f"wrote {file}: {counts['documents']} document(s), {counts['quads']} quads, "  # type: ignore[index]
               f"{counts['chunk_vectors']} chunk and {counts['entity_vectors']} entity vector(s)")  # type: ignore[index]


def restore(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Archive written by `provgraph backup`."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    force: bool = typer.Option(False, "--force", help="Replace a collection that is not empty."),
) -> None:
    """Restore a collection from a backup archive (refuses to overwrite a non-empty collection).

    Example: provgraph restore demo-backup.tar -C demo
    """
    settings = settings_from(ctx, collection=collection, user=user)
    ref = CollectionRef(settings.home, settings.user, settings.collection)
    manifest = restore_backup(file, ref, force=force)
    counts = manifest["counts"]
    echo(f"restored {ref} from {file}: {counts['documents']} document(s), "  # type: ignore[index]
               f"{counts['quads']} quads")  # type: ignore[index]


def register(app: typer.Typer) -> None:
    """Add ``check``, ``backup`` and ``restore``."""
    app.command("check")(check)
    app.command("backup")(backup)
    app.command("restore")(restore)
