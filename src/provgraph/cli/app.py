"""The ``provgraph`` command: one Typer app; each command group lives in its own module.

Command modules are imported only when one of their commands runs: ``provgraph --help`` lists
them from :data:`LAZY` (names and one-line help, pinned against the real commands by a test), so
start-up pays for Typer alone, not for the store, the models or numpy.
"""

from __future__ import annotations

import importlib
import sys
from difflib import get_close_matches
from types import ModuleType
from typing import Any

import typer
from typer.core import TyperCommand

from provgraph.cli import common

__all__ = ["app", "main", "LAZY", "LazyGroup"]

# Top-level commands in `--help` order (Typer's: commands, then groups, each in registration order):
# the module defining each and its one-line help.
LAZY: dict[str, tuple[str, str]] = {
    "sparql": ("store_cmds", "Run a SPARQL query on a collection (prefixes prov: rdf: rdfs: xsd: dc: skos: owl: tg: "
                             "are predefined)."),
    "export": ("store_cmds", "Export the whole collection, every named graph, triple terms included."),
    "import": ("store_cmds", "Import graph data (quads only, not documents or vectors); a syntax error "
                             "imports nothing."),
    "load": ("ingest_cmds", "Load documents: store, decode, chunk, extract, embed — every fact traced to its chunk."),
    "extract": ("ingest_cmds", "Re-run extraction on a loaded document (by default only chunks that failed or were "
                               "never extracted)."),
    "worker": ("worker_cmds", "Extract the documents `load` enqueued on PROVGRAPH_QUEUE_URL (any collection of the "
                              "database)."),
    "provenance": ("documents_cmds", "Print the document → page → chunk → extracted edges tree."),
    "graph-rag": ("rag_cmds", "Answer a question from the knowledge graph; -x explains each step on stderr as it "
                              "happens."),
    "global-rag": ("community_cmds", "Answer a question about the whole corpus by map-reduce over the community "
                                     "reports, every claim cited."),
    "retrieve": ("retrieve_cmd", "Retrieve the passages for a question, with their scores, provenance and facts; no "
                                 "answer, no LLM."),
    "document-rag": ("ask_cmds", "Answer from the most similar chunks, citing them; extractive (cited sentences) "
                                 "without an LLM."),
    "check": ("integrity_cmds", "Verify every cross-store invariant (documents, librarian, store, vectors); exit 0 "
                                "only when consistent."),
    "backup": ("integrity_cmds", "Write a consistent, complete, versioned archive of a collection (it may be in use "
                                 "meanwhile)."),
    "restore": ("integrity_cmds", "Restore a collection from a backup archive (refuses to overwrite a non-empty "
                                  "collection)."),
    "serve": ("serve_cmds", "Serve the HTTP API (/api/v1, OpenAPI at /api/v1/openapi.json); this process owns the "
                            "stores."),
    "mcp": ("mcp_cmds", "Serve MCP tools (graph_rag, document_rag, retrieve, traces_show, documents_list) to MCP clients."),
    "collections": ("store_cmds", "List, create and drop collections."),
    "replica": ("store_cmds", "The SPARQL replica (an Oxigraph server) of a PostgreSQL collection."),
    "config": ("config_cmd", "Inspect configuration."),
    "documents": ("documents_cmds", "List, show and remove loaded documents."),
    "communities": ("community_cmds", "Find the knowledge graph's communities, write their reports, list and show "
                                      "them."),
    "traces": ("traces_cmds", "List and show query traces (GraphRAG, Document RAG, agent)."),
    "agent": ("ask_cmds", "The ReAct agent: `agent -q QUESTION` answers, `agent tools` lists its tools."),
    "tokens": ("serve_cmds", "API tokens for provgraph serve: each acts as one user."),
    "conversations": ("conversations_cmds", "Conversations: the turns asked with --conversation ID, each with its trace."),
}
_BUILT: dict[str, dict[str, Any]] = {}  # module -> its click commands, by name


