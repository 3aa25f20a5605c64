"""The ``retrieve`` command: the ranked passages and their subgraph, no answer (text, or ``--format json``)."""

from __future__ import annotations

import typer

from provgraph.cli.common import COLLECTION_OPTION, USER_OPTION, echo, json_text, open_runtime, settings_from
from provgraph.cli.rag_cmds import OutputFormat
from provgraph.retrieval.retrieve import MODES, Retrieval, RetrievedPassage, Retriever, to_json

__all__ = ["register", "retrieve", "retrieval_lines"]

_TEXT = 300  # characters of a passage's text shown in the text form


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _why(p: RetrievedPassage, names: dict[str, str]) -> str:
    parts = [f"score {p.score:.4f}"]
    if p.graph_rank is not None and p.graph_score is not None:
        parts.append(f"graph #{p.graph_rank} ({p.graph_score:.4f})")
    if p.lexical_rank is not None:
        parts.append(f"lexical #{p.lexical_rank}")
    if p.dense_rank is not None:
        parts.append(f"dense #{p.dense_rank}")
    if p.covers is not None:
        parts.append(f"first for {p.covers!r}")
    if p.bridge is not None:
        parts.append(f"hop {p.hop} via {names.get(p.bridge, p.bridge)}")
    return ", ".join(parts)


def retrieval_lines(result: Retrieval) -> list[str]:
    """The text form: each passage's rank, scores and path, source and text; then the facts."""
    lines = [] if result.relevant else ["Nothing relevant found; the closest passages:"]
    names = {f.s: f.s_label for f in result.facts} | {f.o: f.o_label for f in result.facts}
    for p in result.passages:
        where = p.title or p.document or p.chunk
        if p.page_number is not None:
            where += f", page {p.page_number}"
        elif p.section_title:
            where += f', section "{_one_line(p.section_title)}"'
        if p.offset is not None and p.length is not None:
            where += f", chars {p.offset}–{p.offset + p.length}"
        text = _one_line(p.text)
        lines.append(f"#{p.rank} {where} [{_why(p, names)}]")
        lines.append(f"    {text[:_TEXT]}{'…' if len(text) > _TEXT else ''}")
    if result.facts:
        lines.append(f"\nSubgraph: {len(result.facts)} fact(s)")
        lines += [f"  ({_one_line(f.s_label)}, {_one_line(f.p_label)}, {_one_line(f.o_label)})" for f in result.facts]
    return lines


def retrieve(
    ctx: typer.Context,
    question: str = typer.Option(..., "-q", "--question", help="The question to retrieve passages for."),
    k: int = typer.Option(5, "-k", min=1, max=1000, help="How many passages."),
    mode: str = typer.Option("graph", "--mode", help=f"{', '.join(MODES)} (default graph)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, or json (one object)."),
) -> None:
    """Retrieve the passages for a question, with their scores, provenance and facts; no answer, no LLM.

    Example: provgraph retrieve -q "Who discovered polonium?" -k 5 --mode graph --format json
    """
    settings = settings_from(ctx, collection=collection, user=user, llm="none")
    with open_runtime(settings) as rt:
        result = Retriever.of(rt).retrieve(question, k=k, mode=mode)
    if fmt is OutputFormat.json:
        echo(json_text(to_json(result)))
    else:
        echo("\n".join(retrieval_lines(result)))


def register(app: typer.Typer) -> None:
    """Add ``retrieve`` to the app."""
    app.command("retrieve")(retrieve)
