"""Every command (and sub-command) has --help with an example."""

from __future__ import annotations

from typing import Any

import typer

from provgraph.cli.app import app
from tests.cli_runner import run


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    ctx = typer.Context(group)
    for name in group.list_commands(ctx):  # the root group imports a command's module on first use
        cmd = group.get_command(ctx, name)
        if hasattr(cmd, "commands"):  # a sub-group (typer vendors its own click)
            found += _commands(cmd, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_every_command_has_help_with_an_example() -> None:
    commands = _commands(typer.main.get_command(app))
    assert len(commands) == 38  # 23 + serve, tokens create|list|revoke, communities build|list|show, global-rag, retrieve,
    # conversations list|show|delete, mcp, replica rebuild|sync
    missing = []
    for cmd in commands:
        r = run(*cmd, "--help")
        if r.code != 0 or "Example" not in r.out:
            missing.append(" ".join(cmd))
    assert missing == []
