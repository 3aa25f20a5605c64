"""Backends chosen from settings' URLs, for what is above one collection's runtime: the queue, the jobs table, and
collections as a whole (create, list, find, drop). With runtime.py, the only modules that pick backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from provgraph.config import Settings
from provgraph.errors import ConfigError, NotFound
from provgraph.layout import CollectionRef
from provgraph.store.collections import create_collection as create_folder

if TYPE_CHECKING:
    from provgraph.librarian.external import ExternalBlobs
    from provgraph.queue.nats_queue import NatsQueue
    from provgraph.store.collections import CollectionInfo
    from provgraph.store.pg_jobs import JobTable

__all__ = ["collection_exists", "collections", "create_collection", "documents_store", "drop_collection", "job_queue",
           "job_table", "postgres_url"]


def postgres_url(settings: Settings) -> str | None:
    """The PostgreSQL URL of ``PROVGRAPH_STORE_URL`` (None: the embedded store); ConfigError for another scheme."""
    url = (settings.store_url or "").strip()
    if not url:
        return None
    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"PROVGRAPH_STORE_URL must be a postgresql:// URL (or unset for the embedded store), got {url!r}")
    return url


def documents_store(settings: Settings, folder: str) -> ExternalBlobs | None:
    """Where documents' bytes go (``PROVGRAPH_BLOB_URL``: S3), a folder per collection; None: inside the store."""
    url = (settings.blob_url or "").strip()
    if not url:
        return None
    from provgraph.librarian.s3_blobs import S3Blobs

    return S3Blobs(url, folder)


def job_queue(settings: Settings) -> NatsQueue | None:
    """The extraction job queue of ``PROVGRAPH_QUEUE_URL`` (None: extraction runs in process)."""
    url = (settings.queue_url or "").strip()
    if not url:
        return None
    if not url.startswith("nats://"):
        raise ConfigError(f"PROVGRAPH_QUEUE_URL must be a nats:// URL (or unset to extract in process), got {url!r}")
    if postgres_url(settings) is None:
        raise ConfigError("PROVGRAPH_QUEUE_URL needs PROVGRAPH_STORE_URL: workers in other processes cannot open an "
                          "embedded store")
    from provgraph.queue.nats_queue import NatsQueue

    return NatsQueue(url, ack_wait=settings.queue_ack_wait, max_deliver=settings.queue_max_deliver)


def job_table(settings: Settings) -> JobTable:
    """The jobs table beside the collections (PROVGRAPH_STORE_URL's database)."""
    from provgraph.store.pg_jobs import JobTable

    url = postgres_url(settings)
    if url is None:
        raise ConfigError("load jobs need PROVGRAPH_STORE_URL (postgresql://…)")
    return JobTable(url)


def create_collection(settings: Settings, ref: CollectionRef) -> bool:
    """Create a collection, in the configured store too; returns False when it already existed (as its folder)."""
    created = create_folder(ref)
    url = postgres_url(settings)
    if url is not None:
        from provgraph.store.postgres import PostgresStore

        PostgresStore(url, ref.user, ref.collection, create=True).close()  # placed, its schema made
    return created


def collections(settings: Settings, user: str | None = None) -> list[CollectionInfo]:
    """Every collection (of ``user`` when given): on PostgreSQL the placed ones, whichever process created them
    (a server replica lists what another loaded), else the folders under the home."""
    from provgraph.store.collections import CollectionInfo, list_collections

    url = postgres_url(settings)
    if url is None:
        return list_collections(settings.home, user)
    from provgraph.store.pg_placement import list_pg_collections

    return [CollectionInfo(u, c, CollectionRef(settings.home, u, c).root) for u, c in list_pg_collections(url, user)]


def collection_exists(settings: Settings, ref: CollectionRef) -> bool:
    """Whether the collection exists; on PostgreSQL, whether it is placed there (its local folder, which holds only
    derived parts, is made here when another process created it)."""
    url = postgres_url(settings)
    if url is None or ref.exists():
        return ref.exists()
    from provgraph.store.pg_placement import list_pg_collections

    if (ref.user, ref.collection) not in list_pg_collections(url, ref.user):
        return False
    create_folder(ref)
    return True


def drop_collection(settings: Settings, ref: CollectionRef) -> None:
    """Delete a collection and everything in it, in the configured store too (NotFound if it exists nowhere)."""
    from provgraph.store.collections import drop_collection as drop_folder

    url = postgres_url(settings)
    if url is None:
        drop_folder(ref)
        return
    from provgraph.store.pg_placement import drop_pg_collection

    try:
        drop_pg_collection(url, ref.user, ref.collection)
    except NotFound:
        if not ref.exists():
            raise
    if ref.exists():
        drop_folder(ref)
