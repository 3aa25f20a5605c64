"""The scale-out services for tests: started once per run by the controlling pytest process.

``scripts/services.py`` starts PostgreSQL (+ pgvector) and NATS JetStream in a scratch folder before the tests when the
run includes tests that need it (tests/contract, tests/scaleout, or the whole suite); xdist workers
inherit its state file through ``SCALEOUT_TEST_SERVICES``. ``pg_url`` and ``nats_url`` then give their URLs.
Without the services a test is skipped, except under CI=true, where it FAILS (CI must run them).

``SCALEOUT_SUITE_STORE=postgresql`` runs the WHOLE suite with its quads, vectors and records in PostgreSQL: every
test gets ``PROVGRAPH_STORE_URL`` set to a database of its own xdist worker, emptied of collections before it
(:func:`suite_store_url`), and ``PROVGRAPH_REPLICA_URL`` the worker's Oxigraph server (:func:`suite_replica_url`),
so ``sparql`` answers there. Tests that are embedded-only (docs/scale-out.md names them) are marked ``embedded_only``
and skipped in that mode.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "services.py"
STATE_ENV = "SCALEOUT_TEST_SERVICES"  # the state file (no PROVGRAPH_ prefix: clean_environ removes those)
ERROR_ENV = "SCALEOUT_TEST_SERVICES_ERROR"
NEEDING = ("tests/contract", "tests/scaleout")
SUITE_ENV = "SCALEOUT_SUITE_STORE"  # "postgresql": the whole suite on the PostgreSQL store
SERVICES = "postgres,nats"


def suite_on_postgres() -> bool:
    """Whether this run puts every test's collections in PostgreSQL (``SCALEOUT_SUITE_STORE=postgresql``)."""
    return os.environ.get(SUITE_ENV, "").strip().lower() == "postgresql"


def _wanted(config: pytest.Config) -> bool:
    if suite_on_postgres():
        return True
    for arg in config.args or ["tests"]:
        path = (Path(config.invocation_params.dir) / arg.split("::")[0]).resolve()
        for folder in NEEDING:
            needed = ROOT / folder
            if path == needed or needed in path.parents or path in needed.parents:
                return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "embedded_only: needs the embedded store (skipped with SCALEOUT_SUITE_STORE)")
    if hasattr(config, "workerinput") or os.environ.get(STATE_ENV) or not _wanted(config):
        return
    folder = Path(tempfile.mkdtemp(prefix="provgraph-services-"))
    folder.chmod(0o755)  # PostgreSQL runs as an unprivileged account when we are root
    started = time.monotonic()
    run = subprocess.run([sys.executable, str(SCRIPT), "start", "--dir", str(folder), "--only", SERVICES],
                         capture_output=True, text=True, timeout=120)
    config._provgraph_services = folder  # type: ignore[attr-defined]
    if run.returncode != 0:
        os.environ[ERROR_ENV] = (run.stderr.strip().splitlines() or ["services.py failed"])[-1]
        return
    os.environ[STATE_ENV] = str(folder / "services.json")
    print(f"scale-out services up in {time.monotonic() - started:.1f} s ({SERVICES})", file=sys.stderr)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _REPLICA:  # this process's suite replica server
        subprocess.run([sys.executable, str(SCRIPT), "stop", "--dir", _REPLICA[0]], capture_output=True, timeout=60)
        shutil.rmtree(_REPLICA[0], ignore_errors=True)
        _REPLICA.clear()
    folder = getattr(config, "_provgraph_services", None)
    if folder is not None:
        subprocess.run([sys.executable, str(SCRIPT), "stop", "--dir", str(folder)], capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(STATE_ENV, None)


def _unavailable(what: str) -> None:
    why = os.environ.get(ERROR_ENV) or f"{what} is not running (python scripts/services.py start)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the scale-out tests: {why}", pytrace=False)
    pytest.skip(why)


def service_state() -> dict[str, dict[str, object]]:
    """The running services (name → pid, port, url), as recorded by scripts/services.py."""
    state = os.environ.get(STATE_ENV)
    if not state or not Path(state).is_file():
        return {}
    return dict(json.loads(Path(state).read_text()))


_REPLICA: list[str] = []  # the suite replica server of this process: its folder, its URL


