"""Backup, restore and check of a whole collection: what ``provgraph backup/restore/check`` do.

A backup is ``Runtime.backup`` on the collection the server holds open: consistent while queries
and loads go on. A restore takes the collection for itself (``RuntimePool.exclusive``: running
requests finish first, new ones wait) and only fills an empty or missing collection, as the CLI
does without ``--force``. A check reads the collection as it is shared; a repair takes it for itself,
as does a check of a collection whose vector index cannot even be opened.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from provgraph.api.errors import ApiError
from provgraph.api.routes_data import ERRORS
from provgraph.api.schemas import CheckOut, RestoredOut
from provgraph.api.state import ServerState, request_settings, state_of
from provgraph.config import Settings
from provgraph.errors import IndexError_, ProvgraphError
from provgraph.integrity.backup import restore_backup
from provgraph.layout import CollectionRef, check_name

__all__ = ["router", "install"]

router = APIRouter(responses=ERRORS, tags=["backup"])
TAR = "application/x-tar"


def _ref(settings: Settings) -> CollectionRef:
    return CollectionRef(settings.home, settings.user, settings.collection)


def _scratch(state: ServerState) -> Path:
    folder = state.settings.home / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="backup-", dir=folder))


@router.get("/collections/{collection}/backup", responses={200: {"content": {TAR: {}}}})
async def backup(request: Request, collection: str) -> FileResponse:
    """A consistent, versioned tar archive of the collection (``provgraph backup``); counts in ``X-Provgraph-Counts``."""
    settings = request_settings(request, check_name("collection", collection))
    state = state_of(request)
    ref = _ref(settings)
    folder = _scratch(state)
    file = folder / f"{ref.collection}.tar"

    def run() -> dict[str, Any]:
        with state.pool.use(settings) as rt:
            return rt.backup(file)

    try:
        manifest = await run_in_threadpool(run)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return FileResponse(file, media_type=TAR, filename=f"{ref.collection}-backup.tar",
                        headers={"X-Provgraph-Counts": json.dumps(manifest["counts"])},
                        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True))


@router.post("/collections/{collection}/restore", response_model=RestoredOut, status_code=201,
             openapi_extra={"requestBody": {"required": True, "content": {TAR: {"schema": {"type": "string",
                                                                                       "format": "binary"}}}}})
async def restore(request: Request, collection: str) -> dict[str, Any]:
    """Restore an archive of ``provgraph backup`` (the body) into an empty or new collection; never over data."""
    settings = request_settings(request, check_name("collection", collection))
    state = state_of(request)
    ref = _ref(settings)
    folder = _scratch(state)
    file = folder / "upload.tar"
    try:
        size = 0
        with file.open("wb") as out:
            async for piece in request.stream():
                out.write(piece)
                size += len(piece)
        if not size:
            raise ApiError(400, "InputError", "empty body: send the archive `provgraph backup` wrote as the body")

        def run() -> dict[str, Any]:
            with state.pool.exclusive(ref):
                return restore_backup(file, ref)

        try:
            manifest = await run_in_threadpool(run)
        except ProvgraphError as exc:  # its message names the server's copy: name the upload instead
            raise type(exc)(str(exc).replace(str(file), "the uploaded archive")) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    counts = manifest["counts"]
    return {"collection": str(ref), "documents": counts["documents"], "quads": counts["quads"]}


@router.get("/collections/{collection}/check", response_model=CheckOut, tags=["check"])
def check(request: Request, collection: str) -> dict[str, object]:
    """Verify every cross-store invariant (``provgraph check --format json``); ``consistent`` says the verdict."""
    settings = request_settings(request, check_name("collection", collection))
    pool = state_of(request).pool
    try:
        with pool.use(settings) as rt:
            return rt.check().to_json()
    except IndexError_:  # an index that cannot be opened is a finding, not a failure
        with pool.alone(settings) as rt:
            return rt.check().to_json()


@router.post("/collections/{collection}/repair", response_model=CheckOut, tags=["check"])
def repair(request: Request, collection: str) -> dict[str, object]:
    """``provgraph check --repair``: fix what can be derived, with the collection kept from other requests."""
    settings = request_settings(request, check_name("collection", collection))
    with state_of(request).pool.alone(settings) as rt:
        return rt.check(repair=True).to_json()


def install(app: FastAPI, state: ServerState, prefix: str) -> None:
    """Add the backup, restore, check and repair routes."""
    app.include_router(router, prefix=prefix)
