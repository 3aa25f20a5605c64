"""The named read operations (store/queries.py) in SQL over the PostgreSQL store's quad table.

Each is one statement (joins on the quad table's indexes; term ids of the vocabulary are
parameters), then one dictionary read for the terms of its rows. Where a node has several
values of an optional property the least is kept, as the SPARQL implementation does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import DC, GRAPH_RETRIEVAL, GRAPH_SOURCE, PROV, RDF, RDFS, TG
from provgraph.store.pg_terms import DEFAULT_GRAPH, term_id
from provgraph.store.queries import ChunkExtraction, DocumentHead, PartRow, QuestionRow, SourceRow, TraceRow
from provgraph.store.queries_oxigraph import least

__all__ = ["SqlQueries"]

_VOCAB = {"src": GRAPH_SOURCE, "ret": GRAPH_RETRIEVAL, "type": RDF.type, "label": RDFS.label, "title": DC.title,
          "der": PROV.wasDerivedFrom, "gen": PROV.wasGeneratedBy, "informed": PROV.wasInformedBy,
          "started": PROV.startedAtTime, "assoc": PROV.wasAssociatedWith, "subgraph": TG.Subgraph,
          "document": TG.Document, "question": TG.Question, "contains": TG.contains, "edge": TG.edge,
          "sel_edge": TG.selectedEdge, "sel_chunk": TG.selectedChunk, "citation": TG.citation,
          "chunk_sel": TG.chunkSelection, "affected": TG.affectedTrace, "query": TG.query, "mime": TG.mimeType,
          "pages": TG.pageCount, "pnum": TG.pageNumber, "cidx": TG.chunkIndex, "coff": TG.charOffset,
          "clen": TG.charLength, "evidence": TG.evidence}
_C: dict[str, Any] = {k: term_id(v) for k, v in _VOCAB.items()}
_C["kinds"] = [term_id(k) for k in (TG.GraphRagQuestion, TG.DocRagQuestion, TG.AgentQuestion, TG.GlobalRagQuestion)]
_C["parts"] = [term_id(k) for k in (TG.Page, TG.Section, TG.Chunk)]
_C["step_parts"] = [term_id(k) for k in (TG.selectedEdge, TG.chunkSelection, TG.citation, TG.seed, TG.rankedPassage)]
_C["dg"] = DEFAULT_GRAPH


def _q(alias: str, s: str, p: str, graph: str = "src") -> str:
    """A join condition: quad ``alias`` in ``graph`` with subject ``s`` and predicate ``p`` (a vocabulary name)."""
    return f"{alias}.g = %({graph})s AND {alias}.s = {s} AND {alias}.p = %({p})s"


_LABELS = "SELECT s, o FROM {s}.quads WHERE g = %(dg)s AND p = %(label)s AND s = ANY(%(ids)s)"
_DERIVED = """WITH d1 AS (SELECT s FROM {s}.quads WHERE g = %(src)s AND p = %(der)s AND o = %(doc)s),
d2 AS (SELECT q.s FROM {s}.quads q JOIN d1 ON q.o = d1.s WHERE q.g = %(src)s AND q.p = %(der)s),
d3 AS (SELECT q.s FROM {s}.quads q JOIN d2 ON q.o = d2.s WHERE q.g = %(src)s AND q.p = %(der)s),
n AS (SELECT s FROM d1 UNION SELECT s FROM d2 UNION SELECT s FROM d3)
SELECT n.s, EXISTS (SELECT 1 FROM {s}.quads t WHERE t.s = n.s AND t.p = %(type)s AND t.o = %(subgraph)s
  AND t.g = %(src)s) FROM n"""
_TRACE_EDGES = f"""SELECT DISTINCT f.o, c.o FROM {{s}}.quads c
JOIN {{s}}.quads e ON e.g = %(ret)s AND e.p = %(edge)s AND e.o = c.o
JOIN {{s}}.quads fe ON fe.g = %(ret)s AND fe.p = %(sel_edge)s AND fe.o = e.s
JOIN {{s}}.quads f ON {_q("f", "fe.s", "gen", "ret")}
WHERE c.g = %(src)s AND c.p = %(contains)s AND c.s = ANY(%(ids)s)"""
_TRACE_CHUNKS = f"""SELECT gen.o, sc.o FROM {{s}}.quads sc JOIN {{s}}.quads gen ON {_q("gen", "sc.s", "gen", "ret")}
WHERE sc.g = %(ret)s AND sc.p = %(sel_chunk)s AND sc.o = ANY(%(ids)s)
UNION SELECT gen.o, sc.o FROM {{s}}.quads sc
JOIN {{s}}.quads cit ON cit.g = %(ret)s AND cit.p = %(citation)s AND cit.o = sc.s
JOIN {{s}}.quads gen ON {_q("gen", "cit.s", "gen", "ret")}
WHERE sc.g = %(ret)s AND sc.p = %(sel_chunk)s AND sc.o = ANY(%(ids)s)"""
_QUESTION = f"""FROM {{s}}.quads t
LEFT JOIN {{s}}.quads k ON {_q("k", "t.s", "type", "ret")} AND k.o = ANY(%(kinds)s)
LEFT JOIN {{s}}.quads par ON {_q("par", "t.s", "informed", "ret")}"""
_SUMMARIES = f"""SELECT t.s, k.o, qq.o, st.o, par.o {_QUESTION}
JOIN {{s}}.quads qq ON {_q("qq", "t.s", "query", "ret")}
JOIN {{s}}.quads st ON {_q("st", "t.s", "started", "ret")}
WHERE t.g = %(ret)s AND t.p = %(type)s AND t.o = %(question)s"""
_RESOLVE = f"""SELECT DISTINCT t.s, k.o, par.o {_QUESTION}
WHERE t.g = %(ret)s AND t.p = %(type)s AND t.o = %(question)s AND t.s = ANY(%(ids)s)"""
_TRACE = """WITH RECURSIVE qs(q) AS (SELECT %(q)s::bigint
  UNION SELECT i.s FROM {s}.quads i JOIN qs ON i.o = qs.q WHERE i.g = %(ret)s AND i.p = %(informed)s),
