"""The scale-out tests set their own store, queue and replica URLs, the embedded store being their reference: in a
suite-on-PostgreSQL run (tests/services.py) they start without the suite's."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_urls(clean_environ: object, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("PROVGRAPH_STORE_URL", "PROVGRAPH_REPLICA_URL"):
        monkeypatch.delenv(key, raising=False)
