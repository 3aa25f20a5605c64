"""The examples in the docstrings of ``src/provgraph`` run as doctests in ``make test`` (an example that no
longer holds fails here, as a wrong sentence of the docs would not)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
MODULES = sorted(".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
                 for p in (SRC / "provgraph").rglob("*.py") if ">>> " in p.read_text(encoding="utf-8"))


def test_the_modules_with_examples_are_found() -> None:
    assert len(MODULES) >= 25 and "provgraph.rdf.terms" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name} has '>>> ' but no doctest was found in it"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} example(s) in {name} failed (see above)"
