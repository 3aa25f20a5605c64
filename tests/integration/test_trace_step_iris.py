"""``traces show`` takes the IRI of any step of a trace (or of a step's part) and shows that trace."""

from __future__ import annotations

import json

from provgraph.config import Settings
from tests.cli_runner import run


def test_any_step_iri_shows_its_trace(corpus_settings: Settings) -> None:
    r = run("graph-rag", "-C", "corpus", "-q", "Who discovered polonium?", "--format", "json")
    events = [json.loads(line) for line in r.out.splitlines()]
    steps = {e["step"]: e for e in events if e["message_type"] == "explain"}
    sid = events[-1]["session_id"]
    whole = run("traces", "show", sid, "-C", "corpus")
    assert whole.code == 0
    parts = [t["o"].strip("<>") for t in steps["focus"]["explain_triples"]
             if t["p"] == "<https://trustgraph.ai/ns/selectedEdge>"]
    for iri in [steps["exploration"]["explain_id"], steps["focus"]["explain_id"], steps["synthesis"]["explain_id"],
                parts[0]]:
        shown = run("traces", "show", iri, "-C", "corpus")
        assert (shown.code, shown.out) == (0, whole.out), iri
    missing = run("traces", "show", "urn:trustgraph:prov:focus:nope", "-C", "corpus")
    assert missing.code == 3 and missing.err == (
        "error: no trace 'urn:trustgraph:prov:focus:nope' in collection default/corpus "
        "(list them with: provgraph traces list)\n")