steps AS (SELECT s FROM {s}.quads WHERE g = %(ret)s AND p = %(gen)s AND o IN (SELECT q FROM qs)),
parts AS (SELECT o AS s FROM {s}.quads WHERE g = %(ret)s AND p = ANY(%(step_parts)s) AND s IN (SELECT s FROM steps)),
retracted AS (SELECT s FROM {s}.quads WHERE g = %(ret)s AND p = %(affected)s AND o IN (SELECT q FROM qs)),
subjects AS (SELECT q AS s FROM qs UNION SELECT s FROM steps UNION SELECT s FROM parts UNION SELECT s FROM retracted)
SELECT x.s, x.p, x.o FROM {s}.quads x JOIN subjects ON x.s = subjects.s WHERE x.g = %(ret)s"""
_HEAD = f"""SELECT ti.o, mi.o, pg.o FROM {{s}}.quads d
LEFT JOIN {{s}}.quads ti ON {_q("ti", "d.s", "title")} LEFT JOIN {{s}}.quads mi ON {_q("mi", "d.s", "mime")}
LEFT JOIN {{s}}.quads pg ON {_q("pg", "d.s", "pages")}
WHERE d.g = %(src)s AND d.s = %(doc)s AND d.p = %(type)s AND d.o = %(document)s"""
_PARTS = f"""WITH n AS (SELECT s AS node, o AS parent FROM {{s}}.quads WHERE g = %(src)s AND p = %(der)s AND o = %(doc)s
  UNION SELECT q2.s, q2.o FROM {{s}}.quads q1 JOIN {{s}}.quads q2 ON q2.o = q1.s AND q2.g = %(src)s AND q2.p = %(der)s
  WHERE q1.g = %(src)s AND q1.p = %(der)s AND q1.o = %(doc)s)
