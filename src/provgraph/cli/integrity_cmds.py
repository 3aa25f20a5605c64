"""``check``, ``backup`` and ``restore``: is a collection consistent, and keep a copy of it."""

from __future__ import annotations

from pathlib import Path

import typer

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, echo, json_text, not_served, open_runtime, settings_from
from provgraph.integrity.backup import restore_backup
from provgraph.integrity.check import CheckReport
from provgraph.layout import CollectionRef

__all__ = ["register"]


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
    with open_runtime(settings) as rt:
        report = rt.check(repair=fix)
    _report(report, fmt=fmt)
    if not report.consistent:
        raise typer.Exit(1)


def _report(report: CheckReport, *, fmt: str) -> None:
    if fmt == "json":
        echo(json_text(report.to_json()))
        return
    for p in report.found:
        echo(f"problem: {p.kind} {p.subject}: {p.detail}" + (" (repairable)" if p.repairable else ""))
    for line in report.done:
        echo(f"repaired: {line}")
    if report.repaired:
        for p in report.left:
            echo(f"cannot repair: {p.kind} {p.subject}: {p.detail}")
    left = report.left
    verdict = "consistent" if not left else f"{len(left)} problem(s)" + ("" if report.repaired else
                                                                        "; `provgraph check --repair` fixes those marked repairable")
    echo(f"{report.collection}: {report.counts['documents']} document(s), {report.counts['quads']} quads: {verdict}")
    pending = report.counts.get("replica_pending")
    if pending is not None:
        echo("SPARQL replica: not built (the first query builds it, or: provgraph replica rebuild)" if pending < 0 else
             f"SPARQL replica: {pending} write(s) behind")


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
    not_served(ref)
    manifest = restore_backup(file, ref, force=force)
    counts = manifest["counts"]
    echo(f"restored {ref} from {file}: {counts['documents']} document(s), "  # type: ignore[index]
               f"{counts['quads']} quads")  # type: ignore[index]


def register(app: typer.Typer) -> None:
    """Add ``check``, ``backup`` and ``restore``."""
    app.command("check")(check)
    app.command("backup")(backup)
    app.command("restore")(restore)
