"""Under ``CI=true`` the browser tests fail when Chromium is missing (a developer machine skips them), as the
scale-out tests do without their services (tests/services.py): CI cannot pass by running none of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def collect_browser_tests(ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
    env["VIEWER_CHROMIUM"] = "/nonexistent/chromium"
    if ci is not None:
        env["CI"] = ci
    others = [f"--ignore={p.relative_to(ROOT)}" for p in (ROOT / "tests").iterdir() if p.name != "browser"]
    # collected from tests/ as make test does (an argument's own conftest would be loaded before collection)
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-p", "no:tests.services", *others, "tests"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)


@pytest.mark.parametrize("ci", ["true"])
def test_ci_fails_the_browser_tests_without_chromium(ci: str) -> None:
    r = collect_browser_tests(ci)
    assert r.returncode != 0 and "CI must run the browser tests: Debian's chromium is not installed" in r.stdout, \
        r.stdout[-2000:]


@pytest.mark.parametrize("ci", [None])
def test_elsewhere_they_are_skipped(ci: str | None) -> None:
    r = collect_browser_tests(ci)
    assert "CI must run" not in r.stdout and "error" not in r.stdout.lower(), r.stdout[-2000:]
    assert r.returncode == 5, r.stdout[-2000:]  # skipped: nothing collected
    assert "the browser tests (tests/browser) did not run: Debian's chromium is not installed" in r.stdout  # said
