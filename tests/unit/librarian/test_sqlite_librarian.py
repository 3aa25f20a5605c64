from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from provgraph.errors import InputError, NotFound, StoreError
from provgraph.librarian import NewRecord, SqliteLibrarian
from provgraph.librarian.blobs import BlobStore

DOC = "urn:doc:curie"
PDF_BYTES = b"%PDF-1.7 pretend pdf bytes"
DOC_TEXT = "Marie Curie discovered polonium.\n\nRadium came next."
PAGE1, PAGE2 = DOC_TEXT[:32], DOC_TEXT[34:]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree(doc_text: str = DOC_TEXT, title: str = "Curie notes") -> list[NewRecord]:
    """A document, two pages and three chunks, with exact offsets."""
    p1, p2 = doc_text.split("\n\n")
    return [
        NewRecord(id=DOC, kind="document", content=PDF_BYTES, text=doc_text, title=title,
                  mime_type="application/pdf", metadata={"source": "test"}, tags=["physics"]),
        NewRecord(id="urn:page:1", kind="page", content=p1, parent_id=DOC, number=1, offset=0, length=len(p1),
                  title="Page 1"),
        NewRecord(id="urn:page:2", kind="page", content=p2, parent_id=DOC, number=2, offset=len(p1) + 2,
                  length=len(p2), title="Page 2"),
        NewRecord(id="urn:chunk:1b", kind="chunk", content=p1[12:], parent_id="urn:page:1", number=1, offset=12,
                  length=len(p1) - 12),
        NewRecord(id="urn:chunk:1a", kind="chunk", content=p1[:16], parent_id="urn:page:1", number=0, offset=0,
                  length=16),
        NewRecord(id="urn:chunk:2a", kind="chunk", content=p2, parent_id="urn:page:2", number=0, offset=0,
                  length=len(p2)),
    ]  # fmt: skip


def blob_files(root: Path) -> set[str]:
    return {p.parent.name + p.name for p in (root / "blobs").rglob("*") if p.is_file()}


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[SqliteLibrarian]:
    librarian = SqliteLibrarian(tmp_path / "lib", inline_limit=0)  # every blob a file: file behaviour under test
    yield librarian
    librarian.close()


def test_round_trip(lib: SqliteLibrarian) -> None:
    before = datetime.now(UTC)
    lib.add(tree())
    doc = lib.get(DOC)
    assert (doc.kind, doc.parent_id, doc.title, doc.mime_type) == ("document", None, "Curie notes", "application/pdf")
    assert (doc.metadata, doc.tags, doc.size) == ({"source": "test"}, ("physics",), len(PDF_BYTES))
    assert doc.content_hash == sha(PDF_BYTES)
    assert before <= doc.created <= datetime.now(UTC) and doc.created.tzinfo is not None
    assert (doc.number, doc.offset, doc.length) == (None, None, None)
    assert lib.content(DOC) == PDF_BYTES
    assert lib.text(DOC) == DOC_TEXT
    page = lib.get("urn:page:2")
    assert (page.kind, page.parent_id, page.number, page.offset, page.length) == ("page", DOC, 2, 34, len(PAGE2))
    assert lib.text("urn:page:2") == PAGE2 == DOC_TEXT[page.offset : page.offset + page.length]
    assert lib.content("urn:chunk:1a") == PAGE1[:16].encode()
    assert lib.exists("urn:chunk:2a") and not lib.exists("urn:chunk:zz")


