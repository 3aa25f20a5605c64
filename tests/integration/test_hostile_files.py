"""``load`` reads only regular files, boundedly: devices, FIFOs and sockets are refused by what they are."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from provgraph.errors import InputError
from provgraph.ingest.decoders import read_file
from tests.cli_runner import run

pytestmark = pytest.mark.fault  # part of the fault-injection suite (`pytest -m fault`) too

REFUSED = "not a regular file; only regular files are loaded"


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)  # nobody ever writes: opening it for reading would block forever
    return path


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = _fifo(tmp_path)
    with pytest.raises(InputError) as err:
        read_file(path)
    assert str(err.value) == f"{path}: is a FIFO (named pipe), {REFUSED}"


def test_a_symlink_to_dev_zero_is_refused_by_kind_not_size(tmp_path: Path) -> None:
    link = tmp_path / "zeros.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError) as err:
        read_file(link, max_bytes=1 << 40)
    assert str(err.value) == f"{link}: is a character device (through a symbolic link), {REFUSED}"


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(InputError) as err:
            read_file(path)
    assert str(err.value) == f"{path}: is a socket, {REFUSED}"


def test_read_is_bounded_even_when_the_size_lies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "grows.txt"
    path.write_bytes(b"x" * 100)
    real_fstat = os.fstat

    class Small:  # a file that reports 5 bytes but holds 100 (it grew after stat)
        def __init__(self, st: os.stat_result) -> None:
            self.st_mode, self.st_size = st.st_mode, 5

    with monkeypatch.context() as m, pytest.raises(InputError, match=r"file too large \(11 bytes; the limit is 10\)"):
        m.setattr(os, "fstat", lambda fd: Small(real_fstat(fd)))  # only here: removing tmp_path needs the real one
        read_file(path, max_bytes=10)


def test_load_reports_each_special_file_in_one_line_and_loads_the_rest(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path)
    link = tmp_path / "zeros.txt"
    link.symlink_to("/dev/zero")
    good = tmp_path / "good.txt"
    good.write_text("Marie Curie discovered radium.", encoding="utf-8")
    r = run("load", str(fifo), str(link), "/dev/null", str(good), "--format", "json")
    assert r.code == 1 and "Traceback" not in r.err
    errors = [line for line in r.err.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {fifo}: is a FIFO (named pipe), {REFUSED}",
        f"error: {link}: is a character device (through a symbolic link), {REFUSED}",
        "error: /dev/null: unsupported file type (no suffix); supported: .txt .text .md .markdown .pdf .html .htm",
    ]
    assert '"urn:doc:good.txt"' in r.out
