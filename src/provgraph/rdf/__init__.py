"""RDF 1.2 terms, vocabulary, IRI minting and identifiers: the bottom layer."""

from provgraph.rdf.iri import encode_segment, mint_iri
from provgraph.rdf.terms import BlankNode, Iri, Literal, Quad, Subject, Term, TripleTerm
from provgraph.rdf.vocab import DC, GRAPH_RETRIEVAL, GRAPH_SOURCE, OWL, PROV, RDF, RDFS, SKOS, TG, XSD

__all__ = [
    "BlankNode", "Iri", "Literal", "Quad", "Subject", "Term", "TripleTerm",
    "mint_iri", "encode_segment",
    "DC", "OWL", "PROV", "RDF", "RDFS", "SKOS", "TG", "XSD", "GRAPH_SOURCE", "GRAPH_RETRIEVAL",
]
