"""Commands over the quad store: ``sparql``, ``export``, ``import``, ``collections``."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, cell, drop, echo, json_text, listing_user, open_runtime, query_caps, query_timeout, settings_from, stdout
from provgraph.explain.neutralise import escape_json
from provgraph.cli.render import short
from provgraph.errors import InputError, QueryError
from provgraph.layout import CollectionRef
from provgraph.rdf.convert import from_ox
from provgraph.rdf.seed_syntax import as_triple_terms
from provgraph.backends import collections as collections_of
from provgraph.store.sparql_run import QueryResults, QueryTimeout, ResultLimits, Truncated, run_query

__all__ = ["register"]


class QueryFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class DataFormat(str, Enum):
    nquads = "nquads"
    trig = "trig"


def _guess_format(path: Path) -> DataFormat:
    suffix = path.suffix.lower()
    if suffix in (".nq", ".nquads"):
        return DataFormat.nquads
    if suffix == ".trig":
        return DataFormat.trig
    raise InputError(f"cannot tell the format of {path}: use --format nquads|trig (or a .nq/.trig name)")


def sparql(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="SPARQL 1.1 query (RDF 1.2 triple terms as <<( s p o )>>); '-' reads stdin."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: QueryFormat = typer.Option(QueryFormat.table, "--format", "-f", help="table, json (SPARQL JSON) or csv."),
    timeout: float | None = typer.Option(None, "--timeout", min=0.001,
                                         help="Stop the query after this many seconds (run for a server: its limit)."),
) -> None:
    """Run a SPARQL query on a collection (prefixes prov: rdf: rdfs: xsd: dc: skos: owl: tg: are predefined).

    Results print as they are evaluated; past the timeout (or a server's caps) they stop with a notice.
    Example: provgraph sparql 'SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains ?t } }' --format json
    """
    text = sys.stdin.read() if query == "-" else query
    settings = settings_from(ctx, collection=collection, user=user)
    hosted_timeout = query_timeout()
    rows, size = query_caps()
    limits = ResultLimits(rows, size, hosted_timeout if hosted_timeout is not None else timeout)
    with open_runtime(settings) as rt:
        try:
            results = _seed_syntax_query(rt, text, "rows" if fmt is QueryFormat.table else fmt.value, limits)
        except QueryTimeout as exc:
            raise QueryError(f"collection {rt.ref}: {exc}") from None
        try:
            if results.kind == "boolean":
                echo("true" if next(results) else "false")
            elif results.kind == "rows":
                _print_table(results)
            else:
                for item in results:
                    if isinstance(item, Truncated):
                        echo(f"warning: {item.message}", err=True)
                    else:
                        echo(escape_json(item.decode("utf-8")), nl=False)
                if results.kind == "json":
                    echo("")
        except QueryTimeout as exc:
            raise QueryError(f"collection {rt.ref}: {exc}") from None
        finally:
            results.cancel()


if TYPE_CHECKING:
    from provgraph.runtime import Runtime


def _seed_syntax_query(rt: "Runtime", text: str, fmt: str, limits: ResultLimits) -> QueryResults:
    """Start the query, reading seed-style ``<< s p o >>`` as triple terms when that parses (with a notice)."""

    def start(query: str) -> QueryResults:
        results = run_query(lambda: nullcontext(rt.sparql_store), query, fmt, limits)
        next(results)  # its kind; a syntax error comes out here
        return results

    rewritten, count = as_triple_terms(text)
    if count:
        try:
            results = start(rewritten)
        except QueryError:
            pass  # e.g. a reifier in subject position: the query means what it says
        else:
            echo(f"note: read {count} '<< s p o >>' as RDF 1.2 triple term(s) '<<( s p o )>>' "
                       "(write <<( … )>> to say so; docs/trace-format.md)", err=True)
            return results
    return start(text)


def _print_table(results: QueryResults) -> None:
    names: list[str] | None = None
    table: Table | None = None
    count = 0
    for item in results:
        if isinstance(item, Truncated):
            echo(f"warning: {item.message}", err=True)
        elif names is None:
            names = list(item)
            table = Table(*names, show_lines=False)
        else:
            assert table is not None
            count += 1
            table.add_row(*(cell("" if v is None else short(from_ox(v))) for v in item))
    stdout.print(table)
    stdout.print(f"{count} row(s)")


def export(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: DataFormat = typer.Option(DataFormat.nquads, "--format", "-f", help="nquads or trig."),
    output: Path = typer.Option(None, "-o", "--output", help="File to write (default: stdout)."),
) -> None:
    """Export the whole collection, every named graph, triple terms included.

    Example: provgraph export -C demo --format trig -o demo.trig
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        data = rt.store.export_bytes(fmt.value)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        try:
            output.write_bytes(data)
        except OSError as exc:
            raise InputError(f"{output}: cannot write the export ({exc.strerror or exc})") from exc
        echo(f"wrote {output}", err=True)


def import_(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="N-Quads (.nq) or TriG (.trig) file."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: DataFormat = typer.Option(None, "--format", "-f", help="nquads or trig (default: from the file name)."),
) -> None:
    """Import graph data (quads only, not documents or vectors); a syntax error imports nothing.

    Example: provgraph import backup.nq -C restored
    """
    from provgraph.ingest.decoders import require_regular_file  # the decoders: not for sparql

    require_regular_file(file, verb="imported")
    chosen = fmt or _guess_format(file)
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings, create=True) as rt:
        try:
            n = rt.store.import_data(file, chosen.value)
        except QueryError as exc:
            raise QueryError(f"{file}: {exc}") from exc
    echo(f"imported {n} quads into {rt.ref} (graph data only: documents, texts and vectors are not in an "
         "export; use `provgraph backup` and `provgraph restore` to copy a whole collection)")


