"""The passage graph kept on disk: a new process reads only the chunks whose extraction changed, and the
file follows loads, re-extractions and removals; a damaged file is read around."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from provgraph.rdf.terms import Iri, Literal, Quad, TripleTerm
from provgraph.rdf.vocab import GRAPH_SOURCE, PROV
from provgraph.retrieval.passage_cache import GRAPH_FILE
from provgraph.retrieval.passage_graph import PassageGraph
from tests.unit.retrieval.test_graph_rank import _Records

E, C, A = "urn:e:", "urn:c:", "urn:act:"


class _Store:
    """Facts of chunks, and each chunk's extraction activity with its start time (as extraction writes them)."""

    def __init__(self, facts: dict[str, list[tuple[str, str]]]) -> None:
        self.facts = facts
        self.started = {c: "2026-01-01T00:00:00Z" for c in facts}
        self.knowledge_generation = 1
        self.asked: list[str] = []

    def facts_of_chunks(self, chunks: Sequence[Iri]) -> dict[Iri, list[TripleTerm]]:
        self.asked += [c.value for c in chunks]
        return {c: [TripleTerm(Iri(E + s), Iri(E + "p"), Iri(E + o) if o else Literal("1")) for s, o in self.facts[c.value]]
                for c in chunks if self.facts.get(c.value)}

    def match(self, s: object = None, p: Iri | None = None, o: object = None, *, g: object = None) -> Iterator[Quad]:
        for chunk, when in self.started.items():
            activity = Iri(A + chunk.removeprefix(C))
            if p == PROV.used:
                yield Quad(activity, PROV.used, Iri(chunk), GRAPH_SOURCE)
            elif p == PROV.startedAtTime:
                yield Quad(activity, PROV.startedAtTime, Literal(when), GRAPH_SOURCE)


def ranked(graph: PassageGraph, entity: str) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in graph.rank({E + entity: 1.0}, limit=10)]


def test_a_new_process_reads_only_what_changed_and_ranks_as_a_graph_read_whole(tmp_path: Path) -> None:
    file = tmp_path / GRAPH_FILE
    store = _Store({C + "1": [("a", "b"), ("a", "")], C + "2": [("b", "c")], C + "3": [("c", "d")], C + "4": []})
    records = _Records([C + "1", C + "2", C + "3", C + "4"])
    first = PassageGraph(store, records, file)  # type: ignore[arg-type]
    first.sync()
    assert file.exists() and store.asked == [C + "1", C + "2", C + "3", C + "4"]
    store.asked = []
    again = PassageGraph(store, records, file)  # type: ignore[arg-type]  # the next process
    again.sync()
    assert store.asked == [] and ranked(again, "a") == ranked(first, "a") and again.chunks_of(E + "b") == {C + "1", C + "2"}

    store.facts[C + "2"] = [("b", "x")]  # re-extracted: a new start time
    store.started[C + "2"] = "2026-01-02T00:00:00Z"
    store.facts[C + "4"] = [("d", "x")]  # extracted at last
    store.started[C + "4"] = "2026-01-02T00:00:00Z"
    store.facts[C + "5"], store.started[C + "5"] = [("x", "y")], "2026-01-02T00:00:00Z"  # loaded
    records.chunks = [C + "1", C + "2", C + "4", C + "5"]  # chunk 3 removed
    del store.facts[C + "3"], store.started[C + "3"]
    later = PassageGraph(store, records, file)  # type: ignore[arg-type]
    later.sync()
    assert sorted(store.asked) == [C + "2", C + "4", C + "5"]
    whole = PassageGraph(store, records)  # type: ignore[arg-type]  # no file: every chunk read
    whole.sync()
    assert ranked(later, "a") == ranked(whole, "a") and ranked(later, "y") == ranked(whole, "y")
    assert C + "3" not in later and E + "c" not in later and later.chunks_of(E + "x") == {C + "2", C + "4", C + "5"}
    store.asked = []
    PassageGraph(store, records, file).sync()  # type: ignore[arg-type]  # written back: nothing to read
    assert store.asked == []


def test_a_damaged_file_is_read_around_and_written_again(tmp_path: Path) -> None:
    file = tmp_path / GRAPH_FILE
    store = _Store({C + "1": [("a", "b")]})
    records = _Records([C + "1"])
    file.write_bytes(b"not a graph")
    graph = PassageGraph(store, records, file)  # type: ignore[arg-type]
    graph.sync()
    assert store.asked == [C + "1"] and ranked(graph, "a")[0][0] == C + "1"
    store.asked = []
    PassageGraph(store, records, file).sync()  # type: ignore[arg-type]
    assert store.asked == []