def suite_replica_url() -> str:
    """The Oxigraph server this process's suite-on-PostgreSQL tests use as their collections' SPARQL replica
    (started on first use; a collection queried after another is rebuilt into it first: store/replica.py)."""
    if not _REPLICA:
        folder = tempfile.mkdtemp(prefix="provgraph-suite-replica-")
        run = subprocess.run([sys.executable, str(SCRIPT), "start", "--dir", folder, "--only", "oxigraph"],
                             capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            _unavailable("the Oxigraph server: " + (run.stderr.strip().splitlines() or ["services.py failed"])[-1])
        _REPLICA.extend([folder, str(json.loads((Path(folder) / "services.json").read_text())["oxigraph"]["url"])])
    return _REPLICA[1]


@pytest.fixture
def oxigraph_url(tmp_path: Path) -> Iterator[str]:
    """A fresh Oxigraph server of this test's own (a SPARQL replica holds one collection), stopped after it."""
    folder = tmp_path / "oxigraph-server"
    run = subprocess.run([sys.executable, str(SCRIPT), "start", "--dir", str(folder), "--only", "oxigraph"],
                         capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        _unavailable("the Oxigraph server: " + (run.stderr.strip().splitlines() or ["services.py failed"])[-1])
    try:
        yield str(json.loads((folder / "services.json").read_text())["oxigraph"]["url"])
    finally:
        subprocess.run([sys.executable, str(SCRIPT), "stop", "--dir", str(folder)], capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def s3_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A SeaweedFS S3 gateway (``weed server -s3``, with the bucket ``provgraph``) started on loopback for the session on
    first use: its ``AWS_*`` settings and ``PROVGRAPH_BLOB_URL``; stopped by pid after the session."""
    folder = tmp_path_factory.mktemp("seaweedfs")
    run = subprocess.run([sys.executable, str(SCRIPT), "start", "--dir", str(folder), "--only", "s3"],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        _unavailable("SeaweedFS (S3): " + (run.stderr.strip().splitlines() or ["services.py failed"])[-1])
    try:
        yield {k: str(v) for k, v in json.loads((folder / "services.json").read_text())["s3"]["env"].items()}
    finally:
        subprocess.run([sys.executable, str(SCRIPT), "stop", "--dir", str(folder)], capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The URL of the test PostgreSQL (skipped without it; a failure under CI=true)."""
    info = service_state().get("postgres")
    if info is None:
        _unavailable("PostgreSQL")
    yield str(info["url"])  # type: ignore[index]


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    """The URL of the test NATS JetStream server (skipped without it; a failure under CI=true)."""
    info = service_state().get("nats")
    if info is None:
        _unavailable("NATS")
    yield str(info["url"])  # type: ignore[index]


def _pg_base() -> str:
    info = service_state().get("postgres")
    if info is None:
        _unavailable("PostgreSQL")
    return str(info["url"])  # type: ignore[index]


def _database(name: str, template: str) -> str:
    """A fresh database ``name`` copied from ``template`` (dropped first if it exists); its URL."""
    import psycopg

    base = _pg_base()
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    return base.rsplit("/", 1)[0] + "/" + name


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main").replace("-", "_")


_TEMPLATES: set[str] = set()


def suite_template(name: str) -> str:
    """The URL of an empty template database ``suite_tpl_<name>_<worker>`` (with pgvector), to fill once."""
    import psycopg

    db = f"suite_tpl_{name}_{_worker()}"
    url = _database(db, "template0")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    _TEMPLATES.add(db)
    return url


def suite_module_database(name: str, template: str) -> str:
    """The URL of a database of one test module's own, ``suite_mod_<name>_<worker>``, copied from a filled
    :func:`suite_template` URL: for a module-scoped fixture (a server) that outlives each test's fresh database."""
    return _database(f"suite_mod_{name}_{_worker()}", template.rsplit("/", 1)[1])


def suite_store_url(template: str | None = None) -> str:
    """The PostgreSQL URL for one test of a suite-on-PostgreSQL run: a fresh database of the worker's, empty (with
    pgvector) or copied from a filled :func:`suite_template` URL."""
    if template is None:
        template = suite_template("empty") if f"suite_tpl_empty_{_worker()}" not in _TEMPLATES else \
            _pg_base().rsplit("/", 1)[0] + f"/suite_tpl_empty_{_worker()}"
    return _database(f"suite_{_worker()}", template.rsplit("/", 1)[1])
