"""Prefixes, classes and predicates of SPEC §1, and the named graphs of SPEC §2.

>>> TG.contains
Iri(value='https://trustgraph.ai/ns/contains')
>>> TG.nonsense
Traceback (most recent call last):
...
AttributeError: tg: has no term 'nonsense'
"""

from __future__ import annotations

from collections.abc import Iterable

from provgraph.rdf.terms import Iri

__all__ = [
    "Namespace",
    "PROV",
    "RDF",
    "RDFS",
    "XSD",
    "DC",
    "SKOS",
    "OWL",
    "TG",
    "PREFIXES",
    "GRAPH_SOURCE",
    "GRAPH_RETRIEVAL",
    "GRAPH_COMMUNITIES",
    "SCHEMA_PREDICATES",
    "sparql_prefixes",
]


class Namespace:
    """A closed namespace: only declared local names resolve, so a typo fails at once."""

    def __init__(self, prefix: str, base: str, names: Iterable[str]) -> None:
        self._prefix = prefix
        self._base = base
        self._terms = {name: Iri(base + name) for name in names}
        # found by plain attribute lookup (``__getattr__`` only runs for undeclared names)
        self.__dict__.update({n: t for n, t in self._terms.items()
                              if not n.startswith("_") and not hasattr(type(self), n)})

    @property
    def base(self) -> str:
        """The namespace IRI."""
        return self._base

    @property
    def prefix(self) -> str:
        """The conventional prefix, without the colon."""
        return self._prefix

    def __getattr__(self, name: str) -> Iri:
        try:
            return self._terms[name]
        except KeyError:
            raise AttributeError(f"{self._prefix}: has no term {name!r}") from None

    def __getitem__(self, name: str) -> Iri:
        return self.__getattr__(name)

    def __contains__(self, iri: object) -> bool:
        return isinstance(iri, Iri) and iri in self._terms.values()

    def terms(self) -> dict[str, Iri]:
        """Every declared term by local name."""
        return dict(self._terms)


PROV = Namespace(
    "prov",
    "http://www.w3.org/ns/prov#",
    [
        "Entity", "Activity", "Agent", "wasDerivedFrom", "wasGeneratedBy", "used",
        "wasAssociatedWith", "startedAtTime", "endedAtTime", "wasInformedBy",
        # an extraction activity's tool steps (docs/trace-format.md, "The agent extractor's steps")
        "generated",
        # PROV-O's own term for what a retraction ends (docs/trace-format.md, "Retractions")
        "invalidated",
    ],
)
RDF = Namespace("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#", ["type", "reifies", "langString"])
RDFS = Namespace(
    "rdfs",
    "http://www.w3.org/2000/01/rdf-schema#",
    ["label", "comment", "Class", "subClassOf", "subPropertyOf", "domain", "range", "seeAlso"],
)
XSD = Namespace("xsd", "http://www.w3.org/2001/XMLSchema#", ["string", "integer", "double", "dateTime", "boolean"])
DC = Namespace("dc", "http://purl.org/dc/elements/1.1/", ["title", "source", "date", "creator"])
SKOS = Namespace("skos", "http://www.w3.org/2004/02/skos/core#", ["definition", "altLabel"])
OWL = Namespace(
    "owl",
    "http://www.w3.org/2002/07/owl#",
    ["Class", "ObjectProperty", "DatatypeProperty", "Ontology", "Thing"],
)
TG = Namespace(
    "tg",
    "https://trustgraph.ai/ns/",
    [
        # classes
        "Document", "Page", "Section", "Chunk", "Image", "Subgraph", "Question", "GraphRagQuestion",
        "DocRagQuestion", "AgentQuestion", "Grounding", "Exploration", "Focus", "EdgeSelection",
        "ChunkSelection", "Synthesis", "Answer", "Analysis", "Conclusion", "Error",
        # predicates
        "contains", "pageCount", "mimeType", "pageNumber", "chunkIndex", "charOffset", "charLength",
        "chunkSize", "chunkOverlap", "componentVersion", "llmModel", "ontology", "embeddingModel",
        "sourceText", "sourceCharOffset", "sourceCharLength", "query", "concept", "entity", "edgeCount",
        "selectedEdge", "edge", "reasoning", "score", "document", "content", "chunkCount",
        "selectedChunk", "thought", "action", "arguments", "observation", "answer", "inToken",
        "outToken", "tokensEstimated", "terminationReason", "stepNumber",
        # decisions beyond SPEC §1 (docs/trace-format.md): stored citations, ranked chunk
        # selections, sentence evidence of a subgraph's facts, retraction records
        "Citation", "citation", "marker", "chunkSelection", "chunk", "rank", "retriever",
        "evidence", "Retraction", "reason", "affectedTrace", "retractedEdge", "retractedChunk",
        # communities, community reports and global search (docs/trace-format.md, "Communities")
        "Community", "CommunityDetection", "CommunityReport", "Finding", "GlobalRagQuestion", "CommunityMap",
        "ReportSelection", "level", "parentCommunity", "memberEntity", "memberFact", "memberCount", "factCount",
        "community", "report", "finding", "citesFact", "summary", "algorithm", "resolution", "seed",
        "maxCommunitySize", "knowledgeGeneration", "sourceState", "stale", "staleBecause", "reportCount", "reportSelection",
        # conversations (docs/trace-format.md, "Conversations") and agent tool groups
        "Conversation", "conversation", "conversationId", "turn", "previousTurn", "originalQuery",
        "rewriteMethod", "contextEntity", "historyTurns", "allowedTool", "toolGroup",
        # graph-ranked passages (docs/trace-format.md, "Ranking")
        "Ranking", "RankedPassage", "RankSeed", "rankedPassage", "weight", "linkedBy", "hop",
        "graphScore", "graphRank", "lexicalRank", "denseRank", "bridgeEntity", "bridgedFrom", "closest",
        "relevant", "covers",
    ],
)

PREFIXES: dict[str, str] = {ns.prefix: ns.base for ns in (PROV, RDF, RDFS, XSD, DC, SKOS, OWL, TG)}

GRAPH_SOURCE = Iri("urn:graph:source")
GRAPH_RETRIEVAL = Iri("urn:graph:retrieval")
GRAPH_COMMUNITIES = Iri("urn:graph:communities")

# Edges GraphRAG drops after traversal: schema and labelling, not knowledge.
SCHEMA_PREDICATES: frozenset[Iri] = frozenset(
    {RDFS.label, RDFS.comment, RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range, RDF.type,
     SKOS.altLabel}
)


def sparql_prefixes() -> str:
    """``PREFIX`` lines for every namespace, to prepend to SPARQL queries."""
    return "".join(f"PREFIX {p}: <{base}>\n" for p, base in PREFIXES.items())
