"""``provgraph import`` into a collection that already holds data: additive and atomic."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli_runner import run

OLD = '<urn:x:a> <urn:x:p> <urn:x:b> <urn:g:1> .\n<urn:x:a> <urn:x:p> "kept" .\n'
NEW = '<urn:x:c> <urn:x:p> <urn:x:d> <urn:g:2> .\n<urn:x:t> <urn:x:q> <<( <urn:x:a> <urn:x:p> <urn:x:b> )>> .\n'


def exported(collection: str) -> set[str]:
    r = run("export", "-C", collection)
    assert r.code == 0, r.err
    return set(r.out.splitlines())


def test_import_adds_to_what_is_there(tmp_path: Path) -> None:
    first, second = tmp_path / "old.nq", tmp_path / "new.nq"
    first.write_text(OLD, encoding="utf-8")
    second.write_text(NEW, encoding="utf-8")
    assert run("import", str(first), "-C", "c").code == 0
    before = exported("c")
    assert len(before) == 2
    r = run("import", str(second), "-C", "c")
    assert r.code == 0 and r.out.startswith("imported 2 quads into ")
    after = exported("c")
    assert before < after and len(after) == 4
    assert run("import", str(second), "-C", "c").code == 0  # again: idempotent
    assert exported("c") == after


def test_a_bad_line_imports_nothing_and_keeps_what_was_there(tmp_path: Path) -> None:
    good, bad = tmp_path / "old.nq", tmp_path / "bad.nq"
    good.write_text(OLD, encoding="utf-8")
    bad.write_text(NEW + "<urn:x:e> <urn:x:p> .\n", encoding="utf-8")
    assert run("import", str(good), "-C", "c").code == 0
    before = exported("c")
    r = run("import", str(bad), "-C", "c")
    assert r.code != 0 and r.out == ""
    assert r.err.startswith(f"error: {bad}: ") and "line 3" in r.err and r.err.count("\n") == 1
    assert exported("c") == before  # neither wiped nor half-imported


def test_only_regular_files_are_imported(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.nq"
    os.mkfifo(fifo)
    link = tmp_path / "zeros.nq"
    link.symlink_to("/dev/zero")
    for path, kind in ((fifo, "a FIFO (named pipe)"), (link, "a character device (through a symbolic link)"),
                       (tmp_path, "a directory")):
        r = run("import", str(path), "-C", "c")
        assert (r.code, r.err) == (2, f"error: {path}: is {kind}, not a regular file; only regular files are imported\n")
    r = run("import", str(tmp_path / "missing.nq"), "-C", "c")
    assert (r.code, r.err) == (3, f"error: {tmp_path / 'missing.nq'}: no such file\n")