class LazyGroup(common.ProvgraphGroup):
    """The root group: lists the commands of :data:`LAZY`, imports a command's module on first use."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*LAZY, *(name for name in super().list_commands(ctx) if name not in LAZY)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in LAZY and cmd_name not in self.commands:
            module, short = LAZY[cmd_name]
            if self._listing:  # `--help` of the root: the name and help line are enough
                return TyperCommand(cmd_name, help=short, short_help=short)
            self.load(module)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:  # a UsageError of click or of typer's vendored click
            message = getattr(exc, "message", None)
            if isinstance(message, str) and args and getattr(self, "suggest_commands", False) \
                    and "Did you mean" not in message:  # typer suggests only from the commands loaded so far
                matches = get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    setattr(exc, "message", f"{message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?")
            raise

    def load(self, module: str) -> None:
        """Import a command module and add its commands to this group (built once per process, as when
        every module was registered at import)."""
        commands = _BUILT.get(module)
        if commands is None:
            scratch = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
            importlib.import_module(f"provgraph.cli.{module}").register(scratch)
            scratch.callback()(lambda: None)  # always a group, even for one command
            commands = _BUILT.setdefault(module, dict(typer.main.get_group(scratch).commands))
        for name, cmd in commands.items():
            self.add_command(cmd, name)

    def invoke(self, ctx: Any) -> Any:
        if "--help" in ctx.args or "--help" in getattr(ctx, "_protected_args", ()):  # a command's help
            _import_typer_help()
        return super().invoke(ctx)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _import_typer_help()
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


class _OnFirstUse(type):
    """A stand-in for a class of a module not imported yet: calling it, or reading an attribute it lacks,
    imports the module and uses the real class."""

    def _real(cls) -> Any:
        return getattr(importlib.import_module(cls.__module__), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)


# What typer's help renderer imports but uses only for Markdown help and pretty tracebacks (neither used
# here): rich.markdown (markdown-it, pygments) and rich.traceback are a third of `provgraph --help`.
_DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


def _import_typer_help() -> None:
    """Import typer's help renderer with stand-ins for what :data:`_DEFERRED` names (the real modules load
    on first use; with a typer that wants more from them, it is imported as it is), its tables made to keep
    option names whole (:func:`_help_table`)."""
    if "typer.rich_utils" not in sys.modules:
        _import_deferring()
    rich_utils = sys.modules["typer.rich_utils"]
    if isinstance(getattr(rich_utils, "Table", None), type) and not hasattr(rich_utils.Table, "whole_names"):
        setattr(rich_utils, "Table", _help_table(rich_utils.Table))


def _import_deferring() -> None:
    placed = []
    for module, name in _DEFERRED.items():
        if module not in sys.modules:
            stand_in = ModuleType(module)
            setattr(stand_in, name, _OnFirstUse(name, (), {"__module__": module}))
            sys.modules[module] = stand_in
            placed.append((module, stand_in))
    try:
        importlib.import_module("typer.rich_utils")
    except ImportError:
        sys.modules.pop("typer.rich_utils", None)
    finally:
        for module, stand_in in placed:
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]
    importlib.import_module("typer.rich_utils")


def _help_table(table: type) -> type:
    """Typer's help tables, whose name columns never wrap: in 80 columns rich would otherwise narrow every
    column alike and cut long option names ("--max-subgraph…"); now only the types and help columns wrap,
    and a word too long for them is folded onto the next line, never cut."""

    class HelpTable(table):  # type: ignore[misc, valid-type]
        whole_names = True

        def add_row(self, *cells: Any, **options: Any) -> None:
            super().add_row(*(_as_text(c) for c in cells), **options)
            for column in self.columns[:-2]:  # names (and the required mark) | types | help
                column.no_wrap = True
            for column in self.columns[-2:]:
                column.overflow = "fold"  # a word longer than its column (an env var name) breaks, not cut

    return HelpTable


def _as_text(cell: Any) -> Any:
    """A help cell typer lays out as rich Columns of texts (help, env var, default) as one text: Columns would
    cut a long word ("PROVGRAPH_ALLOWED_HO…") where the table folds it."""
    from rich.columns import Columns
    from rich.text import Text

    if isinstance(cell, Columns) and cell.renderables and all(isinstance(r, Text) for r in cell.renderables):
        return Text(" ").join(cell.renderables)  # type: ignore[arg-type]
    return cell


app = typer.Typer(
    name="provgraph",
    help="Explainable knowledge-graph RAG: every fact traces to its text, every answer to its facts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("provgraph")
        except PackageNotFoundError:  # run from a source tree that was never installed
            found = "unknown (not installed)"
        typer.echo(f"provgraph {found}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    home: str = typer.Option(None, "--home", envvar="PROVGRAPH_HOME", help="Data directory (default ~/.provgraph)."),
    url: str = typer.Option(None, "--url", envvar="PROVGRAPH_URL",
                            help="Run the command on this provgraph server (http://host:port)."),
    token: str = typer.Option(None, "--token", envvar="PROVGRAPH_TOKEN", help="API token for --url."),
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                 help="Print provgraph's version and exit."),
) -> None:
    """provgraph — load documents, extract a provenance-tracked graph, ask explainable questions."""
    ctx.obj = common.Globals(home=home, url=url, token=token)


def main() -> None:
    """Console entry point: maps provgraph errors to one-line messages and exit codes."""
    common.run_app(app)
