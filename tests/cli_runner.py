"""Run the real ``provgraph`` Typer app in-process, the way the console script does."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner

from provgraph.cli.app import app


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(*args: str, input: str | None = None) -> Result:
    """Invoke ``provgraph ARGS``; returns exit code, stdout and stderr."""
    result = CliRunner().invoke(app, list(args), input=input, catch_exceptions=False)
    return Result(result.exit_code, result.stdout, result.stderr)
