"""The typed wire form the Python clients use: results come back equal, and only known types are built."""

from __future__ import annotations

import json
import re

import pytest

from provgraph.api.objects import from_objects, to_objects
from provgraph.config import Settings
from provgraph.errors import InputError
from provgraph.explain.model import DocRagTrace, GraphRagTrace
from provgraph.explain.traces import list_traces, load_trace
from provgraph.session import Provgraph


def test_traces_and_load_results_survive_the_wire(corpus_settings: Settings) -> None:
    with Provgraph(collection=corpus_settings.collection, home=corpus_settings.home, llm="none") as pg:
        asked = [pg.graph_rag("Who discovered polonium?").session_id,
                 pg.document_rag("What are Becquerel rays?").session_id]
        traces = [load_trace(pg.runtime.store, sid, librarian=pg.runtime.librarian, provenance=True) for sid in asked]
        summaries = list_traces(pg.runtime.store)
    assert [type(t) for t in traces] == [GraphRagTrace, DocRagTrace]
    for value in (*traces, summaries):
        assert from_objects(json.loads(json.dumps(to_objects(value)))) == value


@pytest.mark.parametrize("data, message", [
    ({"$type": "Popen", "fields": {"args": "sh"}}, "not a provgraph result: 'Popen'"),
    ({"$type": "Iri", "fields": {"value": "no scheme"}}, "not a valid absolute IRI"),
    ({"$type": "Iri", "fields": {"nope": 1}}, "not a valid Iri"),
    ({"$type": "Iri"}, "expected $type and fields"),
    ({"$datetime": "yesterday"}, "not a date"),
])
def test_only_known_types_with_valid_fields_are_built(data: object, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        from_objects(data)
