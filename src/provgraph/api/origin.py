"""Only this server's own names and pages: the ``Host`` and ``Origin`` checks in front of everything.

``Host`` must name this server: a loopback name (``localhost``, ``*.localhost``, ``127.0.0.0/8``,
``::1``), the address it is bound to, or a name given with ``serve --allowed-host``; a server bound to
every interface (``0.0.0.0``, ``::``) also takes IP addresses, which cannot be rebound. Any other name
is how a DNS-rebinding page would reach it: 400 ``InvalidHost``.

A request or WebSocket handshake carrying an ``Origin`` is refused (403 ``ForbiddenOrigin``) unless
that origin is the server itself (its host and port are the request's ``Host``, or its name is an
allowed host): a page of another site can then neither read over the socket nor send the simple
requests (``text/plain``, multipart, forms) a browser sends without asking. Clients that are not
browsers send no ``Origin`` and are unaffected.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from provgraph.api.errors import refuse

__all__ = ["HostPolicy", "OriginGuard", "is_loopback", "header"]

_WILDCARDS = ("", "0.0.0.0", "::")


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address to bind) names only this machine: ``localhost`` or a loopback address."""
    name = host.lower().rstrip(".")
    ip = _ip(name)
    return name == "localhost" or (ip is not None and ip.is_loopback)


def _loopback_name(name: str) -> bool:
    """Whether a ``Host`` name is one a browser takes to this machine (``*.localhost`` too, RFC 6761)."""
    return is_loopback(name) or name.endswith(".localhost")


def _hostname(authority: str) -> str:
    """The name part of ``host[:port]`` (IPv6 in brackets), lower case, without a trailing dot."""
    if authority.startswith("["):
        return authority[: authority.find("]") + 1].lower()
    return authority.rsplit(":", 1)[0].lower().rstrip(".") if ":" in authority else authority.lower().rstrip(".")


@dataclass(frozen=True)
class HostPolicy:
    """The names this server answers to: the address it is bound to and the ``--allowed-host`` names."""

    bound: str = "127.0.0.1"
    allowed: tuple[str, ...] = ()

    def host_ok(self, authority: str) -> bool:
        """Whether a ``Host`` header names this server."""
        name = _hostname(authority)
        if _loopback_name(name) or name in (n.lower().rstrip(".") for n in self.allowed):
            return True
        bound = self.bound.lower().strip("[]")
        if bound in _WILDCARDS:
            return _ip(name) is not None
        return name.strip("[]") == bound

    def origin_ok(self, origin: str, authority: str | None) -> bool:
        """Whether an ``Origin`` header is one of this server's own pages."""
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null" (sandboxed frames, files) and every other scheme
        if authority is not None and parts.netloc.lower() == authority.lower():
            return True
        return _hostname(parts.netloc) in (n.lower().rstrip(".") for n in self.allowed)


def header(scope: dict[str, Any], name: bytes) -> str | None:
    """An ASGI request's header (``name`` in lower case), or None."""
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


class OriginGuard:
    """ASGI middleware: refuses requests for other host names and from other sites' pages."""

    def __init__(self, app: Any, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = header(scope, b"host")
        if host is not None and not self.policy.host_ok(host):
            await refuse(scope, send, 400, "InvalidHost",
                         f"Host {host[:80]!r} does not name this server: use 127.0.0.1 or localhost, or start it "
                         "with provgraph serve --allowed-host NAME")
            return
        origin = header(scope, b"origin")
        if origin is not None and not self.policy.origin_ok(origin, host):
            await refuse(scope, send, 403, "ForbiddenOrigin",
                         f"requests from pages of {origin[:80]!r} are refused: only this server's own pages may "
                         "call it")
            return
        await self.app(scope, receive, send)
