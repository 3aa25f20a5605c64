"""``provgraph mcp``: serve provgraph's questions and traces as MCP tools, over stdio or streamable HTTP."""

from __future__ import annotations

import typer

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, settings_from
from provgraph.errors import ConfigError

__all__ = ["register", "mcp"]


def mcp(
    ctx: typer.Context,
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP at /mcp instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (with --http)."),
    port: int = typer.Option(8401, "--port", min=0, max=65535, help="Port to listen on (with --http)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
) -> None:
    """Serve MCP tools (graph_rag, document_rag, retrieve, traces_show, documents_list) to MCP clients.

    Over stdio the tools act as --user; over HTTP each request needs a provgraph token (provgraph
    tokens create -U USER) and acts as its user. -C names the collection tools use by default.

    Example: provgraph mcp --http --port 8401
    """
    import anyio

    from provgraph.api.mcp_server import ProvgraphMcp, TokenGate
    from provgraph.api.tokens import TokenStore
    from provgraph.cli.home_lock import own_home

    settings = settings_from(ctx, collection=collection, user=user)
    server = ProvgraphMcp(settings)
    try:
        if not http:
            anyio.run(server.server.run_stdio_async)
            return
        import uvicorn

        tokens = TokenStore(settings.home)
        if not tokens.enabled():
            raise ConfigError("provgraph mcp --http needs API tokens: create one with provgraph tokens create -U USER")
        app = TokenGate(server.server.streamable_http_app(host=host, stateless_http=True, json_response=True), tokens)
        url = f"http://{host}:{port}/mcp"
        with own_home(settings.home, url):
            typer.echo(f"provgraph MCP server for {settings.home} on {url}", err=True)
            uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        server.close()


def register(app: typer.Typer) -> None:
    """Add ``mcp``."""
    app.command("mcp")(mcp)
