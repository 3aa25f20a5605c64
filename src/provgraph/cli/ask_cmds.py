"""The ``document-rag`` and ``agent`` commands.

The answer streams to stdout, citations after it; ``-x`` prints each explain step on stderr as it
arrives (SPEC §8 style, sub-traces indented); ``-v`` (agent) prints thoughts, actions and
observations on stderr; ``--format json`` prints every event as a JSON line (SPEC §6 wire form).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import typer
from rich.table import Table

from provgraph.cli.common import (
    COLLECTION_OPTION,
    CONVERSATION_OPTION,
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
from provgraph.cli.rag_cmds import (
    OutputFormat,
    wire_line,
    citation_lines,
    error_code,
    explain_lines,
    run_to_exit,
    source_line,
    turn_line,
)
from provgraph.conversation.turn import ask_in
from provgraph.cli.render import truncate
from provgraph.events import (
    Action,
    AnswerPiece,
    ErrorMessage,
    Event,
    Explain,
    Final,
    Observation,
    Thought,
)
from provgraph.rdf.terms import Iri, Literal, Term
from provgraph.rdf.vocab import RDF, TG
from provgraph.retrieval.sources import chunk_sources
from provgraph.runtime import Runtime
from provgraph.store.base import QuadStore

__all__ = ["register", "document_rag", "agent", "agent_tools", "ExplainPrinter"]


def _values(ev: Explain, predicate: Iri) -> list[Term]:
    subject = Iri(ev.explain_id)
    return [q.o for q in ev.triples if q.s == subject and q.p == predicate]


def _text(ev: Explain, predicate: Iri) -> str | None:
    found = _values(ev, predicate)
    return found[0].value if found and isinstance(found[0], Literal) else None


def _is_graph_rag(ev: Explain) -> bool:
    return ev.explain_id.startswith(("urn:trustgraph:question:", "urn:trustgraph:prov:"))


class ExplainPrinter:
    """Prints explain steps in the style of SPEC §8 (``  [question] <iri>`` + details), one call per step.

    GraphRAG steps (an agent's ``knowledge-query`` sub-traces) are shown as ``graph-rag -x`` shows
    them; a sub-trace's steps are indented one level more than the trace that asked.
    """

    def __init__(self, echo: Callable[[str], None], store: QuadStore) -> None:
        self.echo = echo
        self.store = store
        self.root: str | None = None

    def __call__(self, ev: Explain) -> None:
        if self.root is None:
            self.root = ev.explain_id
        pad = "" if ev.explain_id.startswith(self.root) else "    "
        if _is_graph_rag(ev):
            lines = explain_lines(ev, self.store)
        else:
            lines = [f"  [{ev.step}] {ev.explain_id}", *(f"    {line}" for line in self._details(ev))]
        for line in lines:
            self.echo(pad + line)

    def _details(self, ev: Explain) -> list[str]:
        out: list[str] = []
        query = _text(ev, TG.query)
        if query is not None:
            out.append(f"Query: {truncate(query, 200)}")
        chunks = [c for c in _values(ev, TG.selectedChunk) if isinstance(c, Iri)]
        count = _text(ev, TG.chunkCount)
        if count is not None:
            out.append(f"Chunks retrieved: {count}")
        elif chunks:
            out.append(f"Cited {len(chunks)} chunk(s)")
        if chunks:
            found = chunk_sources(self.store, chunks)
            out += [f"  Source: {source_line(found[c]) if c in found else c.value}" for c in chunks]
        for label, predicate in (("Thought", TG.thought), ("Action", TG.action), ("Arguments", TG.arguments),
                                 ("Observation", TG.observation), ("Answer", TG.answer),
                                 ("Termination", TG.terminationReason)):
            value = _text(ev, predicate)
            if value is not None:
                out.append(f"{label}: {truncate(value, 200)}")
        if TG.Error in _values(ev, RDF.type):
            out.append("(error)")
        return out


async def _drive(events: AsyncIterator[Event], *, fmt: OutputFormat, explain: ExplainPrinter | None,
                 verbose: bool, streaming: bool, agent: bool = False) -> int:
    """Render the event stream; returns the exit code (0, or the error's)."""
    out = lambda text, nl=True: echo(text, nl=nl)  # noqa: E731
    err = lambda text: echo(text, err=True)  # noqa: E731
    pieces: list[str] = []
    code = 0
    ended = False
    async for ev in events:  # read to the end, so the stream closes itself (and its MCP servers)
        if fmt is not OutputFormat.text:
            out(wire_line(ev, fmt, agent=agent))
            if isinstance(ev, ErrorMessage):
                code = error_code(ev)
            continue
        if isinstance(ev, Explain):
            if explain is not None:
                explain(ev)
        elif isinstance(ev, AnswerPiece):
            pieces.append(ev.text)
            if streaming and (ev.text or ev.end_of_stream):
                out(ev.text, nl=ev.end_of_stream)  # the answer's line ends with its stream
                ended = ev.end_of_stream
        elif isinstance(ev, Thought) and verbose:
            err(f"[{ev.step}] Thought: {ev.text}")
        elif isinstance(ev, Action) and verbose:
            err(f"[{ev.step}] Action: {ev.name} {json.dumps(ev.arguments, ensure_ascii=False)}")
        elif isinstance(ev, Observation) and verbose:
            err(f"[{ev.step}] Observation{' (error)' if ev.error else ''}: {truncate(ev.text, 300)}")
        elif isinstance(ev, ErrorMessage):
            if streaming and pieces:
                out("")
            err(f"error: {ev.message}")
            code = error_code(ev)
        elif isinstance(ev, Final):
            if not streaming:
                out(ev.answer)
            elif not ended:
                out("")
            _citations(ev, out)
            for warning in ev.warnings:
                err(f"warning: {warning}")
            if ev.conversation is not None:
                err(turn_line(ev))
    return code


def _citations(final: Final, out: Callable[[str], None]) -> None:
    """Marked citations as ``graph-rag`` prints them; unmarked sources (an agent's) one per line."""
    lines = citation_lines(final.sources, final.answer)
    lines += [f"{source_line(s)}, chars {s.offset}–{s.offset + s.length}" for s in final.sources if not s.marker]
    if lines:
        out("")
        for line in lines:
            out(line)


def _run(events: Callable[[], AsyncIterator[Event]], rt: Runtime, *, fmt: OutputFormat,
         explain: ExplainPrinter | None, verbose: bool, streaming: bool, agent: bool = False) -> None:
    """Drive the stream in one event loop, close the LLM there, exit with the stream's code."""
    run_to_exit(lambda: _drive(events(), fmt=fmt, explain=explain, verbose=verbose, streaming=streaming,
                               agent=agent), rt.llm)


def document_rag(
    ctx: typer.Context,
    question: str = typer.Option(..., "-q", "--question", help="The question to answer."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    explainable: bool = typer.Option(False, "-x", "--explainable", help="Print each trace step on stderr."),
    streaming: bool = typer.Option(True, "--streaming/--no-streaming", help="Print the answer as it streams."),
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, json (one event per line), or trustgraph (the same in TrustGraph's shapes)."),
    doc_limit: int = typer.Option(None, "--doc-limit", min=1, help="Chunks retrieved (default from settings)."),
    llm: str = LLM_OPTION,
    no_trace: bool = NO_TRACE_OPTION,
    conversation: str = CONVERSATION_OPTION,
) -> None:
    """Answer from the most similar chunks, citing them; extractive (cited sentences) without an LLM.

    Example: provgraph document-rag -q "Who discovered polonium?" -x
    """
    settings = settings_from(ctx, collection=collection, user=user, doc_limit=doc_limit, llm=llm,
                             traces=traces_override(no_trace))
    with open_runtime(settings) as rt:
        engine = rt.document_rag()
        printer = ExplainPrinter(_stderr, rt.store) if explainable else None
        _run(lambda: ask_in(rt.store, rt.llm, rt.settings, conversation, question, engine.ask), rt, fmt=fmt,
             explain=printer, verbose=False, streaming=streaming)


def _stderr(text: str) -> None:
    echo(text, err=True)


def agent(
    ctx: typer.Context,
    question: str = typer.Option(None, "-q", "--question", help="The question to answer."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    explainable: bool = typer.Option(False, "-x", "--explainable", help="Print each trace step on stderr."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Print thoughts, actions and observations on stderr."),
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, json (one event per line), or trustgraph (the same in TrustGraph's shapes)."),
    max_iterations: int = typer.Option(None, "--max-iterations", min=1,
                                       help="Think/act/observe rounds at most (default from settings)."),
    no_trace: bool = NO_TRACE_OPTION,
    conversation: str = CONVERSATION_OPTION,
    group: list[str] = typer.Option(None, "--group", "-g", help="A tool group the agent may use (repeatable; "
                                    "default: default, * for all; see `agent tools`)."),
    state: str = typer.Option(None, "--state", help="The agent's state: only tools applicable in it."),
) -> None:
    """Answer with a ReAct agent over knowledge-query, document-query, text-completion and MCP tools.

    Needs an LLM (PROVGRAPH_LLM_BASE_URL and PROVGRAPH_LLM_MODEL, or PROVGRAPH_LLM_GGUF_PATH); MCP
    servers come from mcp_servers. `provgraph agent tools` lists the tools it would have.

    Example: provgraph agent -q "When was the Radium Institute founded?" -v -x
    """
    from provgraph.agent.mcp import parse_servers

    if ctx.invoked_subcommand is not None:
        return
    if question is None:
        raise typer.BadParameter("missing: give the question, or use `agent tools`", ctx, param_hint="'-q' / '--question'")
    settings = settings_from(ctx, collection=collection, user=user, max_iterations=max_iterations,
                             traces=traces_override(no_trace))
    parse_servers(settings.mcp_servers)  # a bad MCP configuration fails before the collection opens
    with open_runtime(settings) as rt:
        events = ask_in(rt.store, rt.llm, rt.settings, conversation, question,
                        lambda q: rt.ask_agent(q, groups=group or None, state=state))
        printer = ExplainPrinter(_stderr, rt.store) if explainable else None
        _run(lambda: events, rt, fmt=fmt, explain=printer, verbose=verbose, streaming=True, agent=True)


def agent_tools(
    ctx: typer.Context,
    fmt: OutputFormat = typer.Option(OutputFormat.text, "--format", help="text, or json (one tool per line)."),
) -> None:
    """List the tools the agent would have: the built-in ones and those the MCP servers offer.

    Connects to every configured MCP server (mcp_servers) to discover its tools, then closes it.

    Example: provgraph agent tools --format json
    """
    from provgraph.agent.groups import tool_groups
    from provgraph.agent.mcp import McpTools, parse_servers
    from provgraph.agent.tools import BUILTIN_TOOLS

    settings = settings_from(ctx)
    servers = parse_servers(settings.mcp_servers)

    async def discover() -> list[tuple[str, str, str]]:
        async with McpTools(servers, taken=[spec.name for spec in BUILTIN_TOOLS]) as mcp:
            found = [(t.spec.name, t.spec.description, f"mcp:{t.connection.config.name}")  # type: ignore[attr-defined]
                     for t in mcp.tools]
        return [(spec.name, spec.description, "built-in") for spec in BUILTIN_TOOLS] + found

    rows = asyncio.run(discover())
    groups = {name: ", ".join(tool_groups(name, settings.agent_tools, mcp=origin.startswith("mcp:"))[0])
              for name, _, origin in rows}
    if fmt is OutputFormat.json:
        for name, description, origin in rows:
            echo(json_text({"name": name, "source": origin, "groups": groups[name].split(", "),
                            "description": description}))
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("Tool", "Source", "Groups", "Description"):
        table.add_column(column, overflow="fold")
    for name, description, origin in rows:
        table.add_row(cell(name), cell(origin), cell(groups[name]), cell(description))
    stdout.print(table)


agent_app = typer.Typer(help="The ReAct agent: `agent -q QUESTION` answers, `agent tools` lists its tools.")


def register(app: typer.Typer) -> None:
    """Add ``document-rag`` and the ``agent`` group (``agent -q …``, ``agent tools``) to the app."""
    app.command("document-rag")(document_rag)
    agent_app.callback(invoke_without_command=True)(agent)
    agent_app.command("tools")(agent_tools)
    app.add_typer(agent_app, name="agent")
