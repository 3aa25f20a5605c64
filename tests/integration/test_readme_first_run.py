"""The README's "First run" block (issue 30), each line in a fresh shell as a new user types it.

Each line runs in its own ``bash -c`` from the repository root, with ``provgraph`` off PATH until the README's
``source .venv/bin/activate`` line (then that line prefixes every later one), no PROVGRAPH_* setting but a
fresh PROVGRAPH_HOME. ``serve`` gets ``--port`` of a free port (8400 may be taken on a test machine).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.server.live import free_port

ROOT = Path(__file__).resolve().parents[2]


def first_run_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## First run\n.*?```sh\n(.*?)```", readme, re.DOTALL)
    assert block, "README has no First run block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def shell_env(home: Path) -> dict[str, str]:
    venv_bin = str(ROOT / ".venv" / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROVGRAPH_", "VIRTUAL_ENV", "COLUMNS"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env["PROVGRAPH_HOME"] = str(home)
    return env


def test_the_readme_first_run_works_line_by_line(tmp_path: Path) -> None:
    lines = first_run_lines()
    assert lines[0] == "make demo" and lines[1] == "source .venv/bin/activate" and lines[-1] == "provgraph serve"
    env = shell_env(tmp_path / "home")
    off_path = subprocess.run(["bash", "-c", "command -v provgraph"], env=env, cwd=ROOT, capture_output=True,
                              text=True)
    assert off_path.returncode != 0 or not off_path.stdout.startswith(str(ROOT))  # the trap the README answers
    outs: dict[str, str] = {}
    prefix = ""
    for line in lines[:-1]:
        if line.startswith("source "):
            prefix = line + " && "
            continue
        r = subprocess.run(["bash", "-c", prefix + line], env=env, cwd=ROOT, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, (line, r.stderr[-2000:])
        outs[line] = r.stdout
    by = {line.removeprefix("provgraph ").split(" -")[0]: out for line, out in outs.items()}
    assert re.fullmatch(r"provgraph \S+\n", by["--version"])
    graph = next(out for line, out in outs.items() if line.startswith("provgraph graph-rag"))
    assert "Polonium is a radioactive element" in graph and "Radium is a radioactive element" in graph
    assert "Polonium is a radioactive element" in by["document-rag"]
    assert "polonium_and_radium.md" in by["documents list"].split()
    assert "Section:" in by["provenance polonium_and_radium.md"]
    assert "What did Marie Curie discover?" in by["traces list"]
    token = by["tokens create"].strip()
    assert token.startswith("pgt_")

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serve = subprocess.Popen(["bash", "-c", f"{prefix}exec {lines[-1]} --port {port}"], env=env, cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert serve.poll() is None and time.monotonic() < deadline, "serve did not start"
            try:
                if httpx.get(url + "/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert httpx.get(url + "/").status_code == 200  # the viewer page the README opens
        seen = httpx.get(url + "/api/v1/collections", headers={"Authorization": f"Bearer {token}"}).json()
        assert seen == [{"user": "default", "collection": "demo"}]  # the token sees what make demo loaded
        # the paragraph below the block: a local command says in one line the server holds it, and goes through it
        local = subprocess.run(["bash", "-c", prefix + "provgraph documents list -C demo"], env=env, cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
        assert local.returncode == 4, local.stderr
        assert local.stderr.count("\n") == 1 and f"held by the provgraph server at {url}" in local.stderr
        through = subprocess.run(["bash", "-c", prefix + "provgraph documents list -C demo"], cwd=ROOT,
                                 env={**env, "PROVGRAPH_URL": url, "PROVGRAPH_TOKEN": token},
                                 capture_output=True, text=True, timeout=120)
        assert through.returncode == 0 and "polonium_and_radium.md" in through.stdout, through.stderr
        serve.send_signal(signal.SIGINT)  # Ctrl-C stops it
        assert serve.wait(timeout=60) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_the_readme_says_why_identifiers_say_trustgraph() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"Identifiers and vocabulary say `trustgraph` (.*?)\n\n", readme, re.DOTALL)
    assert said and "TrustGraph's explainability" in said.group(1) and "never fetched" in said.group(1)
    assert "urn:trustgraph:question:" in said.group(1) and "https://trustgraph.ai/ns/" in said.group(1)
