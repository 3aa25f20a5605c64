"""API tokens: one per client, stored hashed (SHA-256) in ``{home}/tokens.json``, each acting as one user.

The token text is shown once, at creation; only its hash and a short ID are kept. The server checks
a token per request against the file as last read; the file is read again only when its size,
mtime or inode changes (so ``tokens revoke`` from another process takes effect on the next request).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from provgraph.errors import ConfigError, NotFound
from provgraph.layout import check_name

__all__ = ["TokenInfo", "TokenStore", "TOKENS_FILE"]

TOKENS_FILE = "tokens.json"
_PREFIX = "pgt_"


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A stored token: its ID (public), its user, when it was made, the hash of its text."""

    id: str
    user: str
    created: str
    sha256: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """The token file of a data directory; safe to use from several threads."""

    def __init__(self, home: Path) -> None:
        self.path = home / TOKENS_FILE
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None  # (inode, size, mtime_ns) of the file last read
        self._tokens: list[TokenInfo] = []
        self._users: dict[str, str] = {}  # sha256 → user, of the file last read

    def _read(self) -> list[TokenInfo]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._tokens, self._users = None, [], {}
            return []
        except OSError as exc:
            raise ConfigError(f"cannot read {self.path}: {exc}; fix or delete it and create tokens again") from exc
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        if seen == self._seen:
            return list(self._tokens)
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            tokens = [TokenInfo(**row) for row in rows]
        except (OSError, ValueError, TypeError) as exc:
            raise ConfigError(f"cannot read {self.path}: {exc}; fix or delete it and create tokens again") from exc
        self._seen, self._tokens, self._users = seen, tokens, {t.sha256: t.user for t in tokens}
        return list(tokens)

    def _write(self, tokens: list[TokenInfo]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(t) for t in tokens], indent=1), encoding="utf-8")
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)

    def create(self, user: str) -> tuple[TokenInfo, str]:
        """A new token for ``user``: its record and its text (shown once, never stored)."""
        check_name("user", user)
        text = _PREFIX + secrets.token_urlsafe(32)
        digest = _digest(text)
        info = TokenInfo(id=digest[:12], user=user, sha256=digest,
                         created=datetime.now(timezone.utc).replace(microsecond=0).isoformat())
        with self._lock:
            self._write([*self._read(), info])
        return info, text

    def list(self) -> list[TokenInfo]:
        """Every token, oldest first."""
        with self._lock:
            return self._read()

    def revoke(self, token_id: str) -> TokenInfo:
        """Delete a token by its ID; NotFound if there is none."""
        with self._lock:
            tokens = self._read()
            found = [t for t in tokens if t.id == token_id]
            if not found:
                raise NotFound(f"no token {token_id!r} (list them with: provgraph tokens list)")
            self._write([t for t in tokens if t.id != token_id])
        return found[0]

    def user_of(self, token: str) -> str | None:
        """The user a token acts as, or None if it is not a valid token."""
        digest = _digest(token)
        with self._lock:
            self._read()
            users = self._users
        for known, user in users.items():
            if hmac.compare_digest(known, digest):
                return user
        return None

    def enabled(self) -> bool:
        """Whether any token exists (then every request must carry one)."""
        return bool(self.list())
