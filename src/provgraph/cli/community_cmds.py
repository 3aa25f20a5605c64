"""``communities build|list|show``: the knowledge graph's communities and their reports."""

from __future__ import annotations

from enum import Enum
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from provgraph.cli.common import (
    COLLECTION_OPTION,
    LLM_OPTION,
    NO_TRACE_OPTION,
    USER_OPTION,
    cell,
    echo,
    json_text,
    open_runtime,
    settings_from,
    stdout,
    traces_override,
)
from provgraph.events import Explain
from provgraph.rdf.terms import Literal
from provgraph.rdf.vocab import TG
from provgraph.cli.rag_cmds import run_to_exit

__all__ = ["register", "communities_app", "detail_lines", "global_rag", "global_explain_lines"]

communities_app = typer.Typer(help="Find the knowledge graph's communities, write their reports, list and show them.",
                              no_args_is_help=True)


class Format(str, Enum):
    text = "text"
    json = "json"


@communities_app.command("build")
def communities_build(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    llm: str = LLM_OPTION,
    resolution: float = typer.Option(0.05, "--resolution", min=0.0001, help="Leiden resolution of the top level."),
    max_size: int = typer.Option(40, "--max-size", min=1, help="A community with more entities is split below."),
    seed: int = typer.Option(42, "--seed", help="Seed of the clustering (the same facts, the same communities)."),
    max_llm: int = typer.Option(50, "--max-llm-reports", min=0, help="LLM reports at most (the rest extractive)."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="text or json."),
) -> None:
    """Cluster the knowledge graph (hierarchical Leiden) and write the missing or stale community reports.

    Example: provgraph communities build -C research
    """
    from provgraph.communities.build import build
    from provgraph.communities.cluster import LeidenParams

    settings = settings_from(ctx, collection=collection, user=user, llm=llm)
    params = LeidenParams(resolution=resolution, max_size=max_size, seed=seed)
    with open_runtime(settings) as rt, Progress(TextColumn("{task.description:<16}"), BarColumn(),
                                                 MofNCompleteColumn(), TimeElapsedColumn(), console=stdout,
                                                 transient=True, disable=fmt is Format.json) as bar:
        tasks: dict[str, Any] = {}

        def tell(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        result: dict[str, Any] = {}

        async def main() -> int:
            result["r"] = await build(rt.store, rt.librarian, llm=rt.llm, params=params, max_llm=max_llm,
                                      progress=tell)
            return 0

        run_to_exit(main, rt.llm)
    done = result["r"]
    d, r = done.detection, done.reports
    summary = {"entities": d.entities, "facts": d.facts, "communities": d.communities, "added": d.added,
               "kept": d.kept, "removed": d.removed, "levels": d.levels, "unchanged": d.unchanged,
               "reports_written": r.written, "llm_reports": r.llm_reports, "reports_removed": len(d.reports_removed),
               "run": d.run.value if d.run else None, "warnings": r.warnings}
    if fmt is Format.json:
        echo(json_text(summary, indent=2))
        return
    if d.unchanged:
        echo(f"{d.communities} communities on {d.levels} level(s), every report current: nothing changed since "
             "the last build")
        return
    echo(f"{d.entities} entities, {d.facts} facts → {d.communities} communities on {d.levels} level(s): "
         f"{d.added} new, {d.kept} unchanged, {d.removed} gone; {r.written} report(s) written "
         f"({r.llm_reports} by the LLM), {len(d.reports_removed)} removed")
    for warning in r.warnings:
        echo(f"warning: {warning}", err=True)


@communities_app.command("list")
def communities_list(
    ctx: typer.Context,
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
) -> None:
    """List the communities by level (largest first) with their report titles. Example: provgraph communities list"""
    from provgraph.communities.views import community_rows

    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        rows = community_rows(rt.store)
    if fmt == "json":
        echo(json_text(rows, indent=2))
        return
    if not rows:
        echo(f"no communities in {rt.ref} (provgraph communities build finds them)")
        return
    table = Table("ID", "Label", "Level", "Entities", "Facts", "Report")
    for row in rows:
        title = row["title"] or "(none)"
        if row["stale"]:
            title += " (stale)"
        table.add_row(*(cell(v) for v in (row["id"].removeprefix("urn:provgraph:community:")[:8], row["label"],
                                          row["level"], row["entities"], row["facts"], title)))
    stdout.print(table)


def _where(src: dict[str, Any]) -> str:
    where = f", page {src['page_number']}" if src.get("page_number") is not None else ""
    if not where and src.get("section_title"):
        where = f', section "{src["section_title"]}"'
    return f"{src['title']}{where}, chunk {src['chunk_index']}"


def detail_lines(data: dict[str, Any]) -> list[str]:
    """``communities show`` as text: the community, its report's findings with their facts and sentences."""
    lines = [f"{data['label']} (level {data['level']}): {data['entities']} entities, {data['facts']} facts",
             f"  id: {data['id']}"]
    if data["parent"]:
        lines.append(f"  parent: {data['parent']}")
    report = data["report"]
    if report is None:
        lines.append("  no report yet (provgraph communities build)")
    else:
        stale = " — STALE: its members changed; provgraph communities build rebuilds it" if report["stale"] else ""
        lines += [f"  Report: {report['title']}{stale}", f"    {report['summary']}",
                  f"    by: {report['model'] or 'extractive (no LLM)'}"]
        for f in report["findings"]:
            lines.append(f"    {f['rank']}. {f['text']}")
            for fact in f["facts"]:
                gone = "" if fact["stored"] else "  [retracted: no longer in the store]"
                lines.append(f"       fact: ({', '.join(fact['labels'])}){gone}")
                for src in fact["sources"][:3]:
                    lines.append(f"         source: {_where(src)}")
                    if "evidence" in src:
                        lines.append(f"           Sentence: \"{' '.join(src['evidence']['text'].split())}\"")
    lines.append("  Members: " + ", ".join(m["label"] for m in data["members"])
                 + (" …" if data["entities"] > len(data["members"]) else ""))
    return lines


@communities_app.command("show")
def communities_show(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="ID", help="Community ID (or its first characters) or label."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="text or json."),
) -> None:
    """Show a community: members, report, each finding's facts and source sentences.

    Example: provgraph communities show 3f2a91c0
    """
    from provgraph.communities.views import community_detail

    settings = settings_from(ctx, collection=collection, user=user)
    with open_runtime(settings) as rt:
        data = community_detail(rt.store, rt.librarian, ref)
    if fmt is Format.json:
        echo(json_text(data, indent=2))
    else:
        echo("\n".join(detail_lines(data)))


