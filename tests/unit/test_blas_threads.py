"""provgraph keeps OpenBLAS to one thread unless the user chose otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHOW = "import os, provgraph, numpy; print(os.environ.get('OPENBLAS_NUM_THREADS'))"


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("4", "4")])
def test_openblas_threads_default_to_one_and_a_users_choice_stays(given: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    out = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == expected
