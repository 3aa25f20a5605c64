"""Under ``CI=true`` the browser tests fail when Chromium is missing (a developer machine skips them), as the
scale-out tests do without their services (tests/services.py): CI cannot pass by running none of them.

The rule is tests/browser/conftest.py's import: under CI it raises pytest's failure outcome (which pytest
reports as a collection error, failing the run), elsewhere its skip. The CI case imports that conftest here
(a pytest run in a subprocess cost ~5 s CPU); the developer case collects in a subprocess as make test does.
"""

from __future__ import annotations

import importlib.util
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


def import_browser_conftest(monkeypatch: pytest.MonkeyPatch, ci: str) -> BaseException | None:
    """Run tests/browser/conftest.py afresh as pytest would import it, with ``CI`` set and no Chromium; returns
    what it raised (caught here, whatever it is: a skip left to propagate would only skip this test)."""
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("VIEWER_CHROMIUM", "/nonexistent/chromium")
    spec = importlib.util.spec_from_file_location("browser_conftest_under_test", ROOT / "tests/browser/conftest.py")
    assert spec is not None and spec.loader is not None
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except BaseException as exc:  # noqa: BLE001 - pytest's outcomes are BaseExceptions
        return exc
    return None


@pytest.mark.parametrize("ci", ["true", "TRUE"])
def test_ci_fails_the_browser_tests_without_chromium(ci: str, monkeypatch: pytest.MonkeyPatch) -> None:
    raised = import_browser_conftest(monkeypatch, ci)
    assert type(raised) is pytest.fail.Exception, repr(raised)  # a failure, not pytest.skip's outcome
    assert str(raised) == "CI must run the browser tests: Debian's chromium is not installed (apt-get install chromium)"
    assert not raised.pytrace  # one line, no traceback


def test_elsewhere_the_conftest_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    raised = import_browser_conftest(monkeypatch, "false")
    assert type(raised) is pytest.skip.Exception, repr(raised)
    assert "chromium is not installed" in str(raised) and raised.allow_module_level


@pytest.mark.parametrize("ci", [None])
def test_elsewhere_they_are_skipped(ci: str | None) -> None:
    r = collect_browser_tests(ci)
    assert "CI must run" not in r.stdout and "error" not in r.stdout.lower(), r.stdout[-2000:]
    assert r.returncode == 5, r.stdout[-2000:]  # skipped: nothing collected
    assert "the browser tests (tests/browser) did not run: Debian's chromium is not installed" in r.stdout  # said
