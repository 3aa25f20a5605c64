"""The LLM community report: a title, a summary and findings, each finding citing the member facts it rests on.

The model sees the community's best-supported member facts, each with an id (``F1``…), and the
extractive report's sentences; it answers JSON validated against :data:`REPORT_SCHEMA`. A finding
citing an id that was not shown (so not a member fact) or citing none is an error: the report is
refused with a one-line :class:`~provgraph.errors.ModelError`, never stored in part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from provgraph.communities.extractive import Draft
from provgraph.errors import ModelError
from provgraph.models.base import ChatModel, Usage, system, user
from provgraph.provenance.communities import FindingRecord
from provgraph.rdf.terms import Iri, TripleTerm

__all__ = ["REPORT_SCHEMA", "llm_draft", "FACTS_SHOWN"]

FACTS_SHOWN = 40

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 120},
        "summary": {"type": "string", "minLength": 1, "maxLength": 1500},
        "findings": {
            "type": "array", "minItems": 1, "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 600},
                               "facts": {"type": "array", "minItems": 1, "maxItems": 12,
                                         "items": {"type": "string", "pattern": "^F[0-9]+$"}}},
                "required": ["text", "facts"], "additionalProperties": False,
            },
        },
    },
    "required": ["title", "summary", "findings"],
    "additionalProperties": False,
}

_SYSTEM = ("You write the report of one community of a knowledge graph: a group of closely connected entities. "
           "From the facts given (each with an id such as F3) write a short title naming what the community is "
           "about, a summary of two or three sentences, and up to five findings. Every finding must cite the ids "
           "of the facts it rests on, and only ids from the list. Reply with JSON: "
           '{"title": "…", "summary": "…", "findings": [{"text": "…", "facts": ["F1", "F4"]}]}')


def _label(labels: Mapping[Iri, str], t: object) -> str:
    if isinstance(t, Iri):
        return labels.get(t, t.value)
    return str(getattr(t, "value", t))


async def llm_draft(llm: ChatModel, name: str, base: Iri, facts: Sequence[TripleTerm], labels: Mapping[Iri, str],
                    extractive: Draft) -> tuple[Draft, Usage]:
    """Ask ``llm`` for the report of the community ``name``; raises ModelError on an invalid answer."""
    shown = {f"F{i}": f for i, f in enumerate(facts[:FACTS_SHOWN], start=1)}
    lines = [f"{fid}: ({_label(labels, f.s)}, {_label(labels, f.p)}, {_label(labels, f.o)})" for fid, f in shown.items()]
    quotes = [f"- {f.content}" for f in extractive.findings]
    prompt = "Facts:\n" + "\n".join(lines) + ("\n\nSentences from the sources:\n" + "\n".join(quotes) if quotes else "")
    reply = await llm.complete_json([system(_SYSTEM), user(prompt)], schema=REPORT_SCHEMA, schema_name="community_report")
    findings: list[FindingRecord] = []
    for rank, item in enumerate(reply.data["findings"], start=1):
        cited = list(dict.fromkeys(item["facts"]))
        unknown = [fid for fid in cited if fid not in shown]
        if unknown:
            raise ModelError(f"the report of {name}: finding {rank} cites {', '.join(unknown)}, "
                             "which is not one of the community's facts; no report was stored")
        findings.append(FindingRecord(Iri(f"{base.value}/finding/{rank}"), rank, " ".join(item["text"].split()),
                                      tuple(sorted((shown[fid] for fid in cited), key=str))))
    draft = Draft(" ".join(reply.data["title"].split()), " ".join(reply.data["summary"].split()),
                  extractive.entities, tuple(findings))
    return draft, reply.usage
