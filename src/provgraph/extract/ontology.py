"""Ontology-guided extraction: only the classes and properties of a user's OWL/RDFS ontology.

Entities get ``rdf:type`` of ontology classes; relationships use ontology properties. Facts that
do not fit (unknown class or property, a literal for an object property, an entity for a datatype
property) are dropped and counted. The activity records ``tg:ontology <ontology IRI>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from provgraph import __version__
from provgraph.errors import InputError
from provgraph.extract.base import ChunkInput, Extraction
from provgraph.extract.entities import FactBuilder
from provgraph.extract.evidence import Quotes, with_quote
from provgraph.extract.prompting import TEXT_LIMIT, answer_tokens, arr, chunk_messages, load_prompt, obj, text
from provgraph.models.base import ChatModel, Message
from provgraph.provenance.common import LlmCall
from provgraph.rdf.convert import from_ox
from provgraph.rdf.terms import Iri, Literal, Quad
from provgraph.rdf.vocab import OWL, RDF, RDFS

__all__ = ["Ontology", "OntologyExtractor", "ONTOLOGY_SCHEMA"]

_PROMPT_VERSION = 2


@dataclass(frozen=True)
class Ontology:
    """The classes and properties an ontology declares, by IRI, with labels."""

    iri: Iri
    classes: dict[Iri, str]
    object_properties: dict[Iri, str]
    datatype_properties: dict[Iri, str]

    @classmethod
    def load(cls, path: Path) -> Ontology:
        """Read a Turtle file; raises InputError when unreadable or when it declares nothing usable."""
        try:
            triples = [(from_ox(t.subject), from_ox(t.predicate), from_ox(t.object)) for t in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]
        except (OSError, SyntaxError, ValueError) as exc:
            raise InputError(f"{path}: cannot read the ontology: {exc}") from exc
        types: dict[Iri, set[Iri]] = {}
        labels: dict[Iri, str] = {}
        for s, p, o in triples:
            if not isinstance(s, Iri):
                continue
            if p == RDF.type and isinstance(o, Iri):
                types.setdefault(s, set()).add(o)
            elif p == RDFS.label and isinstance(o, Literal) and (o.language in (None, "en")):
                labels.setdefault(s, o.value)
        def having(*kinds: Iri) -> dict[Iri, str]:
            return {s: labels.get(s, s.value) for s, t in sorted(types.items(), key=lambda kv: kv[0].value) if t & set(kinds)}

        onto = [s for s, t in types.items() if OWL.Ontology in t]
        classes = having(OWL.Class, RDFS.Class)
        objects = having(OWL.ObjectProperty)
        datatypes = having(OWL.DatatypeProperty)
        plain = having(Iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#Property"))
        objects.update({k: v for k, v in plain.items() if k not in datatypes})
        if not classes and not objects and not datatypes:
            raise InputError(f"{path}: the ontology declares no classes or properties")
        iri = onto[0] if onto else Iri(path.resolve().as_uri())
        return cls(iri, classes, objects, datatypes)

    def describe(self) -> tuple[str, str]:
        """The class and property lists as shown to the LLM."""
        classes = "\n".join(f"- {i.value} ({label})" for i, label in self.classes.items()) or "- (none)"
        props = [f"- {i.value} ({label}; object: an entity)" for i, label in self.object_properties.items()]
        props += [f"- {i.value} ({label}; object: a literal value)" for i, label in self.datatype_properties.items()]
        return classes, "\n".join(props) or "- (none)"


ONTOLOGY_SCHEMA = obj(
    entities=arr(with_quote(obj(name=text(), **{"class": text(400)}))),
    relationships=arr(with_quote(obj(subject=text(), property=text(400), object=text(TEXT_LIMIT),
                                      object_is_literal={"type": "boolean"}))),
)
"""The JSON the ontology extractor asks for (bounded: see :mod:`provgraph.models.bounds`)."""


class OntologyExtractor:
    """Extracts typed entities and ontology relationships from a chunk."""

    component = "kg-extract-ontology"

    def __init__(self, llm: ChatModel, ontology: Ontology, *, entity_base: str) -> None:
        self._llm = llm
        self.ontology = ontology
        self._base = entity_base
        classes, props = ontology.describe()
        self._instructions = load_prompt("ontology", _PROMPT_VERSION).replace("{classes}", classes).replace("{properties}", props)
        self._schema = ONTOLOGY_SCHEMA

    @property
    def version(self) -> str:
        """Package version plus prompt version."""
        return f"{__version__}+ontology.v{_PROMPT_VERSION}"

    @property
    def model_name(self) -> str | None:
        """The LLM's name."""
        return self._llm.name

    def messages(self, chunk: ChunkInput) -> list[Message]:
        """The exact messages sent for a chunk."""
        return chunk_messages(self._instructions, chunk.text)

    def _fit(self, b: FactBuilder, data: dict[str, Any], quotes: Quotes) -> int:
        dropped = 0
        for item in data.get("entities", []):
            cls = _as_iri(item["class"])
            if cls not in self.ontology.classes:
                dropped += 1
                continue
            try:
                quotes.note(b.typed(item["name"], cls), item)
            except InputError:
                dropped += 1
        for item in data.get("relationships", []):
            prop = _as_iri(item["property"])
            literal = bool(item["object_is_literal"])
            fits = (prop in self.ontology.object_properties and not literal) or (
                prop in self.ontology.datatype_properties and literal
            )
            if prop is None or not fits:
                dropped += 1
                continue
            try:
                o = Literal(item["object"].strip()) if literal else b.entity(item["object"])
                quotes.note(b.add(b.entity(item["subject"]), prop, o), item)
                b.labels.setdefault(prop, (self.ontology.object_properties | self.ontology.datatype_properties)[prop])
                b.predicates.add(prop)
            except InputError:
                dropped += 1
        return dropped

    async def extract(self, chunk: ChunkInput) -> Extraction:
        """Ask the LLM and keep only what the ontology can express."""
        result = await self._llm.complete_json(self.messages(chunk), schema=self._schema, schema_name="ontology",
                                               max_tokens=answer_tokens(chunk.text))
        builder = FactBuilder(self._base)
        quotes = Quotes(chunk.text)
        dropped = self._fit(builder, result.data, quotes)
        call = LlmCall(result.usage.model, result.usage.input_tokens, result.usage.output_tokens)
        labels: tuple[Quad, ...] = builder.label_quads()
        notes = (f"{dropped} fact(s) outside the ontology dropped",) if dropped else ()
        return Extraction(tuple(builder.facts), labels, builder.entities(), llm=call, ontology=self.ontology.iri,
                          dropped=dropped, notes=notes, evidence=quotes.spans)


def _as_iri(value: str) -> Iri | None:
    try:
        return Iri(value.strip().strip("<>"))
    except InputError:
        return None