def test_children_are_ordered_by_number(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    assert [r.id for r in lib.children(DOC)] == ["urn:page:1", "urn:page:2"]
    assert [r.id for r in lib.children("urn:page:1")] == ["urn:chunk:1a", "urn:chunk:1b"]
    assert lib.children("urn:chunk:1a") == []


def test_list_by_kind_and_parent(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    lib.add([NewRecord(id="urn:trustgraph:synthesis:s1", kind="answer", content="It was radium.")])
    assert [r.id for r in lib.list(kind="document")] == [DOC]
    assert [r.id for r in lib.list(kind="answer")] == ["urn:trustgraph:synthesis:s1"]
    assert len(lib.list()) == 7
    assert [r.id for r in lib.list(kind="chunk", parent="urn:page:1")] == ["urn:chunk:1a", "urn:chunk:1b"]
    with pytest.raises(InputError, match=r"^unknown record kind 'pages'; use one of answer, chunk, document"):
        lib.list(kind="pages")  # type: ignore[arg-type]


def test_texts_in_one_call(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    got = lib.texts(["urn:chunk:2a", "urn:page:1", "urn:chunk:2a"])
    assert got == {"urn:chunk:2a": PAGE2, "urn:page:1": PAGE1}
    assert list(got) == ["urn:chunk:2a", "urn:page:1"]
    with pytest.raises(NotFound) as err:
        lib.texts(["urn:page:1", "urn:nope:1", "urn:nope:2"])
    assert str(err.value) == "librarian records not found: urn:nope:1, urn:nope:2"
    assert lib.texts(["urn:nope:1", "urn:page:1"], missing_ok=True) == {"urn:page:1": PAGE1}
    assert lib.texts([]) == {}


def test_texts_of_many_records(lib: SqliteLibrarian) -> None:
    lib.add([NewRecord(id=f"urn:a:{i}", kind="answer", content=f"answer {i}") for i in range(1200)])
    got = lib.texts(f"urn:a:{i}" for i in range(1200))
    assert len(got) == 1200 and got["urn:a:1199"] == "answer 1199"


def test_not_found_names_the_id(lib: SqliteLibrarian) -> None:
    for call in (lib.get, lib.content, lib.text, lib.children, lib.remove):
        with pytest.raises(NotFound) as err:
            call("urn:doc:missing")
        assert str(err.value) == "librarian record not found: urn:doc:missing"


def test_add_is_idempotent(lib: SqliteLibrarian, tmp_path: Path) -> None:
    lib.add(tree())
    first = {r.id: r for r in lib.list()}
    files = blob_files(tmp_path / "lib")
    lib.add(tree())
    assert {r.id: r for r in lib.list()} == first
    assert blob_files(tmp_path / "lib") == files


def test_replace_keeps_children_when_only_metadata_changes(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    lib.add(tree(title="Renamed")[:1])
    assert lib.get(DOC).title == "Renamed"
    assert len(lib.list()) == 6


def test_replacing_changed_text_drops_stale_descendants(lib: SqliteLibrarian, tmp_path: Path) -> None:
    lib.add(tree())
    new_text = "Pierre Curie studied crystals.\n\nRadium came next."
    new = tree(doc_text=new_text)
    new[3] = NewRecord(id="urn:chunk:1c", kind="chunk", content=new_text[:6], parent_id="urn:page:1", number=0,
                       offset=0, length=6)  # fmt: skip
    lib.add(new[:4])  # the changed document, both pages, one new chunk on page 1
    assert [r.id for r in lib.children("urn:page:1")] == ["urn:chunk:1c"]
    assert lib.children("urn:page:2") == []  # every descendant of a changed record not re-added goes
    assert lib.text("urn:page:1") == "Pierre Curie studied crystals."
    old_only = sha(PAGE1[:16].encode())
    assert old_only not in blob_files(tmp_path / "lib")


def test_remove_cascades_and_deletes_unused_blobs(lib: SqliteLibrarian, tmp_path: Path) -> None:
    lib.add(tree())
    lib.add([NewRecord(id="urn:a:1", kind="answer", content=PAGE2)])  # shares a blob with page 2
    assert lib.remove(DOC) == 6
    for rid in ("urn:doc:curie", "urn:page:1", "urn:page:2", "urn:chunk:1a", "urn:chunk:1b", "urn:chunk:2a"):
        assert not lib.exists(rid)
    assert blob_files(tmp_path / "lib") == {sha(PAGE2.encode())}
    assert lib.text("urn:a:1") == PAGE2
    assert lib.remove("urn:a:1") == 1
    assert blob_files(tmp_path / "lib") == set()


def test_remove_a_page_keeps_the_document(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    assert lib.remove("urn:page:1") == 3
    assert sorted(r.id for r in lib.list()) == ["urn:chunk:2a", DOC, "urn:page:2"]


def test_blobs_are_content_addressed_and_deduplicated(lib: SqliteLibrarian, tmp_path: Path) -> None:
    same = "identical text"
    lib.add([NewRecord(id=f"urn:a:{i}", kind="answer", content=same) for i in range(3)])
    digest = sha(same.encode())
    assert (tmp_path / "lib" / "blobs" / digest[:2] / digest[2:]).read_bytes() == same.encode()
    assert blob_files(tmp_path / "lib") == {digest}
    lib.remove("urn:a:0")
    assert blob_files(tmp_path / "lib") == {digest}
    lib.remove("urn:a:1")
    lib.remove("urn:a:2")
    assert blob_files(tmp_path / "lib") == set()
    assert not (tmp_path / "lib" / "blobs" / digest[:2]).exists()


def test_text_and_content_share_a_blob_when_equal(lib: SqliteLibrarian, tmp_path: Path) -> None:
    lib.add([NewRecord(id="urn:doc:t", kind="document", content="plain text doc")])
    assert blob_files(tmp_path / "lib") == {sha(b"plain text doc")}


def test_add_is_all_or_nothing_when_sqlite_fails_mid_batch(lib: SqliteLibrarian, tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "lib" / "librarian.sqlite3")
    db.execute(
        "CREATE TRIGGER fail_mid_batch BEFORE INSERT ON records WHEN NEW.id = 'urn:chunk:1b'"
        " BEGIN SELECT RAISE(ABORT, 'forced failure'); END"
    )
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"^librarian: add failed in .*: forced failure$"):
        lib.add(tree())
    assert lib.list() == []
    assert blob_files(tmp_path / "lib") == set()


def test_add_is_all_or_nothing_when_a_blob_write_fails(
    lib: SqliteLibrarian, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib.add([NewRecord(id="urn:a:keep", kind="answer", content="kept")])
    original = BlobStore.put
    calls = {"n": 0}

    def flaky_put(self: BlobStore, data: bytes, digest: str | None = None) -> tuple[str, bool]:
        calls["n"] += 1
        if calls["n"] == 4:
            raise StoreError("librarian: cannot write blob (disk full)")
        return original(self, data, digest)

    monkeypatch.setattr(BlobStore, "put", flaky_put)
    with pytest.raises(StoreError, match=r"disk full"):
        lib.add(tree())
    assert [r.id for r in lib.list()] == ["urn:a:keep"]
    assert blob_files(tmp_path / "lib") == {sha(b"kept")}


def test_invalid_batches_write_nothing(lib: SqliteLibrarian) -> None:
    orphan = NewRecord(id="urn:chunk:x", kind="chunk", content="x", parent_id="urn:page:9", number=0, offset=0,
                       length=1)  # fmt: skip
    with pytest.raises(InputError) as err:
        lib.add([*tree(), orphan])
    assert str(err.value) == "record urn:chunk:x: parent urn:page:9 does not exist"
    with pytest.raises(InputError, match=r"^record urn:page:1 appears twice in one add\(\)$"):
        lib.add([*tree(), tree()[1]])
    assert lib.list() == []


def test_part_text_must_be_the_parents_slice(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    wrong = NewRecord(id="urn:chunk:w", kind="chunk", content="Radium", parent_id="urn:page:1", number=5, offset=0,
                      length=6)  # fmt: skip
    with pytest.raises(InputError) as err:
        lib.add([wrong])
    assert str(err.value) == "record urn:chunk:w: its text is not the text of urn:page:1 at offset 0, length 6"


def test_parent_kind_rules(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    page_under_page = NewRecord(id="urn:page:x", kind="page", content="M", parent_id="urn:page:1", number=1,
                                offset=0, length=1)  # fmt: skip
    with pytest.raises(InputError, match=r"^record urn:page:x: a page cannot be under a page \(urn:page:1\)$"):
        lib.add([page_under_page])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"id": "", "kind": "answer"}, "a librarian record needs a non-empty id"),
        ({"id": "r", "kind": "blob"},
         "record r: unknown kind 'blob'; use one of answer, chunk, document, page, section"),
        ({"id": "r", "kind": "document", "parent_id": "p"}, "record r: a document cannot have a parent"),
        ({"id": "r", "kind": "chunk"}, "record r: a chunk needs a parent_id"),
        ({"id": "r", "kind": "chunk", "parent_id": "p"}, "record r: a chunk needs number, offset and length"),
        ({"id": "r", "kind": "answer", "offset": -1}, "record r: offset must be an integer >= 0, got -1"),
        ({"id": "r", "kind": "answer", "metadata": {"k": 1}}, "record r: metadata keys and values must be strings"),
        ({"id": "r", "kind": "answer", "created": datetime(2024, 1, 1)},
         "record r: created must be timezone-aware (UTC)"),
    ],
)  # fmt: skip
def test_new_record_validation(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as err:
        NewRecord(content=b"x", **fields)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_binary_content_needs_explicit_text() -> None:
    with pytest.raises(InputError, match=r"^record r: content is not UTF-8 text; pass its text explicitly$"):
        NewRecord(id="r", kind="document", content=b"\xff\xfe")


def test_persists_across_reopen(tmp_path: Path) -> None:
    created = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    with SqliteLibrarian(tmp_path / "lib") as first:
        first.add([*tree(), NewRecord(id="urn:a:1", kind="answer", content="42", created=created)])
        stored = first.list()
    with SqliteLibrarian(tmp_path / "lib") as second:
        assert second.list() == stored
        assert second.get("urn:a:1").created == created
        assert second.text("urn:chunk:1b") == PAGE1[12:]
        assert second.content(DOC) == PDF_BYTES


def test_wal_mode_and_layout(lib: SqliteLibrarian, tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "lib" / "librarian.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_closed_librarian_refuses_work(tmp_path: Path) -> None:
    lib = SqliteLibrarian(tmp_path / "lib")
    lib.close()
    lib.close()
    with pytest.raises(StoreError, match=r"^librarian: .* is closed$"):
        lib.get(DOC)


def test_damaged_blob_is_reported_not_served(lib: SqliteLibrarian, tmp_path: Path) -> None:
    lib.add([NewRecord(id="urn:a:1", kind="answer", content="original")])
    digest = sha(b"original")
    (tmp_path / "lib" / "blobs" / digest[:2] / digest[2:]).write_bytes(b"tampered")
    with pytest.raises(StoreError, match=r"is damaged \(its SHA-256 does not match its name\)$"):
        lib.text("urn:a:1")


def test_child_of_an_outdated_parent_is_refused(lib: SqliteLibrarian) -> None:
    lib.add(tree())
    changed_doc = tree(doc_text="Marie Curie discovered polonium.\n\nRadium came later.", title="v2")[0]
    chunk = NewRecord(id="urn:chunk:1z", kind="chunk", content="Marie", parent_id="urn:page:1", number=9, offset=0,
                      length=5)  # fmt: skip
    with pytest.raises(InputError) as err:
        lib.add([changed_doc, chunk])
    assert str(err.value) == (
        "record urn:chunk:1z: its parent urn:page:1 is outdated by a changed ancestor; add the parent again in the"
        " same batch"
    )
    assert lib.get(DOC).title == "Curie notes" and len(lib.list()) == 6


def test_small_blobs_live_in_sqlite_and_roll_back_with_the_batch(tmp_path: Path) -> None:
    lib = SqliteLibrarian(tmp_path / "small", inline_limit=100)
    lib.add(tree())
    big = "x" * 101
    lib.add([NewRecord(id="urn:a:big", kind="answer", content=big)])
    assert blob_files(tmp_path / "small") == {sha(big.encode())}  # only the large one is a file
    for rec in tree():  # small texts read back from the table
        assert lib.text(rec.id) == rec.text
    with pytest.raises(InputError):
        lib.add([NewRecord(id="urn:a:new", kind="answer", content="fresh"),
                 NewRecord(id="urn:c:bad", kind="chunk", content="zz", parent_id=DOC, number=1, offset=0, length=2)])
    assert not lib.exists("urn:a:new")
    db = sqlite3.connect(tmp_path / "small" / "librarian.sqlite3")
    assert db.execute("SELECT COUNT(*) FROM blobs WHERE digest = ?", (sha(b"fresh"),)).fetchone()[0] == 0
    lib.remove(DOC)
    lib.remove("urn:a:big")
    assert db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 0
    assert blob_files(tmp_path / "small") == set()
    lib.close()
