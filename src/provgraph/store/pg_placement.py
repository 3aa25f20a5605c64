"""Where PostgreSQL collections live: one schema each, recorded in the database's placement table.

``provgraph_collections`` maps (user, collection) to its schema (``c_`` + 16 hex digits of a hash of the name);
``provgraph_replicas`` names the collection each SPARQL replica server holds (store/replica.py). Dropping a
collection drops its schema, its placement and the replica servers it held, in one transaction.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any

from provgraph.errors import NotFound
from provgraph.store.pg_connection import pg_connect, pg_errors

__all__ = ["schema_of", "place_collection", "list_pg_collections", "drop_pg_collection"]

_PLACEMENT = """CREATE TABLE IF NOT EXISTS provgraph_collections (
  usr text NOT NULL, collection text NOT NULL, schema_name text NOT NULL UNIQUE,
  created timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (usr, collection));
CREATE TABLE IF NOT EXISTS provgraph_replicas (url text PRIMARY KEY, schema_name text NOT NULL)"""
_LOCK = "SELECT pg_advisory_xact_lock(hashtext('provgraph_collections'))"  # two processes creating the tables


def schema_of(user: str, collection: str) -> str:
    """The schema holding a collection: a fixed-length name derived from (user, collection)."""
    return "c_" + blake2b(f"{user}/{collection}".encode(), digest_size=8).hexdigest()


def _tables(conn: Any) -> None:
    conn.execute(_LOCK)
    conn.execute(_PLACEMENT)


def place_collection(conn: Any, user: str, collection: str, schema: str, ddl: str, *, create: bool) -> None:
    """In ``conn``'s transaction: record the collection (NotFound when absent and not ``create``), run its ``ddl``."""
    _tables(conn)
    placed = conn.execute("SELECT 1 FROM provgraph_collections WHERE usr = %s AND collection = %s",
                          (user, collection)).fetchone()
    if placed is None:
        if not create:
            raise NotFound(f"collection {user}/{collection} does not exist (create it with: provgraph collections create)")
        conn.execute("INSERT INTO provgraph_collections (usr, collection, schema_name) VALUES (%s, %s, %s)",
                     (user, collection, schema))
    conn.execute(ddl)


def list_pg_collections(url: str, user: str | None = None) -> list[tuple[str, str]]:
    """(user, collection) of every collection placed on the database, sorted."""
    conn = pg_connect(url, "list")
    try:
        with pg_errors("list", "list collections"), conn.transaction():
            _tables(conn)
            rows = conn.execute("SELECT usr, collection FROM provgraph_collections WHERE %s::text IS NULL OR usr = %s "
                                "ORDER BY 1, 2", (user, user)).fetchall()
        return [(u, c) for u, c in rows]
    finally:
        conn.close()


def drop_pg_collection(url: str, user: str, collection: str) -> None:
    """Drop a collection's schema, placement and replica records; NotFound when it is not placed there."""
    name, schema = f"{user}/{collection}", schema_of(user, collection)
    conn = pg_connect(url, name)
    try:
        with pg_errors(name, "drop"), conn.transaction():
            _tables(conn)
            gone = conn.execute("DELETE FROM provgraph_collections WHERE usr = %s AND collection = %s", (user, collection))
            if gone.rowcount == 0:
                raise NotFound(f"collection {name} does not exist")
            conn.execute("DELETE FROM provgraph_replicas WHERE schema_name = %s", (schema,))
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    finally:
        conn.close()
