"""Minting IRIs from arbitrary text.

Every character an IRI cannot hold (and every character with meaning in IRI syntax) is
percent-encoded as UTF-8, so a label like ``a b<c>"d{e}`` can never break N-Triples, Turtle
or a SPARQL query. Letters of any script stay readable.

>>> mint_iri("urn:doc:", 'a b<c>"d{e}')
Iri(value='urn:doc:a%20b%3Cc%3E%22d%7Be%7D')
>>> mint_iri("https://example.org/e/", "Marie Curie")
Iri(value='https://example.org/e/Marie%20Curie')
"""

from __future__ import annotations

from provgraph.errors import InputError
from provgraph.rdf.terms import Iri

__all__ = ["mint_iri", "encode_segment"]

# Unreserved ASCII (RFC 3986) stays as is; so do non-ASCII letters (ucschar of RFC 3987).
_SAFE_ASCII = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _keep(ch: str) -> bool:
    if ch in _SAFE_ASCII:
        return True
    code = ord(ch)
    # the ucschar ranges of RFC 3987 (no surrogates, private use or non-characters)
    return (
        0xA0 <= code <= 0xD7FF
        or 0xF900 <= code <= 0xFDCF
        or 0xFDF0 <= code <= 0xFFEF
        or (0x10000 <= code <= 0xDFFFD and (code & 0xFFFF) <= 0xFFFD)
        or 0xE1000 <= code <= 0xEFFFD
    )


def encode_segment(text: str) -> str:
    """Percent-encode ``text`` so it is safe as one IRI path segment."""
    out: list[str] = []
    for ch in text:
        if _keep(ch):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def mint_iri(base: str, text: str) -> Iri:
    """The IRI ``base`` + encoded ``text``; raises :class:`InputError` for empty text."""
    if not text:
        raise InputError("cannot mint an IRI from empty text")
    return Iri(base + encode_segment(text))
