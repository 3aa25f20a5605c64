"""The ``provgraph`` command: one Typer app; each command group lives in its own module."""

from __future__ import annotations

import typer

from provgraph.cli import common

__all__ = ["app", "main"]

app = typer.Typer(
    name="provgraph",
    help="Explainable knowledge-graph RAG: every fact traces to its text, every answer to its facts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=common.ProvgraphGroup,
)


@app.callback()
def _root(
    ctx: typer.Context,
    home: str = typer.Option(None, "--home", envvar="PROVGRAPH_HOME", help="Data directory (default ~/.provgraph)."),
    url: str = typer.Option(None, "--url", envvar="PROVGRAPH_URL",
                            help="Run the command on this provgraph server (http://host:port)."),
    token: str = typer.Option(None, "--token", envvar="PROVGRAPH_TOKEN", help="API token for --url."),
) -> None:
    """provgraph — load documents, extract a provenance-tracked graph, ask explainable questions."""
    ctx.obj = common.Globals(home=home, url=url, token=token)


def _register() -> None:
    import importlib

    for name in (
        "store_cmds",
        "config_cmd",
        "ingest_cmds",
        "documents_cmds",
        "rag_cmds",
        "traces_cmds",
        "ask_cmds",
        "integrity_cmds",
        "serve_cmds",
    ):
        importlib.import_module(f"provgraph.cli.{name}").register(app)


_register()


def main() -> None:
    """Console entry point: maps provgraph errors to one-line messages and exit codes."""
    common.run_app(app)
