"""``retrieve`` over the API: the client's result is the one the library gives on the same collection."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph import Provgraph
from provgraph.api.tokens import TokenStore
from provgraph.client import Client
from provgraph.errors import InputError
from provgraph.retrieval.retrieve import from_json, to_json
from tests.corpus_fixture import COLLECTION
from tests.server.live import live_server

pytestmark = pytest.mark.server
QUESTION = "Who discovered polonium?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, _corpus_home: Path) -> Iterator[tuple[str, str, Path]]:
    home, local = tmp_path_factory.mktemp("retrieve") / "home", tmp_path_factory.mktemp("retrieve") / "local"
    shutil.copytree(_corpus_home, home)
    shutil.copytree(_corpus_home, local)  # the same collection, for the library (the server holds its store)
    _, token = TokenStore(home).create("default")
    with live_server(home) as server:
        yield server.url, token, local


@pytest.mark.parametrize("mode", ["graph", "lexical"])
def test_retrieve_round_trips_through_the_client(served, mode: str) -> None:
    url, token, home = served
    with Client(url, token, collection=COLLECTION) as client:
        remote = client.retrieve(QUESTION, k=4, mode=mode)
    with Provgraph(collection=COLLECTION, home=home, llm="none") as pg:
        local = pg.retrieve(QUESTION, k=4, mode=mode)
    assert remote == local and from_json(to_json(remote)) == remote
    assert [p.rank for p in remote.passages] == [1, 2, 3, 4] and remote.relevant
    first = remote.passages[0]
    assert first.document and first.offset is not None and "polonium" in first.text.lower()
    assert remote.facts and all(f.chunks for f in remote.facts)
    if mode == "graph":
        assert first.graph_score is not None and any(s["linked_by"] == "exact" for s in remote.seeds)


def test_an_unknown_mode_is_a_one_line_input_error(served) -> None:
    url, token, _ = served
    with Client(url, token, collection=COLLECTION) as client, pytest.raises(InputError):
        client.retrieve(QUESTION, mode="sideways")
