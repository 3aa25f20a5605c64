"""The scale-out services for tests: started once per run by the controlling pytest process.

``scripts/services.py`` starts PostgreSQL (+ pgvector) and NATS JetStream in a scratch folder before the tests when the
run includes tests that need it (tests/contract, tests/scaleout, or the whole suite); xdist workers
inherit its state file through ``SCALEOUT_TEST_SERVICES``. ``pg_url`` and ``nats_url`` then give their URLs.
Without the services a test is skipped, except under CI=true, where it FAILS (CI must run them).
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
SERVICES = "postgres,nats"


def _wanted(config: pytest.Config) -> bool:
    for arg in config.args or ["tests"]:
        path = (Path(config.invocation_params.dir) / arg.split("::")[0]).resolve()
        for folder in NEEDING:
            needed = ROOT / folder
            if path == needed or needed in path.parents or path in needed.parents:
                return True
    return False


def pytest_configure(config: pytest.Config) -> None:
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
