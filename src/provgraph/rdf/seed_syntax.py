"""Reading the seed documents' SPARQL: ``<< s p o >>`` meant as an RDF 1.2 triple term.

The seeds write ``?sg tg:contains << ?s ?p ?o >>``. In SPARQL 1.2 ``<< … >>`` is a reified
triple (a reifier), which matches nothing in provgraph's data; the triple term is
``<<( s p o )>>``. :func:`as_triple_terms` rewrites each ``<< … >>`` that is outside strings,
IRIs and comments and carries no reifier (``~``) into ``<<( … )>>``, so such queries return what
the seeds describe. ``provgraph sparql`` runs the rewrite only when it parses, and says so.

>>> as_triple_terms('SELECT ?sg WHERE { ?sg tg:contains << ?s ?p ?o >> }')
('SELECT ?sg WHERE { ?sg tg:contains <<( ?s ?p ?o )>> }', 1)
>>> as_triple_terms('SELECT * { ?x ?p "<< not >>" } # << nor this >>')
('SELECT * { ?x ?p "<< not >>" } # << nor this >>', 0)
>>> as_triple_terms('SELECT * { ?x ?p <<( ?a ?b << ?c ?d ?e >> )>> }')[0]
'SELECT * { ?x ?p <<( ?a ?b <<( ?c ?d ?e )>> )>> }'
"""

from __future__ import annotations

import re

__all__ = ["as_triple_terms"]

_IRI = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>")
_STRING = re.compile(r"'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^\"\\]|\\.|\"(?!\"\"))*\"\"\"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _tokens(query: str) -> list[tuple[int, str]]:
    """Positions of ``<<`` / ``<<(`` / ``>>`` / ``~`` outside strings, IRIs and comments."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch == "#":
            end = query.find("\n", i)
            i = n if end < 0 else end
        elif ch in "'\"":
            found = _STRING.match(query, i)
            i = found.end() if found else i + 1
        elif query.startswith("<<(", i):
            out.append((i, "<<("))
            i += 3
        elif query.startswith("<<", i):
            out.append((i, "<<"))
            i += 2
        elif query.startswith(">>", i):
            out.append((i, ">>"))
            i += 2
        elif ch == "<":
            found = _IRI.match(query, i)
            i = found.end() if found else i + 1
        else:
            if ch == "~":
                out.append((i, "~"))
            i += 1
    return out


def as_triple_terms(query: str) -> tuple[str, int]:
    """The query with seed-style ``<< s p o >>`` written ``<<( s p o )>>``, and how many were rewritten."""
    stack: list[tuple[int, str]] = []  # (position, kind) of each open << or <<(
    reified: set[int] = set()  # positions of opens that hold a ~ (a reifier)
    rewrite: list[tuple[int, int]] = []  # (open position, close position)
    for pos, token in _tokens(query):
        if token in ("<<", "<<("):
            stack.append((pos, token))
        elif token == "~" and stack:
            reified.add(stack[-1][0])
        elif token == ">>" and stack:
            start, kind = stack.pop()
            if kind == "<<" and start not in reified:
                rewrite.append((start, pos))
    if not rewrite:
        return query, 0
    edits = sorted([(s, "<<(", 2) for s, _ in rewrite] + [(e, ")>>", 2) for _, e in rewrite], reverse=True)
    text = query
    for pos, replacement, width in edits:
        text = text[:pos] + replacement + text[pos + width:]
    return text, len(rewrite)
