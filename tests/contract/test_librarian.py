"""The Librarian protocol alike on every backend: SQLite (embedded) and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from provgraph.errors import InputError, NotFound
from provgraph.librarian import NewRecord, SqliteLibrarian
from provgraph.librarian.base import Librarian
from tests.unit.librarian.test_sqlite_librarian import DOC, PAGE1, PAGE2, tree


@pytest.fixture(params=["sqlite", "postgres"])
def lib(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Librarian]:
    if request.param == "sqlite":
        opened: Librarian = SqliteLibrarian(tmp_path / "lib")
        yield opened
        opened.close()
        return
    from provgraph.librarian.postgres import PgLibrarian
    from provgraph.store.postgres import pg_connect

    url, schema = request.getfixturevalue("pg_url"), f"t_{uuid.uuid4().hex[:12]}"
    conn = pg_connect(url, "tests")
    conn.execute(f"CREATE SCHEMA {schema}")
    pg = PgLibrarian(url, schema, name="tests/librarian")
    yield pg
    pg.close()
    conn.execute(f"DROP SCHEMA {schema} CASCADE")
    conn.close()


def _blobs(lib: Librarian) -> int | None:
    """How many blobs a PostgreSQL librarian holds (None for SQLite, whose blob files its own tests count)."""
    query = getattr(lib, "_q", None)
    return None if query is None else int(query("SELECT count(*) AS n FROM {s}.lib_blobs")[0]["n"])


def test_records_round_trip_in_tree_order(lib: Librarian) -> None:
    lib.add(tree())
    doc = lib.get(DOC)
    assert (doc.kind, doc.title, doc.metadata, doc.tags, doc.mime_type) == \
        ("document", "Curie notes", {"source": "test"}, ("physics",), "application/pdf")
    assert lib.text("urn:page:2") == PAGE2 and lib.content("urn:chunk:1a") == PAGE1[:16].encode()
    assert [r.id for r in lib.children(DOC)] == ["urn:page:1", "urn:page:2"]
    assert [r.id for r in lib.children("urn:page:1")] == ["urn:chunk:1a", "urn:chunk:1b"]
    assert [r.id for r in lib.list(kind="chunk", parent="urn:page:1")] == ["urn:chunk:1a", "urn:chunk:1b"]
    assert [r.id for r in lib.list(kind="document")] == [DOC] and len(lib.list()) == 6
    got = lib.texts(["urn:chunk:2a", "urn:page:1", "urn:chunk:2a"])
    assert list(got.items()) == [("urn:chunk:2a", PAGE2), ("urn:page:1", PAGE1)]
    with pytest.raises(NotFound, match="^librarian records not found: urn:nope:1$"):
        lib.texts(["urn:page:1", "urn:nope:1"])
    assert lib.texts(["urn:nope:1"], missing_ok=True) == {}
    for call in (lib.get, lib.content, lib.text, lib.children, lib.remove):
        with pytest.raises(NotFound, match="^librarian record not found: urn:doc:missing$"):
            call("urn:doc:missing")
    assert lib.exists("urn:chunk:2a") and not lib.exists("urn:chunk:zz") and lib.damaged_blobs() == []


def test_add_is_idempotent_and_a_changed_text_drops_stale_descendants(lib: Librarian) -> None:
    lib.add(tree())
    first = {r.id: r for r in lib.list()}
    lib.add(tree())
    assert {r.id: r for r in lib.list()} == first
    new_text = "Pierre Curie studied crystals.\n\nRadium came next."
    new = tree(doc_text=new_text)
    new[3] = NewRecord(id="urn:chunk:1c", kind="chunk", content=new_text[:6], parent_id="urn:page:1", number=0,
                       offset=0, length=6)
    lib.add(new[:4])
    assert [r.id for r in lib.children("urn:page:1")] == ["urn:chunk:1c"] and lib.children("urn:page:2") == []
    assert lib.text("urn:page:1") == "Pierre Curie studied crystals."


def test_remove_cascades_and_unused_blobs_go(lib: Librarian) -> None:
    lib.add(tree())
    lib.add([NewRecord(id="urn:a:1", kind="answer", content=PAGE2)])  # shares a blob with page 2
    assert lib.remove(DOC) == 6 and not lib.exists("urn:chunk:1a")
    assert lib.text("urn:a:1") == PAGE2
    assert _blobs(lib) in (None, 1)
    assert lib.remove("urn:a:1") == 1
    assert _blobs(lib) in (None, 0)


def test_invalid_batches_write_nothing(lib: Librarian) -> None:
    orphan = NewRecord(id="urn:chunk:x", kind="chunk", content="x", parent_id="urn:page:9", number=0, offset=0, length=1)
    with pytest.raises(InputError, match="^record urn:chunk:x: parent urn:page:9 does not exist$"):
        lib.add([*tree(), orphan])
    with pytest.raises(InputError, match=r"^record urn:page:1 appears twice in one add\(\)$"):
        lib.add([*tree(), tree()[1]])
    assert lib.list() == []
    lib.add(tree())
    wrong = NewRecord(id="urn:chunk:w", kind="chunk", content="Radium", parent_id="urn:page:1", number=5, offset=0,
                      length=6)
    with pytest.raises(InputError, match="its text is not the text of urn:page:1 at offset 0, length 6"):
        lib.add([wrong])
    changed = tree(doc_text="Marie Curie discovered polonium.\n\nRadium came later.", title="v2")[0]
    chunk = NewRecord(id="urn:chunk:1z", kind="chunk", content="Marie", parent_id="urn:page:1", number=9, offset=0,
                      length=5)
    with pytest.raises(InputError, match="outdated by a changed ancestor"):
        lib.add([changed, chunk])
    assert lib.get(DOC).title == "Curie notes" and len(lib.list()) == 6


def test_completion_records_follow_the_content(lib: Librarian) -> None:
    lib.add(tree())
    assert not lib.is_complete(DOC) and lib.complete_documents() == set()
    lib.mark_complete([DOC, "urn:page:1", "urn:doc:none"])  # only documents get one
    assert lib.is_complete(DOC) and lib.complete_documents() == {DOC}
    lib.add([NewRecord(id=DOC, kind="document", content=b"other bytes", text="other")])
    assert not lib.is_complete(DOC)  # new content: the old completion record no longer counts
    lib.mark_complete([DOC])
    lib.clear_complete(DOC)
    assert lib.complete_documents() == set()
    lib.mark_complete([DOC])
    lib.remove(DOC)
    assert lib.complete_documents() == set()


def test_generations_move_with_writes(lib: Librarian) -> None:
    before = (lib.generation, lib.content_generation)
    lib.add([NewRecord(id="urn:a:1", kind="answer", content="an answer")])
    answered = (lib.generation, lib.content_generation)
    assert answered[0] > before[0] and answered[1] == before[1]  # answers are never indexed
    lib.add(tree())
    assert lib.content_generation > answered[1]
