"""``check --repair`` puts back the vectors a clean load made: the same nearest chunks, with the same scores
and payloads, for every chunk's own text and for fixed questions, the same Document RAG picks and answers,
and entity vectors of their own label and definition. (Checking only that the repaired ids exist would pass
a repair that embeds something else than the text.)

Known difference, pinned: an entity the store holds several labels or definitions for is embedded by a load
with the last one mentioned, by a repair with the first in code-point order (the store keeps no mention
order); every other entity's payload comes back equal (its chunk list sorted).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from provgraph.config import Settings
from provgraph.events import Final
from provgraph.extract.derived import entity_text
from provgraph.rdf.terms import Iri
from provgraph.rdf.vocab import RDFS, SKOS
from provgraph.runtime import Runtime
from tests.cli_runner import run

QUESTIONS = ["Who discovered polonium?", "What are Becquerel rays?", "Where was the Radium Institute?",
             "Who worked with Marie Curie?", "What did Rutherford find?"]


def nearest(rt: Runtime) -> dict[str, Any]:
    """What the chunk index answers: each chunk's own text and each question, nearest 5, scores to 5 places."""
    texts = {c: rt.librarian.text(c) for c in sorted(rt.chunk_index.ids())}
    probes = [*texts.values(), *QUESTIONS]
    out: dict[str, Any] = {}
    for probe, vector in zip(probes, rt.embedder.embed(probes)):
        out[probe] = [(h.id, round(h.score, 5), h.payload) for h in rt.chunk_index.search(vector, 5)]
    for chunk, text in texts.items():
        assert out[text][0][:2] == (chunk, 1.0), chunk  # a chunk is nearest to its own text
    return out


def entities(rt: Runtime) -> dict[str, dict[str, Any]]:
    """Each entity's payload (chunk list sorted); each is nearest to the text of its own label and definition."""
    found = rt.entity_index.get(rt.entity_index.ids())
    texts = {e: entity_text(p["label"], p["definition"]) for e, p in found.items()}
    for (entity, text), vector in zip(texts.items(), rt.embedder.embed(list(texts.values()))):
        hits = rt.entity_index.search(vector, 3)
        assert entity in [h.id for h in hits if round(h.score, 5) == 1.0], (entity, text)
    return {e: {**p, "chunks": sorted(p["chunks"])} for e, p in found.items()}


def several(rt: Runtime, entity: str) -> bool:
    """Whether the store holds more than one label or definition of ``entity``."""
    return any(len(list(rt.store.match(Iri(entity), p, None, g=None))) > 1 for p in (RDFS.label, SKOS.definition))


def picks(rt: Runtime) -> list[tuple[str, list[str]]]:
    async def ask(q: str) -> Final:
        events = [e async for e in rt.document_rag().ask(q)]
        assert isinstance(events[-1], Final)
        return events[-1]

    return [(f.answer, [s.chunk.value if hasattr(s.chunk, "value") else str(s) for s in f.sources])
            for f in (asyncio.run(ask(q)) for q in QUESTIONS)]


def test_repaired_vectors_answer_as_a_clean_loads_do(corpus_settings: Settings) -> None:
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        clean, clean_picks, clean_entities = nearest(rt), picks(rt), entities(rt)
        chunks, entity_ids = rt.chunk_index.ids(), rt.entity_index.ids()
        assert len(chunks) > 10 and len(entity_ids) > 10
        rt.chunk_index.delete(chunks)  # every chunk vector lost, and every other entity vector
        rt.entity_index.delete(entity_ids[::2])
    r = run("check", "--repair", "-C", corpus_settings.collection, "--format", "json")
    data = json.loads(r.out)
    assert r.code == 0 and data["consistent"] and data["remaining"] == [], r.out
    with Runtime(corpus_settings, create=False, llm=None) as rt:
        assert sorted(rt.chunk_index.ids()) == sorted(chunks) and sorted(rt.entity_index.ids()) == sorted(entity_ids)
        repaired = nearest(rt)
        for probe in clean:
            assert repaired[probe] == clean[probe], probe
        assert picks(rt) == clean_picks
        now = entities(rt)
        differ = sorted(e for e in entity_ids if now[e] != clean_entities[e])
        assert len(differ) < len(entity_ids) // 20 and all(several(rt, e) for e in differ), differ
