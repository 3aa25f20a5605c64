"""The server's security settings: the token file is its owner's only, only loopback names count as
loopback (a public host name never starts an open server), token digests are compared in constant time."""

from __future__ import annotations

import hmac
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provgraph.api.origin import is_loopback
from provgraph.api.tokens import TokenStore
from tests.cli_runner import run


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask (files 0644 unless made otherwise); restored after, as is any the code under test sets."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_token_file_is_written_0600_and_stays_so(tmp_path: Path, umask_022: None) -> None:
    store = TokenStore(tmp_path / "home")
    info, _ = store.create("alice")
    assert mode(store.path) == 0o600
    store.create("bob")
    assert mode(store.path) == 0o600
    store.revoke(info.id)
    assert mode(store.path) == 0o600 and [t.user for t in store.list()] == ["bob"]
    assert not list(store.path.parent.glob("*.tmp"))


def test_tokens_create_on_the_command_line_writes_it_0600(tmp_path: Path, umask_022: None) -> None:
    r = run("--home", str(tmp_path / "home"), "tokens", "create", "-U", "alice")
    assert r.code == 0 and r.out.startswith("pgt_")
    assert mode(tmp_path / "home" / "tokens.json") == 0o600


@pytest.mark.parametrize("host", ["localhost", "LocalHost", "localhost.", "127.0.0.1", "127.3.2.1", "::1", "[::1]"])
def test_loopback_addresses_and_localhost_are_loopback(host: str) -> None:
    assert is_loopback(host) is True


@pytest.mark.parametrize("host", ["example.org", "db.example.org", "localhost.example.org", "my-laptop",
                                  "evil-localhost", "0.0.0.0", "::", "", "10.0.0.7", "192.168.1.2", "8.8.8.8",
                                  "2001:db8::1", "127.0.0.1.nip.io"])
def test_any_other_name_or_address_is_not_loopback(host: str) -> None:
    assert is_loopback(host) is False


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch, umask_022: None) -> list[dict[str, Any]]:
    """What ``serve`` handed uvicorn (nothing is bound): one dict per start."""
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    return calls


@pytest.mark.parametrize("host", ["db.example.org", "my-laptop", "0.0.0.0", "10.0.0.7"])
def test_serve_on_a_public_name_or_address_without_tokens_does_not_start(
        tmp_path: Path, started: list[dict[str, Any]], host: str) -> None:
    r = run("--home", str(tmp_path / "home"), "serve", "--host", host, "--port", "8400")
    assert (r.code, r.err) == (2, f"error: refusing to serve on {host} without tokens: create one with provgraph "
                                  "tokens create -U USER (or bind to 127.0.0.1)\n")
    assert started == []


def test_serve_on_a_public_name_with_a_token_starts_closed_and_loopback_starts_open(
        tmp_path: Path, started: list[dict[str, Any]]) -> None:
    home = tmp_path / "home"
    assert run("--home", str(home), "serve", "--host", "127.0.0.1", "--port", "8400").code == 0
    assert started[-1]["app"].state.provgraph.require_tokens is False  # loopback, no token yet: open
    TokenStore(home).create("alice")
    assert run("--home", str(home), "serve", "--host", "db.example.org", "--port", "8400").code == 0
    assert started[-1]["host"] == "db.example.org" and started[-1]["app"].state.provgraph.require_tokens is True


def test_token_digests_are_compared_in_constant_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = TokenStore(tmp_path / "home")
    _, alice = store.create("alice")
    _, bob = store.create("bob")
    compared: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert store.user_of(bob) == "bob"
    known = {t.sha256 for t in store.list()}
    assert compared and {a for a, _ in compared} <= known and all(len(b) == 64 for _, b in compared)
    compared.clear()
    assert store.user_of("pgt_" + "x" * 43) is None
    assert {a for a, _ in compared} == known  # every stored digest, each through compare_digest
    compared.clear()
    assert store.user_of(alice) == "alice" and compared