SELECT n.node, k.o, n.parent, lab.o, num.o, idx.o, off.o, len.o FROM n
JOIN {{s}}.quads k ON {_q("k", "n.node", "type")} AND k.o = ANY(%(parts)s)
LEFT JOIN {{s}}.quads lab ON {_q("lab", "n.node", "label")} LEFT JOIN {{s}}.quads num ON {_q("num", "n.node", "pnum")}
LEFT JOIN {{s}}.quads idx ON {_q("idx", "n.node", "cidx")} LEFT JOIN {{s}}.quads off ON {_q("off", "n.node", "coff")}
LEFT JOIN {{s}}.quads len ON {_q("len", "n.node", "clen")}"""
_EXTRACTIONS = f"""SELECT DISTINCT d.o, c.o, lab.o FROM {{s}}.quads d
JOIN {{s}}.quads t ON {_q("t", "d.s", "type")} AND t.o = %(subgraph)s
JOIN {{s}}.quads gen ON {_q("gen", "d.s", "gen")} JOIN {{s}}.quads ag ON {_q("ag", "gen.o", "assoc")}
JOIN {{s}}.quads lab ON {_q("lab", "ag.o", "label")} LEFT JOIN {{s}}.quads c ON {_q("c", "d.s", "contains")}
WHERE d.g = %(src)s AND d.p = %(der)s AND d.o = ANY(%(ids)s)"""
_CHUNK_FACTS = f"""SELECT d.o, c.o FROM {{s}}.quads d JOIN {{s}}.quads c ON {_q("c", "d.s", "contains")}
WHERE d.g = %(src)s AND d.p = %(der)s AND d.o = ANY(%(ids)s)"""
_OF_SUBGRAPHS = "SELECT s, o FROM {s}.quads WHERE g = %%(src)s AND p = %%(%s)s AND s = ANY(%%(ids)s)"
_CHAIN = f"""JOIN {{s}}.quads ci ON {_q("ci", "ch", "cidx")} JOIN {{s}}.quads co ON {_q("co", "ch", "coff")}
JOIN {{s}}.quads cl ON {_q("cl", "ch", "clen")} JOIN {{s}}.quads par ON {_q("par", "ch", "der")}
LEFT JOIN {{s}}.quads pn ON {_q("pn", "par.o", "pnum")} LEFT JOIN {{s}}.quads pl ON {_q("pl", "par.o", "label")}
LEFT JOIN {{s}}.quads pd ON {_q("pd", "par.o", "der")} LEFT JOIN {{s}}.quads ti ON {_q("ti", "COALESCE(pd.o, par.o)", "title")}"""
_CHAIN_COLS = "ch, ci.o, co.o, cl.o, par.o, pn.o, pl.o, pd.o, ti.o"
_EDGE_SOURCES = f"""SELECT e.i - 1, c.s, {_CHAIN_COLS}, {{ev}} FROM unnest(%(ids)s::bigint[]) WITH ORDINALITY AS e(t, i)
JOIN {{s}}.quads c ON c.g = %(src)s AND c.p = %(contains)s AND c.o = e.t
CROSS JOIN LATERAL (SELECT d.o AS ch FROM {{s}}.quads d WHERE {_q("d", "c.s", "der")}) AS chunk
{_CHAIN} {{ev_join}}"""
_CHUNK_SOURCES = f"""SELECT NULL::bigint, NULL::bigint, {_CHAIN_COLS}, NULL::bigint FROM unnest(%(ids)s::bigint[]) AS u(ch)
{_CHAIN}"""


_SUPPORT = "SELECT o, count(*) FROM {s}.quads WHERE g = %(src)s AND p = %(contains)s GROUP BY o"


def _ids(terms: Iterable[Term]) -> list[int]:
    return list(dict.fromkeys(term_id(t) for t in terms))


def _moment(started: Literal) -> datetime:
    value = started.to_python()
    return value if isinstance(value, datetime) else datetime.min.replace(tzinfo=timezone.utc)


class SqlQueries:
    """The :class:`~provgraph.store.queries.NamedQueries` of :class:`~provgraph.store.postgres.PostgresStore` (a mixin)."""

    def _fetch(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = (), doing: str = "read") -> list[tuple[Any, ...]]:
        raise NotImplementedError  # the store's own

    def _decode(self, ids: Iterable[int]) -> dict[int, Term]:
        raise NotImplementedError  # the store's own

    def _rows(self, sql: str, **params: Any) -> list[tuple[Term | None, ...]]:
        """The rows of ``sql`` with every id decoded (NULL stays None)."""
        rows = self._fetch(sql, {**_C, **params})
        terms = self._decode(i for r in rows for i in r if i is not None)
        return [tuple(None if i is None else terms[i] for i in r) for r in rows]

    def _pairs(self, sql: str, terms: Sequence[Term], **params: Any) -> dict[Iri, list[Any]]:
        found: dict[Iri, set[Any]] = defaultdict(set)
        for k, v in self._rows(sql, ids=_ids(terms), **params):
            if isinstance(k, Iri):
                found[k].add(v)
        return {k: sorted(v, key=str) for k, v in found.items()}

    def labels(self, iris: Sequence[Iri]) -> dict[Iri, list[Literal]]:
        found = self._pairs(_LABELS, iris)
        return {k: out for k, v in found.items() if (out := [x for x in v if isinstance(x, Literal)])}

    def derived_nodes(self, document: Iri) -> dict[Iri, bool]:
        rows = self._fetch(_DERIVED, {**_C, "doc": term_id(document)})
        terms = self._decode(r[0] for r in rows)
        return {terms[i]: bool(flag) for i, flag in rows if isinstance(terms[i], Iri)}  # type: ignore[misc]

    def traces_using_edges(self, subgraphs: Sequence[Iri]) -> list[tuple[Iri, TripleTerm]]:
        rows = self._rows(_TRACE_EDGES, ids=_ids(subgraphs)) if subgraphs else []
        return sorted({r for r in rows if isinstance(r[0], Iri) and isinstance(r[1], TripleTerm)}, key=str)  # type: ignore[misc]

    def traces_using_chunks(self, chunks: Sequence[Iri]) -> list[tuple[Iri, Iri]]:
        rows = self._rows(_TRACE_CHUNKS, ids=_ids(chunks)) if chunks else []
        return sorted({r for r in rows if isinstance(r[0], Iri) and isinstance(r[1], Iri)}, key=str)  # type: ignore[misc]

    def trace_summaries(self, *, include_sub_traces: bool, limit: int | None) -> list[TraceRow]:
        groups: dict[Iri, list[tuple[Term | None, ...]]] = defaultdict(list)
        for row in self._rows(_SUMMARIES):
            if isinstance(row[0], Iri) and isinstance(row[2], Literal) and isinstance(row[3], Literal):
                groups[row[0]].append(row)
        out: list[TraceRow] = []
        for q, rows in groups.items():
            parent = least(r[4] for r in rows)
            if parent is not None and not include_sub_traces:
                continue
            started = min((r[3] for r in rows), key=lambda t: (_moment(t), str(t)))  # type: ignore[arg-type]
            out.append(TraceRow(q, least(r[1] for r in rows), least(r[2] for r in rows), started, parent))  # type: ignore[arg-type,misc]
        out.sort(key=lambda r: r.question.value)
        out.sort(key=lambda r: _moment(r.started), reverse=True)
        return out if limit is None else out[:limit]

    def resolve_questions(self, candidates: Sequence[Iri]) -> list[QuestionRow]:
        rows = self._rows(_RESOLVE, ids=_ids(candidates)) if candidates else []
        found = {QuestionRow(*r) for r in rows if isinstance(r[0], Iri)}  # type: ignore[arg-type]
        return sorted(found, key=lambda r: (str(r.question), str(r.kind), str(r.parent)))

    def trace_triples(self, question: Iri) -> list[tuple[Iri, Iri, Term]]:
        return sorted(set(self._rows(_TRACE, q=term_id(question))), key=str)  # type: ignore[arg-type]

    def document_head(self, document: Iri) -> DocumentHead | None:
        rows = self._rows(_HEAD, doc=term_id(document))
        return DocumentHead(*(least(r[i] for r in rows) for i in range(3))) if rows else None  # type: ignore[arg-type]

    def document_parts(self, document: Iri) -> list[PartRow]:
        groups: dict[tuple[Term | None, ...], list[tuple[Term | None, ...]]] = defaultdict(list)
        for row in self._rows(_PARTS, doc=term_id(document)):
            groups[row[:3]].append(row)
        out = [PartRow(*key, *(least(r[i] for r in rows) for i in range(3, 8)))  # type: ignore[arg-type]
               for key, rows in groups.items()]
        return sorted(out, key=lambda p: (str(p.node), str(p.kind), str(p.parent)))

    def chunk_extractions(self, chunks: Sequence[Iri]) -> dict[Iri, ChunkExtraction]:
        components: dict[Iri, set[str]] = defaultdict(set)
        facts: dict[Iri, set[TripleTerm]] = defaultdict(set)
        for chunk, fact, comp in (self._rows(_EXTRACTIONS, ids=_ids(chunks)) if chunks else []):
            if isinstance(chunk, Iri) and isinstance(comp, Literal):
                components[chunk].add(comp.value)
                if isinstance(fact, TripleTerm):
                    facts[chunk].add(fact)
        return {c: ChunkExtraction(tuple(sorted(v)), tuple(sorted(facts[c], key=str))) for c, v in components.items()}

    def facts_of_chunks(self, chunks: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        found = self._pairs(_CHUNK_FACTS, chunks) if chunks else {}
        return {k: out for k, v in found.items() if (out := [x for x in v if isinstance(x, TripleTerm)])}

    def facts_of_subgraphs(self, subgraphs: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        found = self._pairs(_OF_SUBGRAPHS % "contains", subgraphs) if subgraphs else {}
        return {k: out for k, v in found.items() if (out := [x for x in v if isinstance(x, TripleTerm)])}

    def evidence_of_subgraphs(self, subgraphs: Sequence[Iri]) -> dict[Iri, Literal]:
        found = self._pairs(_OF_SUBGRAPHS % "evidence", subgraphs) if subgraphs else {}
        return {k: pick for k, v in found.items() if (pick := least(x for x in v if isinstance(x, Literal)))}

    def _sources(self, sql: str, terms: Sequence[Term]) -> list[SourceRow]:
        groups: dict[tuple[int | None, Term | None], list[list[Term | None]]] = defaultdict(list)
        rows = self._fetch(sql, {**_C, "ids": [term_id(t) for t in terms]})
        decoded = self._decode(i for r in rows for i in r[1:] if i is not None)
        for edge, *ids in rows:
            row = [None if i is None else decoded[i] for i in ids]
            groups[(edge, row[0] if edge is not None else row[1])].append(row)
        out = []
        for (edge, _), rows_of in groups.items():
            sg, chunk, cidx, coff, clen, parent, pnum, plabel, pdoc, title, ev = (
                least(r[i] for r in rows_of) for i in range(11))
            out.append(SourceRow(edge, sg, chunk, cidx, coff, clen, parent, pnum, plabel, pdoc, title, ev))  # type: ignore[arg-type]
        return out

    def edge_sources(self, edges: Sequence[TripleTerm], *, evidence: bool = False) -> list[SourceRow]:
        if not edges:
            return []
        sql = _EDGE_SOURCES.replace("{ev}", "ev.o" if evidence else "NULL::bigint").replace(
            "{ev_join}", f"LEFT JOIN {{s}}.quads ev ON {_q('ev', 'c.s', 'evidence')}" if evidence else "")
        found = self._sources(sql, edges)
        return sorted(found, key=lambda r: (r.edge, str(r.subgraph)))

    def fact_support(self) -> list[tuple[TripleTerm, int]]:
        rows = self._fetch(_SUPPORT, _C)
        terms = self._decode(r[0] for r in rows)
        out = [(terms[o], int(n)) for o, n in rows if isinstance(terms[o], TripleTerm)]
        return sorted(out, key=lambda tn: str(tn[0]))  # type: ignore[arg-type,return-value]

    def chunk_sources(self, chunks: Sequence[Iri]) -> list[SourceRow]:
        unique = list(dict.fromkeys(chunks))
        by_chunk = {r.chunk: r for r in self._sources(_CHUNK_SOURCES, unique)} if unique else {}
        return [by_chunk[c] for c in unique if c in by_chunk]
