"""The named read operations (store/queries.py) in SPARQL, for stores with a SPARQL engine (pyoxigraph).

Terms are inlined in ``VALUES`` in their canonical N-Triples form (IRIs validated, literals fully
escaped), so they are data, never query structure; long lists go in batches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.store.base import Row, SelectResult
from provgraph.store.queries import ChunkExtraction, DocumentHead, PartRow, QuestionRow, SourceRow, TraceRow

__all__ = ["SparqlQueries", "least", "SUPPORT"]

_BATCH = 500  # terms per VALUES block
_TRUE = Literal("true", datatype=Iri("http://www.w3.org/2001/XMLSchema#boolean"))
T = TypeVar("T", bound=Term)


def least(values: Iterable[T | None]) -> T | None:
    """The smallest term by canonical text (None for none): the pick when a property has several values."""
    present = [v for v in values if v is not None]
    return min(present, key=str) if present else None


def _batches(terms: Sequence[Term]) -> Iterator[str]:
    unique = list(dict.fromkeys(terms))
    for i in range(0, len(unique), _BATCH):
        yield " ".join(str(t) for t in unique[i:i + _BATCH])


_LABELS = "SELECT ?t ?l WHERE {{ VALUES ?t {{ {values} }} ?t rdfs:label ?l }}"

# The document's IRI at the start of the pattern, so the engine walks down from it.
# joins, not property paths: pyoxigraph evaluated the paths from every prov:wasDerivedFrom (100 ms a document at
# 3,000 chunks, growing with the store; 2 ms as joins from the bound document)
_DERIVED = """SELECT DISTINCT ?node ?subgraph WHERE {{ GRAPH <urn:graph:source> {{
  VALUES ?doc {{ {doc} }}
  {{ ?node prov:wasDerivedFrom ?doc }}
  UNION {{ ?a prov:wasDerivedFrom ?doc . ?node prov:wasDerivedFrom ?a }}
  UNION {{ ?a prov:wasDerivedFrom ?doc . ?b prov:wasDerivedFrom ?a . ?node prov:wasDerivedFrom ?b }}
  BIND(EXISTS {{ ?node a tg:Subgraph }} AS ?subgraph)
}} }}"""
_TRACE_EDGES = """SELECT DISTINCT ?q ?t WHERE {{
  GRAPH <urn:graph:source> {{ VALUES ?sg {{ {values} }} ?sg tg:contains ?t }}
  GRAPH <urn:graph:retrieval> {{ ?sel tg:edge ?t . ?focus tg:selectedEdge ?sel ; prov:wasGeneratedBy ?q }}
}}"""
_TRACE_CHUNKS = """SELECT DISTINCT ?q ?c WHERE {{ GRAPH <urn:graph:retrieval> {{
  VALUES ?c {{ {values} }}
  {{ ?step tg:selectedChunk ?c ; prov:wasGeneratedBy ?q }}
  UNION {{ ?cit tg:selectedChunk ?c . ?step tg:citation ?cit ; prov:wasGeneratedBy ?q }}
}} }}"""
_KINDS = "FILTER(?kind IN (tg:GraphRagQuestion, tg:DocRagQuestion, tg:AgentQuestion, tg:GlobalRagQuestion))"
_LIST = """SELECT ?q (SAMPLE(?kind) AS ?k) (SAMPLE(?query) AS ?text) (MIN(?started) AS ?start) (SAMPLE(?parent) AS ?p)
WHERE {{ GRAPH <urn:graph:retrieval> {{
  ?q a tg:Question ; tg:query ?query ; prov:startedAtTime ?started .
  OPTIONAL {{ ?q a ?kind %s }}
  OPTIONAL {{ ?q prov:wasInformedBy ?parent }}
  {filter}
}} }}
GROUP BY ?q
ORDER BY DESC(?start) ?q{limit}""" % _KINDS
_RESOLVE = """SELECT ?q ?kind ?parent WHERE {{ GRAPH <urn:graph:retrieval> {{
  VALUES ?q {{ {values} }}
  ?q a tg:Question .
  OPTIONAL {{ ?q a ?kind %s }}
  OPTIONAL {{ ?q prov:wasInformedBy ?parent }}
}} }}""" % _KINDS
# Every branch starts from the constant question IRI: a zero-length path (``*``) or a BIND from an
# unbound variable would make the engine scan every node of the graph (800 ms at 1,000 traces). A step's
# parts are read by a path, not VALUES: with VALUES the store joined every step's parts of every trace.
_PARTS = "(tg:selectedEdge|tg:chunkSelection|tg:citation|tg:seed|tg:rankedPassage)"
_TRACE = """SELECT ?s ?p ?o WHERE {{ GRAPH <urn:graph:retrieval> {{
  {{ VALUES ?s {{ {q} }} ?s ?p ?o }}
  UNION {{ ?s prov:wasGeneratedBy {q} . ?s ?p ?o }}
  UNION {{ ?step prov:wasGeneratedBy {q} ; {parts} ?s . ?s ?p ?o }}
  UNION {{ ?s tg:affectedTrace {q} . ?s ?p ?o }}
  UNION {{ ?s prov:wasInformedBy+ {q} . ?s ?p ?o }}
  UNION {{ ?tq prov:wasInformedBy+ {q} . ?s prov:wasGeneratedBy ?tq . ?s ?p ?o }}
  UNION {{ ?tq prov:wasInformedBy+ {q} . ?step prov:wasGeneratedBy ?tq ; {parts} ?s . ?s ?p ?o }}
  UNION {{ ?tq prov:wasInformedBy+ {q} . ?s tg:affectedTrace ?tq . ?s ?p ?o }}
}} }}"""
_HEAD = """SELECT ?title ?mime ?pages WHERE {{ GRAPH <urn:graph:source> {{ VALUES ?doc {{ {doc} }} ?doc a tg:Document .
  OPTIONAL {{ ?doc dc:title ?title }} OPTIONAL {{ ?doc tg:mimeType ?mime }} OPTIONAL {{ ?doc tg:pageCount ?pages }} }} }}"""
_PARTS_OF = """SELECT ?node ?kind ?parent ?label ?num ?idx ?off ?len WHERE {{ GRAPH <urn:graph:source> {{
  VALUES ?doc {{ {doc} }}
  {{ ?node prov:wasDerivedFrom ?doc . BIND(?doc AS ?parent) }}
  UNION {{ ?node prov:wasDerivedFrom ?parent . ?parent prov:wasDerivedFrom ?doc }}
  ?node a ?kind . FILTER(?kind IN (tg:Page, tg:Section, tg:Chunk))
  OPTIONAL {{ ?node rdfs:label ?label }} OPTIONAL {{ ?node tg:pageNumber ?num }} OPTIONAL {{ ?node tg:chunkIndex ?idx }}
  OPTIONAL {{ ?node tg:charOffset ?off }} OPTIONAL {{ ?node tg:charLength ?len }}
}} }}"""
_EXTRACTIONS = """SELECT ?chunk ?fact ?component WHERE {{ GRAPH <urn:graph:source> {{
  VALUES ?chunk {{ {values} }}
  ?sg prov:wasDerivedFrom ?chunk ; a tg:Subgraph ; prov:wasGeneratedBy ?act .
  ?act prov:wasAssociatedWith ?agent . ?agent rdfs:label ?component .
  OPTIONAL {{ ?sg tg:contains ?fact }}
}} }}"""
# numbered in VALUES, so a row names its chunk or edge by a small integer (no term to read back)
_CHUNK_FACTS = ("SELECT ?i ?t WHERE {{ GRAPH <urn:graph:source> {{ VALUES (?i ?chunk) {{ {values} }} "
                "?sg prov:wasDerivedFrom ?chunk ; tg:contains ?t . }} }}")
_SUBGRAPH_FACTS = "SELECT ?sg ?t WHERE {{ GRAPH <urn:graph:source> {{ VALUES ?sg {{ {values} }} ?sg tg:contains ?t }} }}"
_EVIDENCE = "SELECT ?sg ?ev WHERE {{ GRAPH <urn:graph:source> {{ VALUES ?sg {{ {values} }} ?sg tg:evidence ?ev }} }}"
_CHAIN = """
    ?chunk tg:chunkIndex ?cidx ; tg:charOffset ?coff ; tg:charLength ?clen ; prov:wasDerivedFrom ?parent .
    OPTIONAL { ?parent tg:pageNumber ?pnum }
    OPTIONAL { ?parent rdfs:label ?plabel }
    OPTIONAL { ?parent prov:wasDerivedFrom ?pdoc }
    BIND(COALESCE(?pdoc, ?parent) AS ?doc)
    OPTIONAL { ?doc dc:title ?title }
