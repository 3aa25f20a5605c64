"""``provgraph serve`` (the HTTP API) and ``provgraph tokens create|list|revoke``."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from provgraph.cli.common import echo, settings_from, stdout
from provgraph.errors import ConfigError, InputError

__all__ = ["register"]

tokens_app = typer.Typer(help="API tokens for provgraph serve: each acts as one user.", no_args_is_help=True)


def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (non-loopback needs tokens)."),
    port: int = typer.Option(8400, "--port", min=0, max=65535, help="Port to listen on."),
    user: str = typer.Option("default", "-U", "--user", help="The user requests act as while no token exists."),
    max_body_mb: float = typer.Option(64.0, "--max-body-mb", min=0.001, help="Largest request or upload (MiB)."),
    concurrency: int = typer.Option(8, "--concurrency", min=1,
                                    help="Requests in flight per token (HTTP and WebSocket together)."),
    timeout: float = typer.Option(300.0, "--timeout", min=0.001, help="Longest query, in seconds."),
    allowed_hosts: list[str] = typer.Option([], "--allowed-host", envvar="PROVGRAPH_ALLOWED_HOSTS",
                                            help="Another name this server answers to (repeatable; loopback names "
                                                 "and the bound address always)."),
    header_timeout: float = typer.Option(10.0, "--header-timeout", min=0.001,
                                         help="Seconds a connection may take to send its request's headers."),
    max_connections: int = typer.Option(512, "--max-connections", min=1, help="Open connections at most."),
    collections_per_user: int = typer.Option(8, "--collections-per-user", min=1,
                                             help="Collections one user keeps open (least recently used closed)."),
    max_open_collections: int = typer.Option(64, "--max-open-collections", min=1,
                                             help="Collections open at once, every user together."),
    max_result_rows: int = typer.Option(100_000, "--max-result-rows", min=1,
                                        help="SPARQL results (solutions or triples) in one answer; then truncated."),
    max_result_mb: float = typer.Option(64.0, "--max-result-mb", min=0.001,
                                        help="Size of one SPARQL answer (MiB); then truncated."),
) -> None:
    """Serve the HTTP API (/api/v1, OpenAPI at /api/v1/openapi.json); this process owns the stores.

    Example: provgraph tokens create -U alice && provgraph serve --port 8400
    """
    import os

    import uvicorn

    from provgraph.api.app import create_app
    from provgraph.api.connections import BACKLOG, fd_budget, guarded_protocol
    from provgraph.api.origin import HostPolicy, is_loopback
    from provgraph.api.state import Limits
    from provgraph.api.tokens import TokenStore
    from provgraph.cli.home_lock import own_home
    from provgraph.layout import check_name

    settings = settings_from(ctx)
    check_name("user", user)
    beyond_loopback = not is_loopback(host)
    if beyond_loopback and not TokenStore(settings.home).enabled():
        raise ConfigError(f"refusing to serve on {host} without tokens: create one with "
                          "provgraph tokens create -U USER (or bind to 127.0.0.1)")
    connections, open_collections = fd_budget(max_connections, max_open_collections)
    limits = Limits(max_body_mb=max_body_mb, concurrency_per_token=concurrency, timeout_s=timeout,
                    header_timeout_s=header_timeout, max_connections=connections,
                    collections_per_user=min(collections_per_user, open_collections),
                    max_open_collections=open_collections, max_result_rows=max_result_rows,
                    max_result_mb=max_result_mb)
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    os.umask(0o077)  # everything the server writes is its owner's only (0700 folders, 0600 files)
    with own_home(settings.home, url):
        settings.home.chmod(0o700)
        app = create_app(settings, limits=limits, anonymous_user=user, require_tokens=beyond_loopback,
                         hosts=HostPolicy(bound=host, allowed=tuple(allowed_hosts)),
                         on_stop=lambda line: typer.echo(line, err=True))
        typer.echo(f"provgraph serving {settings.home} on {url}/api/v1 (at most {connections} connections, "
                   f"{open_collections} open collections)", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=30,
                    backlog=BACKLOG, http=guarded_protocol(connections, header_timeout))  # type: ignore[arg-type]


@tokens_app.command("create")
def tokens_create(
    ctx: typer.Context,
    user: str = typer.Option(..., "-U", "--user", help="The user the token acts as."),
) -> None:
    """Create a token and print it once (only its hash is kept). Example: provgraph tokens create -U alice"""
    from provgraph.api.tokens import TokenStore

    from provgraph.store.collections import list_collections

    settings = settings_from(ctx)
    info, text = TokenStore(settings.home).create(user)
    typer.echo(f"created token {info.id} for user {info.user} (shown once, keep it):", err=True)
    typer.echo(text)
    if not list_collections(settings.home, info.user):  # the user/token trap: the CLI loads as user default
        others = sorted({c.user for c in list_collections(settings.home)})
        held = f" (collections here belong to: {', '.join(others)})" if others else ""
        echo(f"note: user {info.user} has no collections yet{held}; the CLI loads as user default unless given "
             f"-U: load as this user with `provgraph load PATH -U {info.user} -C NAME`, or make the token for the "
             "user who loaded (`provgraph tokens create -U default`)", err=True)


@tokens_app.command("list")
def tokens_list(ctx: typer.Context, fmt: str = typer.Option("table", "--format", "-f", help="table or json.")) -> None:
    """List tokens (ID, user, created); the tokens themselves are not stored. Example: provgraph tokens list"""
    from provgraph.api.tokens import TokenStore

    found = TokenStore(settings_from(ctx).home).list()
    if fmt == "json":
        typer.echo(json.dumps([{"id": t.id, "user": t.user, "created": t.created} for t in found]))
        return
    if fmt != "table":
        raise InputError(f"unknown format {fmt!r}: use table or json")
    table = Table("Token ID", "User", "Created (UTC)")
    for t in found:
        table.add_row(t.id, t.user, t.created)
    stdout.print(table)


@tokens_app.command("revoke")
def tokens_revoke(ctx: typer.Context, token_id: str = typer.Argument(..., metavar="ID", help="From tokens list.")) -> None:
    """Revoke a token at once. Example: provgraph tokens revoke 3f2a9c1d0b7e"""
    from provgraph.api.tokens import TokenStore

    info = TokenStore(settings_from(ctx).home).revoke(token_id)
    typer.echo(f"revoked token {info.id} of user {info.user}")


def register(app: typer.Typer) -> None:
    """Add ``serve`` and ``tokens``."""
    app.command("serve")(serve)
    app.add_typer(tokens_app, name="tokens")
