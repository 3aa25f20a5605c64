"""The PostgreSQL store's own guarantees: collision checks, atomic batches, concurrent writers, errors."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator

import pytest

from provgraph.errors import NotFound, StoreError, StoreUnavailable
from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, TG
from provgraph.store.pg_terms import term_id
from provgraph.store.postgres import PostgresStore, drop_pg_collection, list_pg_collections

P = Iri("urn:t:p")


@pytest.fixture
def collection(pg_url: str) -> Iterator[str]:
    name = f"pg-{uuid.uuid4().hex[:12]}"
    yield name
    try:
        drop_pg_collection(pg_url, "tests", name)
    except NotFound:
        pass


def test_a_colliding_term_id_fails_the_whole_batch(pg_url: str, collection: str) -> None:
    store = PostgresStore(pg_url, "tests", collection)
    victim = Literal("the term whose id another term already holds")
    store._conn().execute(f"INSERT INTO {store.schema}.terms VALUES (%s, 3, 'another term', NULL, NULL, NULL, NULL)",
                          (term_id(victim),))
    batch = [Quad(Iri("urn:t:a"), P, Iri("urn:t:b")), Quad(Iri("urn:t:a"), P, victim)]
    with pytest.raises(StoreError, match="two different terms share a 64-bit dictionary id; nothing was written"):
        store.add(batch)
    assert len(store) == 0
    assert store._fetch("SELECT count(*) FROM {s}.terms WHERE value IN ('urn:t:a', 'urn:t:b')")[0][0] == 0
    store.close()


def test_concurrent_writers_of_the_same_facts_neither_deadlock_nor_double(pg_url: str, collection: str) -> None:
    facts = [TripleTerm(Iri(f"urn:t:e{i}"), P, Iri(f"urn:t:e{i + 1}")) for i in range(300)]
    quads = [q for f in facts for q in (Quad(f.s, f.p, f.o), Quad(Iri(f"urn:t:sg{hash(f) % 7}"), TG.contains, f,
                                                                   GRAPH_SOURCE))]
    stores = [PostgresStore(pg_url, "tests", collection) for _ in range(4)]
    errors: list[BaseException] = []

    def write(store: PostgresStore, seed: int) -> None:
        mine = list(quads)
        random.Random(seed).shuffle(mine)  # each writer sends the same facts in another order
        try:
            for i in range(0, len(mine), 50):
                store.add(mine[i:i + 50])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(stores[0]) == len(set(quads)) == 600
    assert set(stores[1].match(p=TG.contains, g=GRAPH_SOURCE)) == {q for q in quads if q.g == GRAPH_SOURCE}
    for s in stores:
        s.close()


def test_two_stores_on_one_collection_see_each_others_writes(pg_url: str, collection: str) -> None:
    first, second = PostgresStore(pg_url, "tests", collection), PostgresStore(pg_url, "tests", collection)
    seen = second.knowledge_generation
    first.add([Quad(Iri("urn:t:a"), P, Literal("x"))])
    assert second.knowledge_generation > seen  # caches in another process follow the write
    assert list(second.match(Iri("urn:t:a"))) == [Quad(Iri("urn:t:a"), P, Literal("x"))]
    assert ("tests", collection) in list_pg_collections(pg_url, "tests")
    first.close()
    second.close()


def test_a_collection_that_must_exist_and_an_unreachable_server(pg_url: str, collection: str) -> None:
    with pytest.raises(NotFound, match=f"collection tests/{collection} does not exist"):
        PostgresStore(pg_url, "tests", collection, create=False)
    port = int(pg_url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(StoreUnavailable, match="PostgreSQL is unreachable") as err:
        PostgresStore(pg_url.replace(f":{port}/", ":1/"), "tests", collection)
    assert "\n" not in str(err.value)
