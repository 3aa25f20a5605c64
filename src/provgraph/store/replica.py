"""A PostgreSQL collection's SPARQL replica: an Oxigraph server fed from the collection's outbox.

PostgreSQL answers the named operations, not SPARQL. With ``PROVGRAPH_REPLICA_URL`` (an Oxigraph server, one a
collection) ``provgraph sparql`` and the API's SPARQL route query the server. Every write to a collection with a
replica adds an outbox row in its own transaction (store/postgres.py: the quads removed and added, as SPARQL data);
:meth:`OxigraphReplica.sync` applies the rows after the last one applied, in order, as one ``DELETE DATA; INSERT
DATA`` update each, and records each row's sequence number once applied, so a row applied twice (a crash between
the update and the record) changes nothing. :meth:`OxigraphReplica.rebuild` registers the replica (waiting for the
writes in progress), empties the server, loads the collection's export into it and catches up. Rows every replica
applied are deleted. A query first catches up, so it sees every write committed before it.

A server holds one collection: the database's ``provgraph_replicas`` table names the collection each replica URL
holds. A query on a collection whose replica was never built, or whose server another collection of the database
has since been rebuilt into, rebuilds it first (and the other collection's registration is dropped, so its outbox
no longer keeps rows for a server it lost).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyoxigraph as ox

from provgraph.errors import ConfigError, QueryError, StoreUnavailable
from provgraph.rdf.nesting import check_query
from provgraph.rdf.vocab import PREFIXES
from provgraph.rdf.convert import from_ox
from provgraph.rdf.terms import Term
from provgraph.store.base import SelectResult
from provgraph.store.oxigraph import ox_query, values_clause
from provgraph.store.base import QuadStore
from provgraph.store.pg_connection import pg_errors
from provgraph.store.postgres import PostgresStore

__all__ = ["OxigraphReplica", "Lag", "replica_of"]

_BATCH = 200  # outbox rows read at a time
_TIMEOUT = 300.0
_RESULTS = "application/sparql-results+json"
_TRIPLES = "application/n-triples"


class Lag:
    """How far a replica is behind: outbox rows not applied yet, and the last sequence number applied."""

    def __init__(self, pending: int, applied: int, registered: bool) -> None:
        self.pending, self.applied, self.registered = pending, applied, registered

    @property
    def behind(self) -> int:
        """The rows not applied yet, or -1 when the replica was never built."""
        return self.pending if self.registered else -1


def replica_of(store: QuadStore, url: str | None) -> OxigraphReplica:
    """The replica at ``url`` of a PostgreSQL collection's ``store`` (ConfigError for another store or no URL)."""
    if not isinstance(store, PostgresStore):
        raise ConfigError(f"collection {store.name}: a SPARQL replica is for a PostgreSQL collection")
    if not (url or "").strip():
        raise ConfigError(f"collection {store.name}: its quads are in PostgreSQL (PROVGRAPH_STORE_URL), where SPARQL is "
                          "answered by an Oxigraph server replica: set PROVGRAPH_REPLICA_URL (and run provgraph replica "
                          "rebuild)")
    return OxigraphReplica(store, str(url).strip())


