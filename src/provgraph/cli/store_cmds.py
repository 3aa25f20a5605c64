"""Commands over the quad store: ``sparql``, ``export``, ``import``, ``collections``."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox
import typer
from rich.table import Table

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, cell, drop, echo, json_text, listing_user, open_runtime, settings_from, stdout
from provgraph.explain.neutralise import escape_json
from provgraph.cli.render import short
from provgraph.errors import InputError, QueryError
from provgraph.layout import CollectionRef
from provgraph.rdf.convert import from_ox
from provgraph.rdf.seed_syntax import as_triple_terms
from provgraph.store.collections import create_collection, list_collections

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
) -> None:
    """Run a SPARQL query on a collection (prefixes prov: rdf: rdfs: xsd: dc: skos: owl: tg: are predefined).

    Example: provgraph sparql 'SELECT ?sg WHERE { GRAPH <urn:graph:source> { ?sg tg:contains ?t } }' --format json
    """
    text = sys.stdin.read() if query == "-" else query
    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        result = _seed_syntax_query(rt, text)
        try:  # results are evaluated lazily: failures surface while serialising
            if isinstance(result, ox.QueryBoolean):
                echo("true" if bool(result) else "false")
            elif isinstance(result, ox.QueryTriples):
                echo(_serialised(result, ox.RdfFormat.N_TRIPLES), nl=False)
            elif fmt is QueryFormat.json:
                echo(_serialised(result, ox.QueryResultsFormat.JSON))
            elif fmt is QueryFormat.csv:
                echo(_serialised(result, ox.QueryResultsFormat.CSV), nl=False)
            else:
                _print_table(result)
        except (OSError, ValueError, RuntimeError) as exc:
            raise QueryError(f"collection {rt.ref}: query failed: {exc}") from exc


def _serialised(result: Any, fmt: Any) -> str:
    """A query result serialised in memory (``serialize`` without an output returns the bytes)."""
    return escape_json(bytes(result.serialize(format=fmt) or b"").decode("utf-8"))  # echo() neutralises the rest


if TYPE_CHECKING:
    from provgraph.runtime import Runtime


def _seed_syntax_query(rt: "Runtime", text: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
    """Run the query, reading seed-style ``<< s p o >>`` as triple terms when that parses (with a notice)."""
    rewritten, count = as_triple_terms(text)
    if count:
        try:
            result = rt.sparql_store.raw_query(rewritten)
        except QueryError:
            pass  # e.g. a reifier in subject position: the query means what it says
        else:
            echo(f"note: read {count} '<< s p o >>' as RDF 1.2 triple term(s) '<<( s p o )>>' "
                       "(write <<( … )>> to say so; docs/trace-format.md)", err=True)
            return result
    return rt.sparql_store.raw_query(text)


def _print_table(result: ox.QuerySolutions) -> None:
    names = [v.value for v in result.variables]
    table = Table(*names, show_lines=False)
    count = 0
    for sol in result:
        count += 1
        table.add_row(*(cell("" if sol[n] is None else short(from_ox(sol[n]))) for n in names))
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
    """Import graph data atomically (quads only, not documents or vectors); a syntax error imports nothing.

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
    fmt: QueryFormat = typer.Option(QueryFormat.table, "--format", "-f", help="table or json."),
) -> None:
    """List collections. Example: provgraph collections list --format json"""
    settings = settings_from(ctx)
    found = list_collections(settings.home, listing_user(user))
    if fmt is QueryFormat.json:

        echo(json_text([{"user": c.user, "collection": c.collection} for c in found]))
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
    created = create_collection(ref)
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
