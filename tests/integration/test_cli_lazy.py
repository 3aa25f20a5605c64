"""`provgraph --help` lists commands without importing them; the list matches the real commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import typer

from provgraph.cli import app as app_module
from provgraph.cli.app import LAZY, LazyGroup

# what a command that only reads the store must not import (the models, vectors, server, LLM client)
HEAVY = ("numpy", "model2vec", "usearch", "fastapi", "uvicorn", "openai", "httpx", "provgraph.models",
         "provgraph.vectors", "provgraph.retrieval", "provgraph.extract", "provgraph.api")


def _eager_group() -> typer.core.TyperGroup:
    """Every command module registered at once, in the order the app had before it was lazy."""
    eager = typer.Typer(add_completion=False)
    eager.callback()(lambda: None)
    for module in ("store_cmds", "config_cmd", "ingest_cmds", "worker_cmds", "documents_cmds", "rag_cmds", "community_cmds",
                   "traces_cmds", "retrieve_cmd",
                   "ask_cmds", "integrity_cmds", "serve_cmds", "conversations_cmds", "mcp_cmds"):
        __import__(f"provgraph.cli.{module}", fromlist=["register"]).register(eager)
    return typer.main.get_group(eager)


def test_the_lazy_table_names_every_command_in_order_with_its_own_help_line() -> None:
    real = _eager_group().commands
    fix = "a new or renamed command, or a changed first help line, goes into LAZY in cli/app.py"
    assert list(LAZY) == list(real), fix
    assert {name: short for name, (_, short) in LAZY.items()} == \
        {name: cmd.get_short_help_str(limit=300) for name, cmd in real.items()}, fix
    group = typer.main.get_command(app_module.app)
    assert isinstance(group, LazyGroup)
    ctx = typer.Context(group)
    assert group.list_commands(ctx) == list(LAZY)
    for name in LAZY:
        assert type(group.get_command(ctx, name)).__name__ == type(real[name]).__name__


def _modules_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nprint(','.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env=env).stdout
    return set(out.strip().splitlines()[-1].split(","))


def test_root_help_imports_no_command_module_nor_settings() -> None:
    loaded = _modules_after(
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from provgraph.cli.app import app\n"
        "r = CliRunner().invoke(app, ['--help'])\n"
        "assert r.exit_code == 0 and 'graph-rag' in r.stdout, r.stdout\n"
    )
    heavy = sorted(m for m in loaded if m.startswith(("provgraph.cli.", "provgraph.config", "provgraph.runtime",
                                                      "pyoxigraph", "rich.markdown", "rich.traceback", *HEAVY))
                   and m not in ("provgraph.cli.app", "provgraph.cli.common"))
    assert heavy == []


def test_sparql_on_a_collection_loads_neither_models_nor_vectors(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "PROVGRAPH_HOME": str(tmp_path)}
    env.pop("PROVGRAPH_URL", None)
    loaded = _modules_after(
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from provgraph.cli.app import app\n"
        "assert CliRunner().invoke(app, ['collections', 'create', 'default']).exit_code == 0\n"
        "r = CliRunner().invoke(app, ['sparql', 'ASK { ?s ?p ?o }'])\n"
        "assert (r.exit_code, r.stdout) == (0, 'false\\n'), (r.exit_code, r.stdout, r.stderr)\n",
        env,
    )
    assert "pyoxigraph" in loaded
    assert sorted(m for m in loaded if m.startswith(HEAVY)) == []


def test_the_deferred_rich_classes_are_the_real_ones_once_used() -> None:
    loaded = _modules_after(
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from provgraph.cli.app import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
        "from typer import rich_utils\n"
        "import rich.markdown, rich.traceback\n"
        "assert type(rich_utils.Markdown('*x*')) is rich.markdown.Markdown\n"
        "assert rich_utils.Traceback.from_exception.__func__ is rich.traceback.Traceback.from_exception.__func__\n"
    )
    assert {"rich.markdown", "rich.traceback"} <= loaded


def test_a_command_is_loaded_on_first_use_and_runs() -> None:
    from tests.cli_runner import run

    r = run("sparql", "--help")
    assert r.code == 0 and "SPARQL" in r.out
    r = run("sparq")
    assert r.code == 2 and "No such command 'sparq'. Did you mean 'sparql'?" in r.err
