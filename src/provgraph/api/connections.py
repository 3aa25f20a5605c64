"""The server's connections: a cap on how many are open and a deadline for each request's headers.

Below the app, where no token is known yet: a client that opens connections and never finishes a
request (slowloris) would otherwise hold them, and their file descriptors, for ever. A connection
whose request line and headers have not all arrived ``header_timeout`` seconds after its first byte
(or after it was opened) gets 408 and is closed; one opened while ``max_connections`` are open gets
503 and is closed at once. WebSocket connections count towards the cap.

:func:`fd_budget` splits the process's file-descriptor limit between connections and open
collections (each holds about 30 descriptors), so the server never runs out of descriptors: at the
limit, accepting fails and asyncio logs a traceback for every attempt. Should it happen anyway
(descriptors taken by something else), :func:`quiet_accept_errors` makes that one line a minute.
uvicorn's listen backlog (2048) is also how many connections asyncio accepts in one turn, before
any is refused: ``serve`` passes :data:`BACKLOG`, which the reserve covers.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from provgraph.api.errors import error_body

__all__ = ["guarded_protocol", "fd_budget", "quiet_accept_errors", "FDS_PER_COLLECTION", "BACKLOG"]

FDS_PER_COLLECTION = 32  # measured: 30 per opened collection (store, librarian, vector indexes, lexical index)
BACKLOG = 64  # connections queued in the kernel, and accepted at most in one turn of the event loop
_LINGER_S = 2.0  # how long a refused connection is read from before it is closed
_MAX_LINGERING = 32  # refused connections read from at once; past that, closed at once
# the interpreter, the listening socket, logs, tokens, uploads in flight; one turn's accepts; lingering refusals
_RESERVED_FDS = 64 + BACKLOG + _MAX_LINGERING


def _response(status: int, reason: str, type_: str, message: str) -> bytes:
    body = json.dumps(error_body(type_, message)).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode() + body


def fd_budget(max_connections: int, max_open_collections: int) -> tuple[int, int]:
    """The connection and open-collection caps that fit the descriptor limit (raised to its hard maximum).

    Half the descriptors left after a reserve go to collections, the rest to connections; each cap
    is at most what was asked.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    spare = max(0, soft - _RESERVED_FDS)
    collections = max(1, min(max_open_collections, spare // 2 // FDS_PER_COLLECTION))
    connections = max(1, min(max_connections, spare - collections * FDS_PER_COLLECTION))
    return connections, collections


def guarded_protocol(max_connections: int, header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the connection cap and the header deadline (pass as ``http=``)."""
    too_many = _response(503, "Service Unavailable", "TooManyConnections",
                         f"the server has {max_connections} connections open, its limit: try again later")
    too_slow = _response(408, "Request Timeout", "Timeout",
                         f"the request's headers did not arrive within {header_timeout:g} s")

    lingering = [0]  # refused connections still being read from

    class GuardedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _linger_timer: asyncio.TimerHandle
        _refused = False
        _lingers = False

        def connection_made(self, transport: Any) -> None:
            if len(self.connections) >= max_connections:
                self._refuse(transport)
                return
            super().connection_made(transport)
            self._watch_headers()

        def _refuse(self, transport: Any) -> None:
            """Answer 503 and end the connection; read on for a moment first, so that the request the client
            is still sending does not make the kernel reset the connection and drop the answer."""
            self._refused = True
            self.transport = transport
            transport.write(too_many)
            if lingering[0] >= _MAX_LINGERING:
                transport.close()
                return
            lingering[0] += 1
            self._lingers = True
            transport.write_eof()  # the client reads the answer, then closes; what it sends is dropped
            self._linger_timer = self.loop.call_later(_LINGER_S, transport.close)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            self._watch_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timer()
            if self._lingers:
                lingering[0] -= 1
                self._linger_timer.cancel()
            super().connection_lost(exc)

        def _watch_headers(self) -> None:
            waiting = (self.conn.their_state is h11.IDLE and not self.transport.is_closing()
                       and self.transport.get_protocol() is self)  # not once upgraded to a WebSocket
            if waiting and self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout, self._headers_late)
            elif not waiting:
                self._stop_timer()

        def _stop_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.write(too_slow)
                self.transport.close()

    return GuardedH11Protocol


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Report running out of descriptors while accepting as one line a minute, not a traceback per attempt
    (asyncio stops accepting for a second each time and tries again)."""
    previous = loop.get_exception_handler()
    last = [0.0, 0]  # when the last line was written, and the failures since

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE) and "accept" in str(
                context.get("message", "")):
            last[1] += 1
            if time.monotonic() - last[0] >= 60:
                logging.getLogger("uvicorn.error").error(
                    "out of file descriptors: not accepting connections for a moment (%d time(s) since the last "
                    "report); lower --max-connections or --max-open-collections, or raise the limit", last[1])
                last[0], last[1] = time.monotonic(), 0
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
