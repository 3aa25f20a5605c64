"""One place mapping provgraph errors to HTTP statuses, and the one JSON shape of every error.

    {"error": {"type": "NotFound", "message": "collection alice/x does not exist (…)"}}

The message is the CLI's ``error:`` line, word for word.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from provgraph import errors

__all__ = ["status_for", "error_body", "ApiError", "install_handlers", "refuse"]


class ApiError(Exception):
    """An HTTP-level refusal (auth, limits) with its status, in the one error shape."""

    def __init__(self, status: int, type_: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.headers = status, type_, message, headers


def status_for(exc: errors.ProvgraphError) -> int:
    """The HTTP status of a provgraph error."""
    if isinstance(exc, errors.NotFound):
        return 404
    if isinstance(exc, (errors.InputError, errors.ConfigError, errors.QueryError)):
        return 400
    if isinstance(exc, (errors.StoreUnavailable, errors.ModelUnavailable)):
        return 503
    if isinstance(exc, errors.ModelError):
        return 502
    return 500


def error_body(type_: str, message: str) -> dict[str, Any]:
    """The one error shape."""
    return {"error": {"type": type_, "message": message}}


async def refuse(scope: dict[str, Any], send: Any, status: int, type_: str, message: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer an ASGI request with the one error shape (a WebSocket handshake: closed with ``4000 + status``)."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 4000 + status, "reason": message[:120]})
        return
    body = json.dumps(error_body(type_, message)).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def one_line(exc: BaseException) -> str:
    """The first line of an error's message, as the CLI prints it."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _provgraph(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errors.ProvgraphError)
    return JSONResponse(error_body(type(exc).__name__, one_line(exc)), status_code=status_for(exc))


def _api(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(error_body(exc.type, exc.message), status_code=exc.status, headers=exc.headers)


def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors())
    return JSONResponse(error_body("InputError", f"invalid request: {problems}"), status_code=422)


def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return JSONResponse(error_body("HTTPError", str(exc.detail)), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


def install_handlers(app: Any) -> None:
    """Register the handlers that give every error the one shape."""
    app.add_exception_handler(errors.ProvgraphError, _provgraph)
    app.add_exception_handler(ApiError, _api)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