def global_rag(
    ctx: typer.Context,
    question: str = typer.Option(..., "-q", "--question", help="The question about the whole corpus."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    explainable: bool = typer.Option(False, "-x", "--explainable", help="Print each trace step on stderr."),
    fmt: Format = typer.Option(Format.text, "--format", help="text, or json (one event per line)."),
    level: int = typer.Option(0, "--level", min=0, help="Community level searched (0: the top)."),
    max_reports: int = typer.Option(5, "--max-reports", min=1, help="Reports the answer draws on at most."),
    map_limit: int = typer.Option(8, "--map-limit", min=1, help="Reports the LLM scores at most (one call each)."),
    llm: str = LLM_OPTION,
    no_trace: bool = NO_TRACE_OPTION,
) -> None:
    """Answer a question about the whole corpus by map-reduce over the community reports, every claim cited.

    Example: provgraph global-rag -q "What are the main themes of these documents?" -x
    """
    from provgraph.cli.rag_cmds import OutputFormat, _show
    from provgraph.communities.global_rag import GlobalParams

    settings = settings_from(ctx, collection=collection, user=user, llm=llm, traces=traces_override(no_trace))
    params = GlobalParams(level=level, max_reports=max_reports, map_limit=map_limit,
                          question_deadline=settings.question_deadline)
    out = OutputFormat.json if fmt is Format.json else OutputFormat.text

    async def main(rt: Any) -> int:
        code = 0
        async for event in rt.global_rag(params).ask(question):
            if isinstance(event, Explain) and explainable and out is OutputFormat.text:
                echo("\n".join(global_explain_lines(event)), err=True)
                continue
            code = _show(event, rt.store, explainable=False, streaming=True, fmt=out)
        return code

    with open_runtime(settings) as rt:
        run_to_exit(lambda: main(rt), rt.llm)


def global_explain_lines(event: Explain) -> list[str]:
    """The ``-x`` lines of a global search step."""
    lines = [f"  [{event.step}] {event.explain_id}"]
    by_subject: dict[str, dict[str, str]] = {}
    for q in event.triples:
        if isinstance(q.o, Literal):
            by_subject.setdefault(q.s.value, {})[q.p.value] = q.o.value  # type: ignore[union-attr]
    own = by_subject.get(event.explain_id, {})
    if event.step == "question":
        lines.append(f"    Query: {' '.join(own.get(TG.query.value, '').split())}")
    elif event.step == "map":
        lines.append(f"    Reports scored: {own.get(TG.reportCount.value, '0')}")
        picks = sorted((v for k, v in by_subject.items() if TG.rank.value in v and k != event.explain_id),
                       key=lambda v: int(v[TG.rank.value]))
        for v in picks:
            lines.append(f"      Report {v[TG.rank.value]} (score {float(v[TG.score.value]):.3f}): "
                         f"{' '.join(v.get(TG.content.value, '').split())[:160]}")
    return lines


def register(app: typer.Typer) -> None:
    """Add ``communities`` and ``global-rag``."""
    app.add_typer(communities_app, name="communities")
    app.command("global-rag")(global_rag)
