"""The embedded quad store: pyoxigraph (RocksDB on disk, or in memory for tests).

Only one process may open an on-disk store read-write; a second one gets
:class:`StoreUnavailable` naming the folder.
"""

from __future__ import annotations

import contextlib
import io
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from provgraph.errors import NO_SPACE_ADVICE, QueryError, StoreError, StoreUnavailable, failure_advice, out_of_space
from provgraph.rdf.nesting import CheckedReader, check_query
from provgraph.rdf.sparql_errors import READ_ONLY, is_update, syntax_message
from provgraph.rdf.convert import from_ox, graph_to_ox, quad_from_ox, quads_to_ox, to_ox, triples_from_ox
from provgraph.rdf.terms import Iri, Quad, Subject, Term, TripleTerm
from provgraph.rdf.vocab import GRAPH_RETRIEVAL, GRAPH_SOURCE, PREFIXES, PROV, TG
from provgraph.store.base import ANY, GraphSel, RdfFormat, Row, SelectResult
from provgraph.store.queries_oxigraph import SUPPORT, SparqlQueries

__all__ = ["OxigraphStore", "OX_FORMATS", "IMPORT_BATCH", "parse_rdf"]

_BATCH = 50_000  # quads a bulk load takes at once (bounded memory)
IMPORT_BATCH = 10_000  # quads an import writes in one transaction (which holds them until it commits)
OX_FORMATS = {"nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG}


def _update_data(verb: str, quads: Iterable[Quad]) -> str:
    """``DELETE DATA``/``INSERT DATA`` text; terms are in canonical N-Triples form, so always safe."""
    by_graph: dict[Iri | None, list[str]] = defaultdict(list)
    for q in quads:
        by_graph[q.g].append(f"{q.s} {q.p} {q.o} .")
    if not by_graph:
        return ""
    parts = []
    for g, lines in by_graph.items():
        body = "\n".join(lines)
        parts.append(body if g is None else f"GRAPH {g} {{\n{body}\n}}")
    return f"{verb} DATA {{\n" + "\n".join(parts) + "\n}"


def values_clause(bind: Mapping[str, Term] | None) -> str:
    """A trailing ``VALUES`` block binding variables to terms.

    Terms are written in their canonical N-Triples form (validated IRIs, fully escaped
    literals), so a bound value can never change the query's structure.
    """
    if not bind:
        return ""
    for name in bind:
        if not name.isidentifier():
            raise QueryError(f"invalid variable name to bind: {name!r}")
    names = " ".join(f"?{k}" for k in bind)
    values = " ".join(str(v) for v in bind.values())
    return f"\nVALUES ({names}) {{ ({values}) }}"


_DAMAGED = ": the store's files are damaged: restore a backup (provgraph restore FILE --force); nothing was changed"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    if out_of_space(exc):
        return f"{line}: {NO_SPACE_ADVICE}" if NO_SPACE_ADVICE not in line else line
    return line + _DAMAGED if "Corruption:" in line and "restore a backup" not in line else line


def _query_failure(name: str, exc: BaseException) -> Exception:
    """A failed query: the store's fault when RocksDB found damage, else the query's."""
    if "Corruption:" in str(exc):
        return StoreError(f"collection {name}: query failed: {_first_line(exc)}")
    return QueryError(f"collection {name}: query failed: {exc}")


def ox_query(store: ox.Store, name: str, text: str, given: str | None = None) -> object:
    """``text`` run on a pyoxigraph ``store`` with provgraph's prefixes, its errors as provgraph's (a SPARQL update is
    refused as read-only; ``given`` is the user's text, for the messages)."""
    given = text if given is None else given
    try:
        return store.query(text, prefixes=PREFIXES)
    except (SyntaxError, OSError, ValueError, TypeError, RuntimeError) as exc:
        # no local may hold the pyoxigraph store once it fails: the error's traceback keeps this frame, and
        # a caller that keeps the error (a CLI's exit, a queued error) would keep the store's lock after close()
        del store
        failure = exc
    if isinstance(failure, SyntaxError):
        if is_update(given):
            raise QueryError(f"collection {name}: {READ_ONLY}") from failure
        raise QueryError(f"collection {name}: invalid SPARQL: {syntax_message(given, str(failure))}") from failure
    raise _query_failure(name, failure) from failure


def parse_rdf(name: str, data: bytes | Path, fmt: RdfFormat) -> Iterator[ox.Quad]:
    """Every quad of N-Quads or TriG ``data``, parsed as it streams; QueryError (with the line) when it does
    not parse. The parser reads through :class:`~provgraph.rdf.nesting.CheckedReader`, so text nested past
    what its recursion can take is refused before it sees it (pyoxigraph would overflow its stack)."""
    what = f"collection {name}: cannot import {fmt}"
    with (data.open("rb") if isinstance(data, Path) else contextlib.nullcontext(data)) as source:
        try:
            yield from ox.parse(CheckedReader(source, what, fmt), format=OX_FORMATS[fmt])  # type: ignore[arg-type]
        except SyntaxError as exc:
            where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
            raise QueryError(f"{what}{where}: {exc.msg or exc}; nothing was imported") from None
        except MemoryError as exc:  # the parser's buffer is capped: one term (a literal) over 16 MiB
            raise QueryError(f"{what}: a term is larger than the parser's limit of 16 MiB ({exc}); nothing was "
                             "imported") from None


class OxigraphStore(SparqlQueries):
    """:class:`~provgraph.store.base.QuadStore` on pyoxigraph (named reads in SPARQL). ``path=None`` keeps it in memory."""

    def __init__(self, path: Path | None = None, *, name: str = "memory") -> None:
        self.name = name
        self._path = path
        self.generation = 0  # bumped by every write this process makes; derived indexes compare against it
        self.knowledge_generation = 0  # bumped by writes that may touch the default graph (not by traces)
        self.source_generation = 0  # bumped by writes that may touch any graph but the traces' (urn:graph:retrieval)
        try:
            if path is None:
                self._store = ox.Store()
            else:
                path.mkdir(parents=True, exist_ok=True)
                self._store = ox.Store(str(path))
        except (OSError, RuntimeError) as exc:
            if "lock" in str(exc).lower():
                raise StoreUnavailable(
                    f"collection {name}: the store at {path} is open in another provgraph process ({exc})"
                ) from exc
            advice = failure_advice(exc, "restore a backup (provgraph restore FILE); nothing was changed")
            raise StoreError(f"collection {name}: cannot open the store at {path}: "
                             f"{_first_line(exc).removesuffix(_DAMAGED)}: {advice}") from exc

    # -- writes ---------------------------------------------------------------------------------
    def _written(self, quads: list[Quad] | None) -> None:
        """Bump the generations: ``quads`` None is a write of unknown extent."""
        self.generation += 1
        if quads is None or any(q.g is None for q in quads):
            self.knowledge_generation += 1
        if quads is None or any(q.g is not GRAPH_RETRIEVAL and q.g != GRAPH_RETRIEVAL for q in quads):
            self.source_generation += 1

    def add(self, quads: Iterable[Quad], *, atomic: bool = True) -> int:
        """Add quads in one transaction; returns how many were given.

        ``atomic=False`` loads them with the bulk loader instead: about 3x less CPU, but a failure
        may leave part of them written.
        """
        given = quads if isinstance(quads, list) else list(quads)
        items = quads_to_ox(given)
        self._written(given)
        try:
            if atomic:
                self._store.extend(items)
            else:
                self._store.bulk_extend(items)
        except (OSError, RuntimeError) as exc:
            doing = "write" if atomic else "bulk load"
            raise StoreError(f"collection {self.name}: {doing} failed: {_first_line(exc)}") from exc
        return len(items)

    def bulk_add(self, quads: Iterable[Quad]) -> int:
        """Fast, NON-transactional load of many quads (a failure may leave part written)."""
        return self.add(quads, atomic=False)

    def apply(self, *, remove: Iterable[Quad] = (), add: Iterable[Quad] = ()) -> None:
        """Remove then add in one transaction (a SPARQL update of DELETE DATA; INSERT DATA)."""
        removing = list(remove)
        adding = add if isinstance(add, list) else list(add)
        if not removing:  # a pure insert: extend() is transactional and much faster than parsing an update
            self.add(adding)
            return
        ops = [op for op in (_update_data("DELETE", removing), _update_data("INSERT", adding)) if op]
        self._run_update(" ;\n".join(ops), removing + adding)

    def update(self, sparql: str) -> None:
        """Run a SPARQL 1.1 update in one transaction (trusted text only: it has no bindings)."""
        self._run_update(sparql)

    def _run_update(self, text: str, quads: list[Quad] | None = None) -> None:
        self._written(quads)
        try:
            self._store.update(text, prefixes=PREFIXES)
        except SyntaxError as exc:
            raise QueryError(f"collection {self.name}: invalid SPARQL update: {exc}") from exc
        except (OSError, RuntimeError) as exc:
            raise StoreError(f"collection {self.name}: update failed: {_first_line(exc)}") from exc

    def clear(self) -> None:
        """Remove every quad."""
        self._written(None)
        self._store.clear()

    # -- reads ----------------------------------------------------------------------------------
    def _pattern(self, s: Subject | None, p: Iri | None, o: Term | None, g: GraphSel) -> Iterator[ox.Quad]:
        """pyoxigraph's quads for the pattern, less those whose object is not ``o``: its on-disk store also
        yields other ``xsd:integer`` objects for an integer literal (0.5.13: 1023 gives 1024…)."""
        graph = None if g is ANY else graph_to_ox(g)  # type: ignore[arg-type]
        obj = to_ox(o) if o is not None else None
        found = self._store.quads_for_pattern(
            to_ox(s) if s is not None else None,  # type: ignore[arg-type]
            to_ox(p) if p is not None else None,  # type: ignore[arg-type]
            obj,
            graph,
        )
        if obj is None or isinstance(obj, ox.NamedNode):
            return found
        return (q for q in found if q.object == obj)

    def match(
        self, s: Subject | None = None, p: Iri | None = None, o: Term | None = None, *, g: GraphSel = ANY
    ) -> Iterator[Quad]:
        """Quads matching the pattern (``g=None`` is the default graph, ``g=ANY`` every graph)."""
        found = self._pattern(s, p, o, g)
        try:
            for q in found:
                yield quad_from_ox(q)
        except (OSError, RuntimeError) as exc:
            del found  # a failed read must not keep the store (and its lock) open while its error travels
            raise StoreError(f"collection {self.name}: read failed: {_first_line(exc)}") from exc.with_traceback(None)

    def count(self, s: Subject | None = None, p: Iri | None = None, o: Term | None = None, *, g: GraphSel = ANY) -> int:
        """How many quads match the pattern."""
        pattern = self._pattern(s, p, o, g)
        try:
            return sum(1 for _ in pattern)
        except (OSError, RuntimeError) as exc:
            del pattern  # as in match()
            raise StoreError(f"collection {self.name}: read failed: {_first_line(exc)}") from exc.with_traceback(None)

    def __len__(self) -> int:
        return len(self._store)

    def facts_of_chunks(self, chunks: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        """As the SPARQL operation's, read as two fixed patterns per chunk (its subgraphs, then their facts):
        no query to plan, no row dicts, only the facts converted (60 random chunks' 1,200 facts at 20,000 chunks:
        16.5 -> 13.1 ms CPU; most of what is left is RocksDB's own read of the quoted triples)."""
        found: dict[Iri, list[TripleTerm]] = {}
        graph, derived, contains = graph_to_ox(GRAPH_SOURCE), to_ox(PROV.wasDerivedFrom), to_ox(TG.contains)
        read = self._store.quads_for_pattern
        try:
            for chunk in dict.fromkeys(chunks):
                raw = {q.object for sg in read(None, derived, to_ox(chunk), graph)  # type: ignore[arg-type]
                       for q in read(sg.subject, contains, None, graph)}  # type: ignore[arg-type]
                facts = {t for t in map(from_ox, raw) if isinstance(t, TripleTerm)}
                if facts:
                    found[chunk] = sorted(facts, key=str)
        except (OSError, RuntimeError) as exc:  # as in match()
            raise StoreError(f"collection {self.name}: read failed: {_first_line(exc)}") from exc.with_traceback(None)
        return found

    def _query(self, sparql: str, bind: Mapping[str, Term] | None) -> object:
        return ox_query(self._store, self.name, sparql + values_clause(bind), sparql)

    def raw_query(
        self, sparql: str, *, bind: Mapping[str, Term] | None = None
    ) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """The pyoxigraph result object of a user's query (for serialising SPARQL results as JSON/CSV): refused
        before parsing when nested too deep or naming ``SERVICE`` (see :mod:`provgraph.rdf.nesting`)."""
        check_query(sparql, f"collection {self.name}: invalid SPARQL")
        return self._query(sparql, bind)  # type: ignore[return-value]

    def select(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> SelectResult:
        """Run a SPARQL SELECT; values in ``bind`` are substituted, never spliced into text."""
        result = self._query(sparql, bind)
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError(f"collection {self.name}: not a SELECT query")
        variables = [v.value for v in result.variables]
        try:
            rows: list[Row] = [
                {name: from_ox(value) for name, value in zip(variables, sol) if value is not None} for sol in result
            ]
        except (OSError, ValueError) as exc:
            del result  # as in match(): the rows' frame goes with the cause's traceback
            raise _query_failure(self.name, exc) from exc.with_traceback(None)
        return SelectResult(variables, rows)

    def fact_support(self) -> list[tuple[TripleTerm, int]]:
        """As the SPARQL operation's, reading the solutions straight (no row dicts; 400,000 facts at 20,000 chunks)."""
        result = self._query(SUPPORT, None)
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError(f"collection {self.name}: not a SELECT query")
        try:
            rows = [(sol[0], sol[1]) for sol in result]
        except (OSError, ValueError) as exc:
            del result  # as in select()
            raise _query_failure(self.name, exc) from exc.with_traceback(None)
        facts = triples_from_ox(t for t, _ in rows if isinstance(t, ox.Triple))
        counts = [int(n.value) for t, n in rows if isinstance(t, ox.Triple)]
        keyed = sorted(zip((str(f) for f in facts), facts, counts), key=lambda kfn: kfn[0])
        return [(f, n) for _, f, n in keyed]

    def ask(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> bool:
        """Run a SPARQL ASK."""
        result = self._query(sparql, bind)
        if not isinstance(result, ox.QueryBoolean):
            raise QueryError(f"collection {self.name}: not an ASK query")
        return bool(result)

    def construct(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> list[Quad]:
        """Run a SPARQL CONSTRUCT; triples come back as default-graph quads."""
        result = self._query(sparql, bind)
        if not isinstance(result, ox.QueryTriples):
            raise QueryError(f"collection {self.name}: not a CONSTRUCT query")
        return [Quad(from_ox(t.subject), from_ox(t.predicate), from_ox(t.object)) for t in result]  # type: ignore[arg-type]

    # -- files ----------------------------------------------------------------------------------
    def export(self, out: BinaryIO, fmt: RdfFormat = "nquads") -> None:
        """Write every quad of every graph (triple terms included) to ``out``."""
        self._store.dump(out, format=OX_FORMATS[fmt])

    def export_bytes(self, fmt: RdfFormat = "nquads") -> bytes:
        """Every quad, serialised."""
        buf = io.BytesIO()
        self.export(buf, fmt)
        return buf.getvalue()

    def import_data(self, data: bytes | Path, fmt: RdfFormat = "nquads", *, bulk: bool = False) -> int:
        """Add every quad, in bounded memory; a syntax error imports nothing.

        The text is read twice: a check that parses everything and keeps nothing (so bad input writes
        nothing), then the writes, in transactions of ``IMPORT_BATCH`` quads (one transaction for the
        whole file held 14x the N-Quads at peak; batches hold what one batch takes, measured by
        bench/import_memory.py). ``bulk`` writes with the bulk loader instead (about 3x less CPU, no
        transaction: for a store nobody reads meanwhile, as restore's staging copy). A failure of the
        disk between batches leaves the batches before it written, and says so: importing the same
        text again adds the rest (a quad already there is kept once).
        """
        written, checked, size = 0, 0, _BATCH if bulk else IMPORT_BATCH
        try:
            checked = sum(1 for _ in parse_rdf(self.name, data, fmt))
            self._written(None)
            batch: list[ox.Quad] = []
            for quad in parse_rdf(self.name, data, fmt):
                batch.append(quad)
                if len(batch) == size:
                    self._extend(batch, bulk)
                    written += len(batch)
                    batch.clear()
                    if not bulk and self._path is not None and written % (10 * size) == 0:
                        self._store.flush()  # RocksDB's write buffers otherwise grow with the file
            self._extend(batch, bulk)
            written += len(batch)
        except OSError as exc:
            done = f" after {written} of {checked} quads (importing it again adds the rest)" if written else ""
            raise StoreError(f"collection {self.name}: import failed{done}: {_first_line(exc)}") from exc
        assert written == checked
        return written

    def _extend(self, batch: list[ox.Quad], bulk: bool) -> None:
        # no local may hold the pyoxigraph store (e.g. a bound ``extend``): a traceback kept by the caller
        # would keep its frame, and the store's lock with it, after close()
        if bulk:
            self._store.bulk_extend(batch)
        else:
            self._store.extend(batch)

    def flush(self) -> None:
        """Persist pending writes (a full disk raises the OSError itself, so its cause is reported)."""
        try:
            self._store.flush()
        except RuntimeError as exc:
            raise StoreError(f"collection {self.name}: flush failed: {_first_line(exc)}") from exc

    def close(self) -> None:
        """Release the store and its lock (also when the last flush fails: no frame keeps the store then)."""
        if getattr(self, "_store", None) is not None:
            try:
                if self._path is not None:
                    self.flush()
            finally:
                del self._store

    def __enter__(self) -> OxigraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
