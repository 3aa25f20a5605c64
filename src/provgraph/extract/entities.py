"""Entities, predicates and facts from labels: the same name from two chunks is one node.

Labels are normalised (Unicode NFC, whitespace collapsed, surrounding quotes/punctuation
stripped); the IRI comes from the case-folded form under the configured base
(``entity_base``, default ``urn:provgraph:entity:``). Predicates live under ``{base}rel/``.

>>> m = FactBuilder("urn:provgraph:entity:")
>>> m.entity("  Marie   Curie ") == m.entity("marie curie")
True
>>> m.entity("Marie Curie").value
'urn:provgraph:entity:marie%20curie'
>>> m.predicate("worked with").value
'urn:provgraph:entity:rel/worked%20with'
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from provgraph.errors import InputError
from provgraph.extract.base import EntityInfo
from provgraph.rdf.iri import encode_segment
from provgraph.rdf.terms import Iri, Literal, Quad, Term, TripleTerm
from provgraph.rdf.vocab import RDF, RDFS, SKOS

__all__ = ["normalise_label", "FactBuilder", "MAX_LABEL"]

MAX_LABEL = 200
_STRIP = " \t\r\n\"'`“”‘’«».,;:!?()[]{}<>"


@lru_cache(maxsize=65_536)
def normalise_label(text: str) -> str:
    """The display form of a label: NFC, one space between words, no surrounding punctuation."""
    nfc = unicodedata.normalize("NFC", text)
    return " ".join(nfc.split()).strip(_STRIP)


@lru_cache(maxsize=65_536)
def _segment(clean: str) -> str:
    """The IRI segment of a normalised label (names recur across chunks: encode each once)."""
    return encode_segment(clean.casefold())


@lru_cache(maxsize=65_536)
def _minted(base: str, prefix: str, label: str) -> tuple[Iri, str]:
    """The IRI of a label and the label normalised (labels recur across chunks: each is minted once)."""
    clean = normalise_label(label)
    if not clean:
        raise InputError(f"empty label: {label!r}")
    if len(clean) > MAX_LABEL:
        raise InputError(f"label longer than {MAX_LABEL} characters: {clean[:40]!r}…")
    return Iri(base + prefix + _segment(clean)), clean


@lru_cache(maxsize=65_536)
def _label_quad(iri: Iri, label: str) -> Quad:
    """``(iri, rdfs:label, "label")`` (an entity's label comes with every chunk naming it: built once)."""
    return Quad(iri, RDFS.label, Literal(label))


class FactBuilder:
    """Mints entity and predicate IRIs and collects facts, labels and entities of one extraction."""

    def __init__(self, entity_base: str) -> None:
        self.base = entity_base
        self.facts: list[TripleTerm] = []
        self._seen: set[TripleTerm] = set()
        self.labels: dict[Iri, str] = {}
        self.predicates: set[Iri] = set()
        self.definitions: dict[Iri, str] = {}

    def entity(self, label: str) -> Iri:
        """The entity IRI for a label (its display label is recorded)."""
        iri, clean = _minted(self.base, "", label)
        self.labels.setdefault(iri, clean)
        return iri

    def predicate(self, label: str) -> Iri:
        """The predicate IRI for a relation phrase (lower-cased)."""
        iri, _ = _minted(self.base, "rel/", label.lower())
        self.labels.setdefault(iri, normalise_label(label).lower())
        self.predicates.add(iri)
        return iri

    def add(self, s: Iri, p: Iri, o: Term) -> TripleTerm:
        """Record one fact (duplicates are kept once)."""
        fact = TripleTerm(s, p, o)
        if fact not in self._seen:
            self._seen.add(fact)
            self.facts.append(fact)
        return fact

    def relation(self, subject: str, predicate: str, obj: str, *, literal: bool = False) -> TripleTerm:
        """``(subject, predicate, object)`` from labels; the object stays a literal when asked."""
        o: Term = Literal(normalise_label(obj) or obj.strip()) if literal else self.entity(obj)
        if literal and not o.value:  # type: ignore[union-attr]
            raise InputError("empty literal object")
        return self.add(self.entity(subject), self.predicate(predicate), o)

    def definition(self, entity: str, text: str) -> TripleTerm:
        """``(entity, skos:definition, "text")``."""
        iri = self.entity(entity)
        body = " ".join(unicodedata.normalize("NFC", text).split())
        if not body:
            raise InputError(f"empty definition for {entity!r}")
        self.definitions.setdefault(iri, body)
        return self.add(iri, SKOS.definition, Literal(body))

    def alias(self, entity: str, variant: str) -> TripleTerm:
        """``(entity, skos:altLabel, "variant")``: another name of the entity, as a contained fact."""
        body = normalise_label(variant)
        if not body:
            raise InputError(f"empty alias for {entity!r}")
        return self.add(self.entity(entity), SKOS.altLabel, Literal(body))

    def typed(self, entity: str, cls: Iri) -> TripleTerm:
        """``(entity, rdf:type, class)``."""
        return self.add(self.entity(entity), RDF.type, cls)

    def entities(self) -> tuple[EntityInfo, ...]:
        """Every entity mentioned, with its label and definition when one was extracted."""
        return tuple(
            EntityInfo(iri, label, self.definitions.get(iri))
            for iri, label in self.labels.items()
            if iri not in self.predicates
        )

    def label_quads(self) -> tuple[Quad, ...]:
        """``rdfs:label`` for every entity and minted predicate (default graph)."""
        return tuple(_label_quad(iri, label) for iri, label in self.labels.items())
