"""Small rendering helpers shared by CLI commands."""

from __future__ import annotations

from urllib.parse import unquote

from provgraph.errors import InputError
from provgraph.rdf.ids import document_iri
from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import PREFIXES

__all__ = ["short", "truncate", "document_id"]


def short(term: Term) -> str:
    """A compact display form: known prefixes as ``tg:contains``, literals as their text."""
    if isinstance(term, Iri):
        for prefix, base in PREFIXES.items():
            if term.value.startswith(base) and len(term.value) > len(base):
                return f"{prefix}:{term.value[len(base):]}"
        return term.value
    if isinstance(term, Literal):
        return term.value if term.language is None else f"{term.value}@{term.language}"
    if isinstance(term, TripleTerm):
        return f"<<( {short(term.s)} {short(term.p)} {short(term.o)} )>>"
    return str(term)


def truncate(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def document_id(iri: str) -> str:
    """The shortest name commands take for a document: ``report.pdf`` for ``urn:doc:report.pdf`` when
    that names it again (``documents show``, ``remove``, ``provenance``), else the whole IRI."""
    if iri.startswith("urn:doc:"):
        name = unquote(iri[len("urn:doc:"):])
        try:
            if name and document_iri(name).value == iri:
                return name
        except InputError:
            pass
    return iri
