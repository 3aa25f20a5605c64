"""Name variants merge into one entity with an explained alias fact, and un-merge when their source goes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from provgraph.config import load_settings
from provgraph.rdf.terms import Iri, Literal, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, SKOS, TG
from provgraph.runtime import Runtime
from provgraph.store.support import document_removal

TEXT = ("Ernest Rutherford was born in New Zealand. In 1917 Rutherford split the atom in Manchester. "
        "Rutherford later led the Cavendish Laboratory.")
OTHER = "Rutherford is a town in New Jersey with a public library."
ERNEST = Iri("urn:provgraph:entity:ernest%20rutherford")
ALIAS = TripleTerm(ERNEST, SKOS.altLabel, Literal("Rutherford"))


def test_a_surname_merges_into_the_full_name_and_unmerges_on_removal(tmp_path: Path) -> None:
    (tmp_path / "ernest.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "town.txt").write_text(OTHER, encoding="utf-8")
    settings = load_settings(home=str(tmp_path / "home"), collection="c", llm="none")
    with Runtime(settings) as rt:
        loader = rt.loader()
        loaded = [loader.load_file(tmp_path / name) for name in ("ernest.txt", "town.txt")]
        outcomes = asyncio.run(rt.extraction().run([c for doc in loaded for c in doc.chunks]))
        assert not [o for o in outcomes if o.failed]

        # one entity for both names; the alias is a fact of the chunk's subgraph (explainable)
        assert rt.store.count(ALIAS.s, ALIAS.p, ALIAS.o, g=None) == 1
        holders = {q.s for q in rt.store.match(None, TG.contains, ALIAS, g=GRAPH_SOURCE)}
        assert len(holders) == 1
        facts = {(q.s, q.o) for q in rt.store.match(None, None, None, g=None) if q.p != SKOS.altLabel}
        assert (ERNEST, Iri("urn:provgraph:entity:cavendish%20laboratory")) in facts
        assert not any(s == ERNEST and o == Iri("urn:provgraph:entity:rutherford") for s, o in facts)

        # the question's "Rutherford" finds the full name through its alias
        found = rt.retriever().entities("Where did Rutherford split the atom?", None, 5)
        assert ERNEST.value in [r.id for r in found if r.exact]

        rt.store.apply(remove=document_removal(rt.store, loaded[0].document))
        rt.librarian.remove(loaded[0].document.value)
        assert rt.store.count(ALIAS.s, ALIAS.p, ALIAS.o, g=None) == 0
        assert ERNEST.value not in [r.id for r in rt.retriever().entities("Rutherford", None, 5)]
