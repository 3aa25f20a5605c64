"""The CLI's remote mode: with ``--url``/``PROVGRAPH_URL`` a command runs on a ``provgraph serve``.

The arguments go to ``POST /api/v1/cli`` with the files they name (``load``, ``import``,
``--ontology``, ``restore``'s archive); stdout and stderr come back as the server writes them and
are printed here, and ``export -o FILE`` and ``backup FILE`` are written here. The exit code is the command's.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path, PurePath
from typing import Any

import httpx

from provgraph import errors
from provgraph.errors import InputError, ProvgraphError, StoreUnavailable
from provgraph.ingest.paths import expand_paths

__all__ = ["run_remote", "LOCAL_COMMANDS", "file_arguments", "parse_command", "path_values"]

LOCAL_COMMANDS = ("serve", "tokens", "config")
_INPUTS = {"load": ("paths", "ontology"), "extract": ("ontology",), "import": ("file",), "restore": ("file",)}
_OUTPUTS = {"export": ("output",), "backup": ("file",)}


def parse_command(group: Any, argv: list[str], *, strict: bool = False) -> tuple[Any, dict[str, Any]] | None:
    """The command ``argv`` names and its parameters as click parses them for that command (None: no command).

    ``strict`` parses exactly as running the command would (so a usage error raises as it would
    there); otherwise leniently (no validation, no callbacks). Duck-typed: typer vendors its own
    click, whose classes are not ``click``'s.
    """
    ctx = group.make_context("provgraph", list(argv), resilient_parsing=not strict)
    cmd: Any = group
    while hasattr(cmd, "commands"):
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            return None
        name, cmd, rest = cmd.resolve_command(ctx, rest)
        if cmd is None:
            return None
        ctx = cmd.make_context(name, rest, parent=ctx, resilient_parsing=not strict)
    return cmd, dict(ctx.params)


def _params(group: Any, argv: list[str]) -> dict[str, Any]:
    try:
        parsed = parse_command(group, argv)
    except Exception:  # noqa: BLE001 - unparsable arguments name no files; the command reports them
        return {}
    return parsed[1] if parsed else {}


def _tokens(argv: list[str], value: Any) -> list[str]:
    values = value if isinstance(value, (list, tuple)) else [value]
    wanted = {Path(str(v)) for v in values if v is not None}
    return [a for a in argv if not a.startswith("-") and a and Path(a) in wanted] + \
        [a.split("=", 1)[1] for a in argv if a.startswith("--") and "=" in a and Path(a.split("=", 1)[1]) in wanted] + \
        [a[2:] for a in argv if a.startswith("-") and not a.startswith("--") and len(a) > 2 and Path(a[2:]) in wanted]


def file_arguments(group: Any, argv: list[str]) -> tuple[list[str], list[str]]:
    """The arguments of ``argv`` that name files to read (inputs) and to write (outputs)."""
    params = _params(group, argv)
    inputs = [t for name in _INPUTS.get(argv[0], ()) for t in _tokens(argv, params.get(name))]
    outputs = [t for name in _OUTPUTS.get(argv[0], ()) for t in _tokens(argv, params.get(name))]
    return inputs, outputs


def path_values(command: str, params: dict[str, Any]) -> list[str]:
    """Every parsed parameter value that names a file: the paths (``Path`` values, open files) and the
    parameters that take file names as text (``load``'s)."""
    found: list[str] = []
    for name, value in params.items():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, PurePath):
                found.append(str(v))
            elif hasattr(v, "read") or hasattr(v, "write"):
                found.append(str(getattr(v, "name", v)))
            elif isinstance(v, str) and name in (*_INPUTS.get(command, ()), *_OUTPUTS.get(command, ())):
                found.append(v)
    return found


def _request(group: Any, argv: list[str]) -> dict[str, Any]:
    params = _params(group, argv)
    command = argv[0]
    paths, outputs = file_arguments(group, argv)
    files = []
    for given in dict.fromkeys(paths):
        found, _ = expand_paths([given])
        for path in found:
            try:
                files.append({"path": str(path), "data": base64.b64encode(path.read_bytes()).decode("ascii")})
            except OSError:
                continue  # the server reports it as the command would
    stdin = None
    if (command == "sparql" and params.get("query") == "-") or (argv[:2] == ["collections", "drop"]
                                                                and not params.get("yes")):
        stdin = sys.stdin.read() if not sys.stdin.isatty() else sys.stdin.readline()
    return {"argv": argv, "stdin": stdin, "files": files, "paths": list(dict.fromkeys(paths)), "outputs": outputs}


def _refusal(response: httpx.Response) -> ProvgraphError:
    try:
        detail = json.loads(response.read())["error"]
        cls = getattr(errors, detail["type"], None)
        kind = cls if isinstance(cls, type) and issubclass(cls, ProvgraphError) else ProvgraphError
        return kind(str(detail["message"]))
    except (ValueError, KeyError, TypeError):
        return ProvgraphError(f"the server answered HTTP {response.status_code}")


def run_remote(group: Any, argv: list[str], url: str, token: str | None) -> int:
    """Run ``provgraph ARGV`` on the server at ``url``; prints its output here, returns its exit code."""
    body = _request(group, argv)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    endpoint = url.rstrip("/") + "/api/v1/cli"
    code = 1
    try:
        with httpx.Client(timeout=httpx.Timeout(30.0, read=None)) as http, \
                http.stream("POST", endpoint, json=body, headers=headers) as response:
            if response.status_code != 200:
                raise _refusal(response)
            for line in response.iter_lines():
                if not line:
                    continue
                message = json.loads(line)
                if "stdout" in message:
                    sys.stdout.write(message["stdout"])
                    sys.stdout.flush()
                elif "stderr" in message:
                    sys.stderr.write(message["stderr"])
                    sys.stderr.flush()
                elif "file" in message:
                    _write_back(Path(message["file"]), base64.b64decode(message["data"]))
                elif "exit" in message:
                    code = int(message["exit"])
    except httpx.HTTPError as exc:
        raise StoreUnavailable(f"cannot reach the provgraph server at {url}: {exc}") from exc
    return code


def _write_back(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the export ({exc.strerror or exc})") from exc
