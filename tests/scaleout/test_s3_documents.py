"""``PROVGRAPH_BLOB_URL=s3://bucket/prefix``: documents' bytes in S3 (a real SeaweedFS gateway), content-addressed, the
rest in PostgreSQL; answers and traces read their sources as before, and removing a document deletes its bytes."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import pytest

from provgraph.config import load_settings
from provgraph.runtime import Runtime
from provgraph.store.pg_placement import schema_of
from tests.cli_runner import run
from tests.corpus_fixture import CORPUS

DOCS = ("polonium_and_radium.md", "becquerel_rays.txt", "rutherford_radiation.pdf")
SENTENCE = "They named it polonium after Poland, the homeland of Marie Curie."


def _objects(env: dict[str, str], prefix: str) -> dict[str, bytes]:
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"],
                      aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
    listed = s3.list_objects_v2(Bucket="provgraph", Prefix=prefix).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket="provgraph", Key=o["Key"])["Body"].read() for o in listed}


def _row_sizes(pg_url: str, schema: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(pg_url) as conn:
        return dict(conn.execute(f"SELECT digest, length(data) FROM {schema}.lib_blobs").fetchall())


@pytest.fixture
def in_s3(pg_url: str, s3_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A fresh collection with the store in PostgreSQL and documents under a fresh prefix of the bucket."""
    prefix = f"t-{uuid.uuid4().hex[:8]}"
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PROVGRAPH_STORE_URL", pg_url)
    monkeypatch.setenv("PROVGRAPH_BLOB_URL", f"s3://provgraph/{prefix}")
    return f"s3-{prefix}", prefix


def test_documents_live_in_s3_and_answer_as_before(in_s3: tuple[str, str], pg_url: str,
                                                    s3_env: dict[str, str]) -> None:
    collection, prefix = in_s3
    loaded = run("load", *(str(CORPUS / d) for d in DOCS), "-C", collection)
    assert loaded.code == 0, loaded.err
    schema = schema_of("default", collection)
    digests = {hashlib.sha256((CORPUS / d).read_bytes()).hexdigest(): d for d in DOCS}
    objects = _objects(s3_env, prefix + "/")
    assert {k.rsplit("/", 1)[1]: v for k, v in objects.items()} == \
        {h: (CORPUS / d).read_bytes() for h, d in digests.items()}  # each document's bytes, under their SHA-256
    assert set(objects) == {f"{prefix}/{schema}/{h}" for h in digests}
    sizes = _row_sizes(pg_url, schema)
    assert {h: sizes[h] for h in digests} == dict.fromkeys(digests, 0)  # not in the database
    assert sum(1 for n in sizes.values() if n) > 10  # pages, sections and chunks are

    with Runtime(load_settings(collection=collection), create=False) as rt:
        assert rt.librarian.content("urn:doc:rutherford_radiation.pdf") == (CORPUS / DOCS[2]).read_bytes()
        assert SENTENCE in rt.librarian.text("urn:doc:polonium_and_radium.md")
    asked = run("document-rag", "-q", "Why is polonium named after Poland?", "-C", collection, "--format", "json",
                "--llm", "none")
    assert asked.code == 0, asked.err
    final: dict[str, Any] = [json.loads(line) for line in asked.out.splitlines()][-1]
    assert SENTENCE.rstrip(".") in final["answer"]  # cited [1]: its source, traced back to the sentence
    source = final["sources"][0]
    assert (source["document"], source["marker"]) == ("urn:doc:polonium_and_radium.md", "[1]")
    shown = run("traces", "show", final["session_id"], "--show-provenance", "-C", collection)
    assert shown.code == 0 and 'Section "The discovery of polonium"' in shown.out
    with Runtime(load_settings(collection=collection), create=False) as rt:
        assert SENTENCE in rt.librarian.text(source["chunk"])
    assert "consistent" in run("check", "-C", collection).out

    removed = run("documents", "remove", "polonium_and_radium.md", "-C", collection)
    assert removed.code == 0, removed.err
    left = {k.rsplit("/", 1)[1] for k in _objects(s3_env, prefix + "/")}
    assert left == {h for h, d in digests.items() if d != "polonium_and_radium.md"}
    assert "consistent" in run("check", "-C", collection).out
