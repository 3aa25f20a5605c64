"""The ``graph-rag`` command: the answer on stdout as it streams, each explained step on stderr.

The command consumes the same event stream as the library API (:class:`GraphRag.ask`). With
``-x`` every trace step is printed to stderr in SPEC §8's format as it arrives; the focus step's
edges are shown with their labels, reasoning and sources (looked up in one batch each).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import Any

import typer

from provgraph import errors
from provgraph.cli.common import (
    COLLECTION_OPTION,
    CONVERSATION_OPTION,
    LLM_OPTION,
    NO_TRACE_OPTION,
    USER_OPTION,
    echo,
    exit_code_for,
    json_text,
    open_runtime,
    query_timeout,
    settings_from,
    timeout_message,
    traces_override,
)
from provgraph.api.trustgraph_wire import to_trustgraph
from provgraph.conversation.turn import ask_in
from provgraph.explain.render_text import source_line as render_source_line
from provgraph.events import AnswerPiece, ErrorMessage, Event, Explain, Final, Source, to_json
from provgraph.models.base import ChatModel
from provgraph.rdf.terms import Literal, Quad, TripleTerm
from provgraph.rdf.vocab import TG
from provgraph.retrieval.graph_rag import GraphRagParams
from provgraph.retrieval.labels import LabelCache
from provgraph.retrieval.sources import edge_sources
from provgraph.runtime import Runtime
from provgraph.store.base import QuadStore

__all__ = [
    "register", "graph_rag", "explain_lines", "citation_lines", "source_line", "OutputFormat", "error_code",
    "run_to_exit", "turn_line", "wire_line",
]


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    trustgraph = "trustgraph"  # JSON lines in TrustGraph's message shapes (api/trustgraph_wire.py)


def wire_line(event: Event, fmt: OutputFormat, *, agent: bool = False) -> str:
    """One ``--format json`` / ``--format trustgraph`` line."""
    message = to_json(event)
    return json_text(to_trustgraph(message, agent=agent) if fmt is OutputFormat.trustgraph else message)


def _limit(flag: str, what: str) -> Any:  # an OptionInfo standing in for an int default
    return typer.Option(None, flag, min=1, help=f"{what} (default from settings).")


def source_line(src: Source) -> str:
    """The ``-x`` source line: ``Chunk i → Page n → <title>`` (SPEC §8), without offsets."""
    return render_source_line(src, offsets=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _values(quads: Sequence[Quad], p: object) -> list[str]:
    return [q.o.value for q in quads if q.p == p and isinstance(q.o, Literal)]


def _focus_lines(event: Explain, store: QuadStore) -> list[str]:
    selections: dict[str, dict[str, object]] = {}
    for q in event.triples:
        if q.p in (TG.edge, TG.reasoning):
            entry = selections.setdefault(q.s.value, {})  # type: ignore[union-attr]
            entry["edge" if q.p == TG.edge else "reason"] = q.o
    ordered = sorted(selections.items(), key=lambda kv: int(kv[0].rsplit(":", 1)[-1]))
    edges = [e["edge"] for _, e in ordered if isinstance(e.get("edge"), TripleTerm)]
    terms: list[TripleTerm] = [e for e in edges if isinstance(e, TripleTerm)]
    labels = LabelCache(store)
    labels.resolve(t for e in terms for t in (e.s, e.p, e.o))
    found = edge_sources(store, terms)
    lines = [f"    Focused on {len(ordered)} edge(s)"]
    for _, entry in ordered:
        edge = entry.get("edge")
        if not isinstance(edge, TripleTerm):
            continue
        names = ", ".join(_one_line(labels.label(t)) for t in (edge.s, edge.p, edge.o))
        lines.append(f"      Edge: ({names})")
        reason = entry.get("reason")
        if isinstance(reason, Literal):
            lines.append(f"        Reason: {_one_line(reason.value)}")
        lines += [f"        Source: {source_line(src)}" for src in found.get(edge, [])]
    return lines


def explain_lines(event: Explain, store: QuadStore) -> list[str]:
    """The SPEC §8 ``-x`` lines of one step."""
    lines = [f"  [{event.step}] {event.explain_id}"]
    quads = event.triples
    if event.step == "question":
        lines += [f"    Query: {_one_line(v)}" for v in _values(quads, TG.query)]
        lines += [f"    Asked: {_one_line(v)}" for v in _values(quads, TG.originalQuery)]
        lines += [f"    Turn: {v}" for v in _values(quads, TG.turn)]
    elif event.step == "grounding":
        lines.append(f"    Concepts: {', '.join(_values(quads, TG.concept))}")
    elif event.step == "exploration":
        counts = [q.o.value for q in quads if q.p == TG.edgeCount and isinstance(q.o, Literal)]
        lines.append(f"    Edges explored: {counts[0] if counts else 0}")
    elif event.step == "ranking":
        lines += _ranking_lines(event)
    elif event.step == "focus":
        lines += _focus_lines(event, store)
    return lines


def _ranking_lines(event: Explain) -> list[str]:
    """How many passages were ranked and seeded, and how many came in over a bridge entity."""
    passages = {q.s for q in event.triples if q.p == TG.rankedPassage}
    seeds = {q.s for q in event.triples if q.p == TG.seed}
    bridged = {q.s for q in event.triples if q.p == TG.bridgeEntity}
    lines = [f"    Ranked {len(passages)} passage(s) from {len(seeds)} seed(s), {len(bridged)} over a bridge entity"]
    if any(q.p == TG.relevant and isinstance(q.o, Literal) and q.o.value == "false" for q in event.triples):
        lines.append("    Nothing passed the relevance floor")
    return lines


def citation_lines(sources: Sequence[Source], answer: str | None = None) -> list[str]:
    """One line per citation marker: ``[n] title, page p, chars a–b``.

    Given the answer, only the markers it cites are listed, then a count of the other sources.
    """
    seen: dict[str, str] = {}
    for src in sources:
        if src.marker and src.marker not in seen:
            where = f", page {src.page_number}" if src.page_number is not None else ""
            if src.page_number is None and src.section_title:
                where = f', section "{_one_line(src.section_title)}"'
            seen[src.marker] = f"{src.marker} {src.title}{where}, chars {src.offset}–{src.offset + src.length}"
    order = sorted(seen, key=lambda m: int(m.strip("[]")) if m.strip("[]").isdigit() else 0)
    if answer is None:
        return [seen[m] for m in order]
    cited = [m for m in order if m in answer]
    rest = len(order) - len(cited)
    more = [f"(+{rest} more supporting chunk(s) in the trace: provgraph traces show ID --show-provenance)"]
    return [seen[m] for m in cited] + (more if rest else [])


def turn_line(final: Final) -> str:
    """The stderr line naming a conversation turn."""
    return f"conversation {final.conversation}, turn {final.turn} (provgraph conversations show {final.conversation})"


def error_code(event: ErrorMessage) -> int:
    """The exit code of the error class the stream reported (1 for anything else)."""
    cls = getattr(errors, event.type, None)
    if isinstance(cls, type) and issubclass(cls, errors.ProvgraphError):
        return exit_code_for(cls(event.message))
    return 1


def run_to_exit(main: Callable[[], Awaitable[int]], llm: ChatModel | None) -> None:
    """Run ``main`` in one event loop, close ``llm`` in that loop, and exit with ``main``'s code if it is not 0."""

    timeout = query_timeout()

    async def run() -> int:
        try:
            return await asyncio.wait_for(main(), timeout)
        except asyncio.TimeoutError:
            raise errors.ProvgraphError(timeout_message(timeout or 0)) from None
        finally:
            if llm is not None:
                await llm.aclose()

    code = asyncio.run(run())
    if code:
        raise typer.Exit(code)


