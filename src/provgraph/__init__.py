"""provgraph: explainable knowledge-graph RAG in RDF 1.2 and PROV-O."""

__version__ = "0.1.0"
__all__ = ["__version__"]
