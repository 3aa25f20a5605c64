"""``provgraph config show``: the effective settings, secrets masked."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

import typer
from rich.table import Table

from provgraph.cli.common import cell, echo, json_text, settings_from, stdout
from provgraph.config import Settings

__all__ = ["register"]


class ShowFormat(str, Enum):
    table = "table"
    json = "json"


config_app = typer.Typer(help="Inspect configuration.", no_args_is_help=True)


@config_app.command("show")
def show(
    ctx: typer.Context,
    fmt: ShowFormat = typer.Option(ShowFormat.table, "--format", "-f", help="table or json."),
    probe: bool = typer.Option(False, "--probe", help="Also ask the LLM what it supports (two tiny calls)."),
) -> None:
    """Print the settings in effect (flags > PROVGRAPH_* env > provgraph.toml > defaults); secrets as ****.

    With --probe, also what the configured LLM supports: structured-output mode, streaming, usage.

    Example: PROVGRAPH_LLM_MODEL=llama3.1:8b provgraph config show --format json --probe
    """
    settings = settings_from(ctx)
    values = settings.masked()
    if probe:  # an LLM that cannot be reached ends here: one error line, exit 5
        values.update({f"probe_{k}": v for k, v in _probe(settings).items()})
    if fmt is ShowFormat.json:
        echo(json_text(values, indent=2, default=str))
        return
    for name in [n for n in values if n.startswith("probe_") and n.endswith("_error")]:
        error = values.pop(name)  # a missing capability's reason: a line of its own, not a table cell
        if error is not None:
            echo(f"warning: {name.removeprefix('probe_').removesuffix('_error')}: {error}", err=True)
    table = Table(show_header=True, header_style="bold")
    table.add_column("Setting", no_wrap=True)
    table.add_column("Value", overflow="fold")
    table.add_column("Environment variable", style="dim", no_wrap=True)
    for name, value in values.items():
        env = "(derived from llm)" if name == "llm_provider" else f"PROVGRAPH_{name.upper()}"
        if name.startswith("probe_"):
            env = "(measured)"
        table.add_row(name, cell(_display(value)), env)
    stdout.print(table)


def _probe(settings: Settings) -> dict[str, Any]:
    """The probe of the configured LLM, or a note that there is none."""
    import asyncio

    from provgraph.models import build_chat_model
    from provgraph.models.probe import probe

    llm = build_chat_model(settings)
    if llm is None:
        return {"model": None, "note": "no LLM configured (no-LLM mode)"}

    async def run() -> dict[str, Any]:
        try:
            return (await probe(llm)).as_dict()
        finally:
            await llm.aclose()

    return asyncio.run(run())


def _display(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def register(app: typer.Typer) -> None:
    """Add the ``config`` command group to ``app``."""
    app.add_typer(config_app, name="config")