async def _run(rt: Runtime, params: GraphRagParams, question: str, *, explainable: bool, streaming: bool,
               fmt: OutputFormat, conversation: str | None = None) -> int:
    rag = rt.graph_rag(params)
    code = 0
    async for event in ask_in(rt.store, rt.llm, rt.settings, conversation, question, rag.ask):
        code = _show(event, rt.store, explainable=explainable, streaming=streaming, fmt=fmt)
    return code


def _show(event: Event, store: QuadStore, *, explainable: bool, streaming: bool, fmt: OutputFormat) -> int:
    if fmt is not OutputFormat.text:
        echo(wire_line(event, fmt))
    elif isinstance(event, Explain) and explainable:
        echo("\n".join(explain_lines(event, store)), err=True)
    elif isinstance(event, AnswerPiece) and streaming:
        echo(event.text, nl=event.end_of_stream)  # the answer's line ends with the stream
    elif isinstance(event, Final):
        if not streaming:
            echo(event.answer)
        citations = citation_lines(event.sources, event.answer)
        if citations:
            echo("\n" + "\n".join(citations))
    if isinstance(event, Final):
        for warning in event.warnings:
            echo(f"warning: {warning}", err=True)
        if event.conversation is not None and fmt is OutputFormat.text:
            echo(turn_line(event), err=True)
    if isinstance(event, ErrorMessage):
        if fmt is OutputFormat.text:
            echo(f"error: {event.message}", err=True)
        return error_code(event)
    return 0


def graph_rag(
    ctx: typer.Context,
    question: str = typer.Option(..., "-q", "--question", help="The question to answer."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    explainable: bool = typer.Option(False, "-x", "--explainable", help="Print each trace step on stderr."),
    streaming: bool = typer.Option(True, "--streaming/--no-streaming", help="Print the answer as it streams."),
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, json (one event per line), or trustgraph (the same in TrustGraph's shapes)."),
    entity_limit: int = _limit("--entity-limit", "Seed entities taken from the entity index"),
    triple_limit: int = _limit("--triple-limit", "Edges per term and direction in the walk"),
    max_subgraph_size: int = _limit("--max-subgraph-size", "Edges explored in all"),
    max_path_length: int = _limit("--max-path-length", "Hops from the seed entities"),
    edge_score_limit: int = _limit("--edge-score-limit", "Edges kept by the similarity pre-filter"),
    edge_limit: int = _limit("--edge-limit", "Edges selected at most"),
    grounding: bool = typer.Option(False, "--grounding", help="Ask the LLM for the question's concepts first."),
    llm: str = LLM_OPTION,
    no_trace: bool = NO_TRACE_OPTION,
    conversation: str = CONVERSATION_OPTION,
) -> None:
    """Answer a question from the knowledge graph; -x explains each step on stderr as it happens.

    Example: provgraph graph-rag -q "Who discovered polonium?" -x
    """
    settings = settings_from(
        ctx, collection=collection, user=user, entity_limit=entity_limit, triple_limit=triple_limit,
        max_subgraph_size=max_subgraph_size, max_path_length=max_path_length, edge_score_limit=edge_score_limit,
        edge_limit=edge_limit, llm=llm, traces=traces_override(no_trace),
    )
    params = GraphRagParams.from_settings(settings, grounding=grounding)
    with open_runtime(settings) as rt:
        run_to_exit(lambda: _run(rt, params, question, explainable=explainable, streaming=streaming, fmt=fmt,
                                 conversation=conversation), rt.llm)


def register(app: typer.Typer) -> None:
    """Add ``graph-rag`` to the app."""
    app.command("graph-rag")(graph_rag)
