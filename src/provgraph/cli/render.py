"""Small rendering helpers shared by CLI commands."""

from __future__ import annotations

from provgraph.rdf.terms import Iri, Literal, Term, TripleTerm
from provgraph.rdf.vocab import PREFIXES

__all__ = ["short", "truncate"]


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
