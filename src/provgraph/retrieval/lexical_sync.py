"""Keep the lexical index in step with the librarian (chunk texts) and the store (entity labels).

Derived data follows its source: every chunk record of the librarian is indexed under its
content hash, and every labelled entity of the default graph under its labels and aliases
(``rdfs:label``, ``skos:altLabel``); what its source no longer has is removed. A sync only
writes what changed, so it is cheap when nothing did, and an empty index is rebuilt in full.
"""

from __future__ import annotations

import re

from provgraph.librarian.base import Librarian
from provgraph.librarian.lexical import LexicalIndex
from provgraph.rdf.terms import Iri, Literal
from provgraph.rdf.vocab import RDFS, SKOS
from provgraph.store.base import QuadStore

__all__ = ["sync_chunks", "sync_entities", "ALT_LABEL"]

ALT_LABEL = SKOS.altLabel
_PREDICATE = re.compile(r"[:/#]rel/")
_BATCH = 200


def sync_chunks(lexical: LexicalIndex, librarian: Librarian) -> dict[str, str]:
    """Index new or changed chunks, drop removed ones; returns every chunk id with its content hash."""
    wanted = {r.id: r.content_hash for r in librarian.list("chunk")}
    have = lexical.stamps("chunk")
    lexical.remove("chunk", [i for i in have if i not in wanted])
    todo = [i for i, h in wanted.items() if have.get(i) != h]
    for start in range(0, len(todo), _BATCH):
        batch = todo[start : start + _BATCH]
        texts = librarian.texts(batch, missing_ok=True)
        lexical.put("chunk", [(i, wanted[i], texts[i]) for i in batch if i in texts])
    return wanted


def entity_names(store: QuadStore) -> dict[str, list[str]]:
    """Every labelled entity of the default graph with its labels then aliases (predicates excluded).

    Sorted (entities, and each one's labels then its aliases), not in the store's order, so the lexical index
    is filled in the same order (and breaks ties the same way) whichever backend holds the quads.
    """
    found: dict[str, tuple[set[str], set[str]]] = {}
    for kind, predicate in enumerate((RDFS.label, ALT_LABEL)):
        for q in store.match(p=predicate, g=None):
            if isinstance(q.s, Iri) and isinstance(q.o, Literal) and not _PREDICATE.search(q.s.value):
                found.setdefault(q.s.value, (set(), set()))[kind].add(q.o.value)
    names: dict[str, list[str]] = {}
    for entity in sorted(found):
        labels, aliases = found[entity]
        names[entity] = sorted(labels) + sorted(aliases - labels)
    return names


def sync_entities(lexical: LexicalIndex, store: QuadStore) -> dict[str, list[str]]:
    """Index entities by their labels and aliases; returns every entity with its names."""
    names = entity_names(store)
    wanted = {e: "\n".join(n) for e, n in names.items()}
    have = lexical.stamps("entity")
    lexical.remove("entity", [i for i in have if i not in wanted])
    lexical.put("entity", [(e, text, text) for e, text in wanted.items() if have.get(e) != text])
    return names