"""
_EDGE_SOURCES = ("SELECT ?i ?sg ?chunk ?cidx ?coff ?clen ?parent ?pnum ?plabel ?pdoc ?title ?ev WHERE {{\n"
                 "  GRAPH <urn:graph:source> {{\n    VALUES (?i ?t) {{ {values} }}\n"
                 "    ?sg tg:contains ?t ; prov:wasDerivedFrom ?chunk .\n{chain}  }}\n}}")
SUPPORT = "SELECT ?t (COUNT(?sg) AS ?n) WHERE { GRAPH <urn:graph:source> { ?sg tg:contains ?t } } GROUP BY ?t"
_CHUNK_SOURCES = ("SELECT ?chunk ?cidx ?coff ?clen ?parent ?pnum ?plabel ?pdoc ?title WHERE {{\n"
                  "  GRAPH <urn:graph:source> {{\n    VALUES ?chunk {{ {values} }}\n{chain}  }}\n}}")


def _sorted(values: Iterable[T]) -> list[T]:
    return sorted(set(values), key=str)


def _source(rows: list[Row], edge: int | None) -> SourceRow:
    """One SourceRow from the rows of one (edge, subgraph, chunk): each optional value the least."""
    first = rows[0]

    def pick(name: str) -> Term | None:
        return least(r.get(name) for r in rows)

    return SourceRow(edge, first.get("sg"), first["chunk"], pick("cidx"), pick("coff"), pick("clen"),  # type: ignore[arg-type]
                     first["parent"], pick("pnum"), pick("plabel"), pick("pdoc"), pick("title"), pick("ev"))  # type: ignore[arg-type]


class SparqlQueries:
    """The :class:`~provgraph.store.queries.NamedQueries` of a store that runs SPARQL SELECTs (a mixin)."""

    def select(self, sparql: str, *, bind: Mapping[str, Term] | None = None) -> SelectResult:
        raise NotImplementedError  # the store's own

    def _rows(self, template: str, terms: Sequence[Term], **extra: str) -> list[Row]:
        out: list[Row] = []
        for values in _batches(terms):
            out += self.select(template.format(values=values, **extra)).rows
        return out

    def _grouped(self, template: str, terms: Sequence[Term], key: str, value: str) -> dict[Iri, list[TripleTerm]]:
        found: dict[Iri, set[TripleTerm]] = defaultdict(set)
        for row in self._rows(template, terms):
            k, v = row.get(key), row.get(value)
            if isinstance(k, Iri) and isinstance(v, TripleTerm):
                found[k].add(v)
        return {k: _sorted(v) for k, v in found.items()}

    def labels(self, iris: Sequence[Iri]) -> dict[Iri, list[Literal]]:
        found: dict[Iri, set[Literal]] = defaultdict(set)
        for row in self._rows(_LABELS, iris):
            t, label = row.get("t"), row.get("l")
            if isinstance(t, Iri) and isinstance(label, Literal):
                found[t].add(label)
        return {t: _sorted(v) for t, v in found.items()}

    def derived_nodes(self, document: Iri) -> dict[Iri, bool]:
        rows = self.select(_DERIVED.format(doc=document))
        return {r["node"]: r.get("subgraph") == _TRUE for r in rows if isinstance(r.get("node"), Iri)}  # type: ignore[misc]

    def traces_using_edges(self, subgraphs: Sequence[Iri]) -> list[tuple[Iri, TripleTerm]]:
        return sorted({(r["q"], r["t"]) for r in self._rows(_TRACE_EDGES, subgraphs)  # type: ignore[misc]
                       if isinstance(r.get("q"), Iri) and isinstance(r.get("t"), TripleTerm)}, key=str)

    def traces_using_chunks(self, chunks: Sequence[Iri]) -> list[tuple[Iri, Iri]]:
        return sorted({(r["q"], r["c"]) for r in self._rows(_TRACE_CHUNKS, chunks)  # type: ignore[misc]
                       if isinstance(r.get("q"), Iri) and isinstance(r.get("c"), Iri)}, key=str)

    def trace_summaries(self, *, include_sub_traces: bool, limit: int | None) -> list[TraceRow]:
        query = _LIST.format(filter="" if include_sub_traces else "FILTER(!BOUND(?parent))",
                             limit=f"\nLIMIT {int(limit)}" if limit is not None else "")
        out: list[TraceRow] = []
        for row in self.select(query):
            q, text, started, kind, parent = (row.get(k) for k in ("q", "text", "start", "k", "p"))
            if isinstance(q, Iri) and isinstance(text, Literal) and isinstance(started, Literal):
                out.append(TraceRow(q, kind if isinstance(kind, Iri) else None, text, started,
                                    parent if isinstance(parent, Iri) else None))
        return out

    def resolve_questions(self, candidates: Sequence[Iri]) -> list[QuestionRow]:
        rows = {QuestionRow(r["q"], r.get("kind"), r.get("parent"))  # type: ignore[arg-type]
                for r in self._rows(_RESOLVE, candidates) if isinstance(r.get("q"), Iri)}
        return sorted(rows, key=lambda r: (str(r.question), str(r.kind), str(r.parent)))

    def trace_triples(self, question: Iri) -> list[tuple[Iri, Iri, Term]]:
        rows = self.select(_TRACE.format(q=question, parts=_PARTS))
        return sorted({(r["s"], r["p"], r["o"]) for r in rows if {"s", "p", "o"} <= r.keys()}, key=str)  # type: ignore[misc]

    def document_head(self, document: Iri) -> DocumentHead | None:
        rows = self.select(_HEAD.format(doc=document)).rows
        if not rows:
            return None
        return DocumentHead(*(least(r.get(k) for r in rows) for k in ("title", "mime", "pages")))  # type: ignore[arg-type]

    def document_parts(self, document: Iri) -> list[PartRow]:
        groups: dict[tuple[Term, Term, Term], list[Row]] = defaultdict(list)
        for row in self.select(_PARTS_OF.format(doc=document)):
            groups[(row["node"], row["kind"], row["parent"])].append(row)
        out = [PartRow(*key, *(least(r.get(k) for r in rows)  # type: ignore[arg-type,misc]
                               for k in ("label", "num", "idx", "off", "len"))) for key, rows in groups.items()]
        return sorted(out, key=lambda p: (str(p.node), str(p.kind), str(p.parent)))

    def chunk_extractions(self, chunks: Sequence[Iri]) -> dict[Iri, ChunkExtraction]:
        components: dict[Iri, set[str]] = defaultdict(set)
        facts: dict[Iri, set[TripleTerm]] = defaultdict(set)
        for row in self._rows(_EXTRACTIONS, chunks):
            chunk, comp, fact = row.get("chunk"), row.get("component"), row.get("fact")
            if isinstance(chunk, Iri) and isinstance(comp, Literal):
                components[chunk].add(comp.value)
                if isinstance(fact, TripleTerm):
                    facts[chunk].add(fact)
        return {c: ChunkExtraction(tuple(sorted(comps)), tuple(_sorted(facts[c]))) for c, comps in components.items()}

    def facts_of_chunks(self, chunks: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        unique = list(dict.fromkeys(chunks))
        found: dict[Iri, set[TripleTerm]] = defaultdict(set)
        for start in range(0, len(unique), _BATCH):
            part = unique[start:start + _BATCH]
            values = " ".join(f"({i} {c})" for i, c in enumerate(part))
            for row in self.select(_CHUNK_FACTS.format(values=values)):
                i, t = row.get("i"), row.get("t")
                if isinstance(i, Literal) and isinstance(t, TripleTerm):
                    found[part[int(i.value)]].add(t)
        return {c: _sorted(v) for c, v in found.items()}

    def facts_of_subgraphs(self, subgraphs: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        return self._grouped(_SUBGRAPH_FACTS, subgraphs, "sg", "t")

    def evidence_of_subgraphs(self, subgraphs: Sequence[Iri]) -> dict[Iri, Literal]:
        found: dict[Iri, list[Literal]] = defaultdict(list)
        for row in self._rows(_EVIDENCE, subgraphs):
            sg, ev = row.get("sg"), row.get("ev")
            if isinstance(sg, Iri) and isinstance(ev, Literal):
                found[sg].append(ev)
        return {sg: least(v) for sg, v in found.items()}  # type: ignore[misc]

    def edge_sources(self, edges: Sequence[TripleTerm], *, evidence: bool = False) -> list[SourceRow]:
        groups: dict[tuple[int, Term], list[Row]] = defaultdict(list)
        chain = _CHAIN + ("    OPTIONAL { ?sg tg:evidence ?ev }\n" if evidence else "")
        for start in range(0, len(edges), _BATCH):
            values = " ".join(f"({start + i} {e})" for i, e in enumerate(edges[start:start + _BATCH]))
            for row in self.select(_EDGE_SOURCES.format(values=values, chain=chain)):
                groups[(int(row["i"].value), row["sg"])].append(row)  # type: ignore[union-attr]
        return [_source(rows, i) for (i, sg), rows in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))]

    def chunk_sources(self, chunks: Sequence[Iri]) -> list[SourceRow]:
        groups: dict[Term, list[Row]] = defaultdict(list)
        for row in self._rows(_CHUNK_SOURCES, chunks, chain=_CHAIN):
            groups[row["chunk"]].append(row)
        return [_source(groups[c], None) for c in dict.fromkeys(chunks) if c in groups]

    def fact_support(self) -> list[tuple[TripleTerm, int]]:
        out: list[tuple[TripleTerm, int]] = []
        for r in self.select(SUPPORT).rows:
            t, n = r.get("t"), r.get("n")
            if isinstance(t, TripleTerm) and isinstance(n, Literal):
                out.append((t, int(n.value)))
        return sorted(out, key=lambda tn: str(tn[0]))

    # -- embedded-only operations -----------------------------------------------------------------
    def checkpoint(self, folder: Path) -> None:
        """A consistent on-disk copy of the store in ``folder`` (RocksDB's checkpoint: hard links)."""
        self._store.backup(str(folder))  # type: ignore[attr-defined]