collections_app = typer.Typer(help="List, create and drop collections.", no_args_is_help=True)


@collections_app.command("list")
def collections_list(
    ctx: typer.Context,
    user: str = typer.Option(None, "-U", "--user", help="Only this user's collections."),
    fmt: QueryFormat = typer.Option(QueryFormat.table, "--format", "-f", help="table, json or csv."),
) -> None:
    """List collections. Example: provgraph collections list --format json"""
    settings = settings_from(ctx)
    found = collections_of(settings, listing_user(user))
    if fmt is QueryFormat.json:
        echo(json_text([{"user": c.user, "collection": c.collection} for c in found]))
        return
    if fmt is QueryFormat.csv:
        import csv
        import io

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows([("user", "collection"), *((c.user, c.collection) for c in found)])
        echo(out.getvalue(), nl=False)
        return
    table = Table("User", "Collection")
    for c in found:
        table.add_row(c.user, c.collection)
    stdout.print(table)


@collections_app.command("create")
def collections_create(ctx: typer.Context, name: str, user: str = USER_OPTION) -> None:
    """Create a collection. Example: provgraph collections create research -U alice"""
    settings = settings_from(ctx, user=user)
    ref = CollectionRef(settings.home, settings.user, name)
    from provgraph.runtime import create_collection

    created = create_collection(settings, ref)
    echo(f"created {ref}" if created else f"{ref} already exists")


@collections_app.command("drop")
def collections_drop(
    ctx: typer.Context,
    name: str,
    user: str = USER_OPTION,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a collection and all its data. Example: provgraph collections drop scratch --yes"""
    settings = settings_from(ctx, user=user)
    ref = CollectionRef(settings.home, settings.user, name)
    if not yes:
        typer.confirm(f"Drop {ref} and everything in it?", abort=True)
    drop(ref, settings)
    echo(f"dropped {ref}")


replica_app = typer.Typer(help="The SPARQL replica (an Oxigraph server) of a PostgreSQL collection.",
                          no_args_is_help=True)


@replica_app.command("rebuild")
def replica_rebuild(ctx: typer.Context, collection: str = COLLECTION_OPTION, user: str = USER_OPTION) -> None:
    """Load the whole collection into its emptied replica (PROVGRAPH_REPLICA_URL), then follow the outbox.

    Example: provgraph replica rebuild -C big
    """
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        replica = rt.replica()
        loaded = replica.rebuild()
    echo(f"rebuilt the SPARQL replica of {rt.ref} at {replica.url}: {loaded} quads")


@replica_app.command("sync")
def replica_sync(ctx: typer.Context, collection: str = COLLECTION_OPTION, user: str = USER_OPTION) -> None:
    """Apply the writes the replica has not seen yet (a query does it first anyway). Example: provgraph replica sync"""
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        applied = rt.replica().sync()
    echo(f"applied {applied} write(s) to the SPARQL replica of {rt.ref}")


def register(app: typer.Typer) -> None:
    """Add the store commands to the app."""
    app.command("sparql")(sparql)
    app.command("export")(export)
    app.command("import")(import_)
    app.add_typer(collections_app, name="collections")
    app.add_typer(replica_app, name="replica")