class OxigraphReplica:
    """The SPARQL replica of one PostgreSQL collection on the Oxigraph server at ``url``."""

    def __init__(self, store: PostgresStore, url: str) -> None:
        self.store = store
        self.url = url.rstrip("/")

    @property
    def name(self) -> str:
        """The collection's name, as its store's."""
        return self.store.name

    # -- the server ---------------------------------------------------------------------------------------
    def _http(self, path: str, body: bytes, content_type: str, accept: str | None = None) -> tuple[str, bytes]:
        request = urllib.request.Request(self.url + path, data=body, method="POST",
                                         headers={"Content-Type": content_type, **({"Accept": accept} if accept else {})})
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
                return response.headers.get("Content-Type", ""), response.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace").strip().splitlines()
            raise QueryError(f"collection {self.store.name}: the SPARQL replica refused: "
                             f"{text[0] if text else exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise StoreUnavailable(f"collection {self.store.name}: the SPARQL replica at {self.url} is unreachable: "
                                   f"{getattr(exc, 'reason', exc)}") from exc

    def _update(self, text: str) -> None:
        self._http("/update", text.encode("utf-8"), "application/sparql-update")

    @contextmanager
    def _server(self, exclusive: bool) -> Iterator[None]:
        """Hold the server: shared to catch up and query, exclusive to rebuild it (perhaps for another collection)."""
        conn, mode = self.store._conn(), "" if exclusive else "_shared"
        with pg_errors(self.store.name, "lock the replica"):
            conn.execute(f"SELECT pg_advisory_lock{mode}(hashtext(%s))", ("replica " + self.url,))
        try:
            yield
        finally:
            with pg_errors(self.store.name, "unlock the replica"):
                conn.execute(f"SELECT pg_advisory_unlock{mode}(hashtext(%s))", ("replica " + self.url,))

    # -- the outbox ---------------------------------------------------------------------------------------
    def _applied(self, conn: Any) -> int | None:
        row = conn.execute(self.store._sql("SELECT applied FROM {s}.replicas WHERE url = %s"), (self.url,)).fetchone()
        return None if row is None else int(row[0])

    def _holds(self, conn: Any) -> bool:
        """Whether the server holds this collection (the last rebuild into it was this collection's)."""
        row = conn.execute("SELECT schema_name FROM provgraph_replicas WHERE url = %s", (self.url,)).fetchone()
        return row is not None and row[0] == self.store.schema

    def lag(self) -> Lag:
        """Outbox rows this replica has not applied (all of them when it is not registered: rebuild it)."""
        conn = self.store._conn()
        with pg_errors(self.store.name, "read the replica's lag"):
            applied = self._applied(conn) if self._holds(conn) else None
            pending = conn.execute(self.store._sql("SELECT count(*) FROM {s}.outbox WHERE seq > %s"),
                                   (applied or 0,)).fetchone()[0]
        return Lag(int(pending), applied or 0, applied is not None)

    def sync(self) -> int:
        """Apply every outbox row after the last applied, in order; returns how many were applied."""
        with self._server(exclusive=False):
            return self._catch_up()

    def _catch_up(self) -> int:
        conn = self.store._conn()
        done = 0
        while True:
            with pg_errors(self.store.name, "read the outbox"):
                applied = self._applied(conn) if self._holds(conn) else None
                if applied is None:
                    raise QueryError(f"collection {self.store.name}: no SPARQL replica at {self.url} yet "
                                     "(build it with: provgraph replica rebuild)")
                rows = conn.execute(self.store._sql("SELECT seq, removed, added FROM {s}.outbox WHERE seq > %s "
                                                    "ORDER BY seq LIMIT %s"), (applied, _BATCH)).fetchall()
            if not rows:
                return done
            for seq, removed, added in rows:
                if removed == "*":
                    self._update("DROP ALL")
                else:
                    parts = ([f"DELETE DATA {{\n{removed}}}"] if removed else []) + \
                        ([f"INSERT DATA {{\n{added}}}"] if added else [])
                    if parts:
                        self._update(" ;\n".join(parts))
                with pg_errors(self.store.name, "record the replica's progress"):
                    conn.execute(self.store._sql("UPDATE {s}.replicas SET applied = %s WHERE url = %s"), (seq, self.url))
                done += 1
            self._prune(conn)

    def _prune(self, conn: Any) -> None:
        with pg_errors(self.store.name, "prune the outbox"):
            conn.execute(self.store._sql("DELETE FROM {s}.outbox WHERE seq <= (SELECT min(applied) FROM {s}.replicas)"))

    def rebuild(self) -> int:
        """Register the replica, load the whole collection into the emptied server, catch up; returns the quads loaded."""
        with self._server(exclusive=True):
            return self._rebuild()

    def _rebuild(self) -> int:
        conn = self.store._conn()
        with pg_errors(self.store.name, "register the replica"), conn.transaction():
            self.store.outbox_lock(conn)  # writes in progress finish first; later ones go to the outbox
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('provgraph_replicas'))")
            held = conn.execute("SELECT schema_name FROM provgraph_replicas WHERE url = %s", (self.url,)).fetchone()
            if held is not None and held[0] != self.store.schema:  # the other collection no longer has this server
                conn.execute("DELETE FROM provgraph_replicas WHERE url = %s", (self.url,))
                if re.fullmatch(r"c_[0-9a-f]{16}", held[0]) and \
                        conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (held[0],)).fetchone():
                    conn.execute(f"DELETE FROM {held[0]}.replicas WHERE url = %s", (self.url,))
            conn.execute("INSERT INTO provgraph_replicas (url, schema_name) VALUES (%s, %s) ON CONFLICT (url) "
                         "DO UPDATE SET schema_name = EXCLUDED.schema_name", (self.url, self.store.schema))
            latest = conn.execute(self.store._sql("SELECT coalesce(max(seq), 0) FROM {s}.outbox")).fetchone()[0]
            conn.execute(self.store._sql("INSERT INTO {s}.replicas (url, applied) VALUES (%s, %s) ON CONFLICT (url) "
                                         "DO UPDATE SET applied = EXCLUDED.applied"), (self.url, latest))
        data = self.store.export_bytes("nquads")  # every write committed since is in the outbox too: applied again
        self._update("DROP ALL")
        if data:
            self._http("/store", data, "application/n-quads")
        self._catch_up()
        return data.count(b"\n")

    # -- queries ------------------------------------------------------------------------------------------
    def raw_query(self, sparql: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """The query's result from the replica (caught up first, built first when it does not hold the collection),
        as the embedded store's ``raw_query`` gives it: refused as the embedded store refuses it (nesting, SERVICE,
        updates, syntax: checked here on an empty store), with provgraph's prefixes."""
        check_query(sparql, f"collection {self.name}: invalid SPARQL")
        ox_query(ox.Store(), self.name, sparql)
        text = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in PREFIXES.items()) + sparql
        for attempt in range(3):  # another collection rebuilt into the server between two steps: again
            if attempt or not self.lag().registered:
                self.rebuild()
            with self._server(exclusive=False):  # no rebuild for another collection until the answer is read
                if self.lag().registered:
                    self._catch_up()
                    kind, body = self._http("/query", text.encode("utf-8"), "application/sparql-query",
                                            accept=f"{_RESULTS}, {_TRIPLES};q=0.9")
                    break
        else:
            raise QueryError(f"collection {self.store.name}: the SPARQL replica at {self.url} is rebuilt for another "
                             "collection again and again (give each collection a server of its own)")
        if kind.startswith(_TRIPLES):  # CONSTRUCT/DESCRIBE: through a scratch store, for the same result type
            scratch = ox.Store()
            scratch.load(body, format=ox.RdfFormat.N_TRIPLES)
            return scratch.query("CONSTRUCT WHERE { ?s ?p ?o }")  # type: ignore[return-value]
        try:
            return ox.parse_query_results(body, format=ox.QueryResultsFormat.JSON)  # type: ignore[return-value]
        except (SyntaxError, ValueError) as exc:
            raise QueryError(f"collection {self.store.name}: the SPARQL replica's answer is unreadable: "
                             f"{json.dumps(body[:80].decode('utf-8', 'replace'))}") from exc

    def select(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> SelectResult:
        """A SELECT's rows from the replica, as the embedded store's ``select`` gives them (``bind`` as VALUES)."""
        result = self.raw_query(sparql + values_clause(bind))
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError(f"collection {self.name}: not a SELECT query")
        variables = [v.value for v in result.variables]
        return SelectResult(variables, [{n: from_ox(v) for n, v in zip(variables, sol) if v is not None} for sol in result])
