"""``load`` and ``extract``: documents in, provenance-tracked knowledge out, with progress."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from provgraph.cli.common import COLLECTION_OPTION, LLM_OPTION, USER_OPTION, cell, drop, echo, json_text, on_server, open_runtime, settings_from, stderr, stdout
from provgraph.errors import InputError, NotFound, ProvgraphError
from provgraph.cli.render import document_id
from provgraph.explain.documents import load_summary
from provgraph.extract.base import ChunkInput, Extractor
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.ingest.paths import expand_paths, paths_error
from provgraph.ingest.pipeline import LoadResult
from provgraph.layout import CollectionRef
from provgraph.rdf.ids import document_iri
from provgraph.runtime import Runtime, job_queue
from provgraph.cli.jobs import enqueue, job_states, wait_for

__all__ = ["register"]


def _progress() -> Progress:
    return Progress(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=stderr, transient=False, disable=not stderr.is_terminal)


def _extract(rt: Runtime, chunks: list[ChunkInput], *, extractors: list[Extractor],
             concurrency: int | None, only_missing: bool, progress: Progress, commit: bool = True) -> list[ChunkOutcome]:
    """Extract and embed; each document's completion record is written once all its chunks are."""
    pipe = rt.extraction(extractors, concurrency=concurrency)
    task = progress.add_task("extract", total=len(chunks) * len(pipe.extractors))

    async def go() -> list[ChunkOutcome]:
        try:
            return await pipe.run(chunks, only_missing=only_missing, progress=lambda o: progress.advance(task),
                                  on_commit=rt.commit_documents if commit else None)
        finally:
            if rt.llm is not None:
                await rt.llm.aclose()

    return asyncio.run(go())


def _summary(results: list[LoadResult], outcomes: list[ChunkOutcome], failed_files: list[str], fmt: str) -> None:
    summary = load_summary(results, outcomes, failed_files)
    rows = summary["documents"]
    if fmt == "json":
        echo(json_text(summary))
        return
    if not rows:
        return
    table = Table(title="Loaded")
    table.add_column("Document", no_wrap=True, overflow="fold")  # whole, as other commands take it
    for name in ("Parts", "Chunks", "Facts", "Failed", "Status"):
        table.add_column(name, overflow="fold")
    for row in rows:
        # an unchanged document was not extracted again: no new facts, which is not "0 facts"
        facts = "-" if row["status"] == "unchanged" else str(row["facts"])
        table.add_row(cell(document_id(str(row["document"]))), _parts(row), str(row["chunks"]), facts, str(row["failed_chunks"]),
                      str(row["status"]))
    stdout.print(table)


def _parts(row: dict[str, object]) -> str:
    """A document's parts as counted: "4 pages" (PDF), "6 sections" (Markdown, HTML), or "-"."""
    for kind in ("pages", "sections"):
        count = row.get(kind)
        if isinstance(count, int) and count:
            return f"{count} {kind[:-1] if count == 1 else kind}"
    return "-"


def _jobs_summary(rt: Runtime, rows: list[dict[str, object]], results: list[LoadResult], failed: list[str],
                  fmt: str, *, waited: bool) -> None:
    """The documents, their jobs and their states; exit 1 when a file or a job failed."""
    states = job_states(rt, [str(row["job"]) for row in rows]) if waited else {}
    for row in rows:
        row["state"], row["error"] = states.get(str(row["job"]), ("queued", None))
    for line in failed:
        echo(f"error: {line}", err=True)
    for row in rows:
        if row["state"] == "failed":
            echo(f"error: {row['document']} (job {row['job']}): {row['error']}", err=True)
    if fmt == "json":
        echo(json_text({"documents": rows, "unchanged": [r.document.value for r in results if not r.chunks]}))
    elif rows:
        table = Table("Document", "Chunks", "Job", "State", title="Loaded" if waited else "Queued")
        for row in rows:
            table.add_row(cell(str(row["document"])), str(row["chunks"]), str(row["job"]), str(row["state"]))
        stdout.print(table)
    if failed or any(row["state"] == "failed" for row in rows):
        raise typer.Exit(1)


def load(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(..., help="Files, globs or folders (searched recursively)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    doc_id: str = typer.Option(None, "--id", help="Document ID (one file only; default: the file name)."),
    title: str = typer.Option(None, "--title", help="Document title (one file only)."),
    chunk_size: int = typer.Option(None, "--chunk-size", help="Target chunk size in characters (default 2000)."),
    chunk_overlap: int = typer.Option(None, "--chunk-overlap", help="Overlap between chunks (default 100)."),
    extractors: str = typer.Option(None, "--extractors", help="Comma-separated: definitions, relationships, ontology, agent, cooccurrence."),
    ontology: Path = typer.Option(None, "--ontology", help="OWL/RDFS ontology (Turtle) for the ontology extractor."),
    concurrency: int = typer.Option(None, "--concurrency", help="Concurrent LLM calls (default 4)."),
    llm: str = LLM_OPTION,
    fmt: str = typer.Option("table", "--format", "-f", help="table or json."),
    no_wait: bool = typer.Option(False, "--no-wait", help="With PROVGRAPH_QUEUE_URL: enqueue and print the job ids."),
) -> None:
    """Load documents: store, decode, chunk, extract, embed — every fact traced to its chunk.

    Example: provgraph load examples/corpus -C demo
    """
    settings = settings_from(ctx, collection=collection, user=user, chunk_size=chunk_size,
                             chunk_overlap=chunk_overlap, llm=llm)
    files, failed = expand_paths(paths)
    if not files:  # nothing to load: refused before the collection is created
        raise paths_error(failed)
    if (doc_id is not None or title is not None) and len(files) > 1:
        raise InputError("--id and --title apply to one file; got several")
    if doc_id is not None and not doc_id.strip():
        raise InputError("--id cannot be empty or blank")
    if concurrency is not None and concurrency < 1:
        raise InputError(f"--concurrency must be at least 1, got {concurrency}")
    results: list[LoadResult] = []
    ref = CollectionRef(settings.home, settings.user, settings.collection)
    new = not on_server() and not ref.exists()  # a load that loads nothing leaves no collection behind
    with open_runtime(settings, create=True) as rt, _progress() as progress:
        chosen = rt.extractors(extractors, ontology=ontology)  # before loading: a bad choice fails first
        loader = rt.loader()
        task = progress.add_task("files", total=len(files))
        seen: dict[str, Path] = {}
        for path in files:
            doc = document_iri(doc_id or path.name).value
            if doc in seen:  # two files, one document ID: refuse rather than let the second replace the first
                failed.append(f"{path}: same document ID {doc} as {seen[doc]} in this run; load it with --id")
            else:
                seen[doc] = path
                try:
                    results.append(loader.load_file(path, doc_id=doc_id, title=title))
                except ProvgraphError as exc:
                    failed.append(str(exc).splitlines()[0])
            progress.advance(task)
        chunks = [c for r in results for c in r.chunks]
        rt.commit_documents([r.document for r in results if not r.chunks])
        queued = job_queue(settings) if chunks else None
        if queued is not None:  # workers extract: wait on the jobs table (or not), as the in-process path would
            rows = enqueue(rt, queued, [r for r in results if r.chunks], extractors)
            if not no_wait:
                wait_for(rt, [str(row["job"]) for row in rows], progress)
        outcomes = _extract(rt, chunks, extractors=chosen, concurrency=concurrency,
                            only_missing=True, progress=progress) if chunks and queued is None else []
    if queued is not None:
        _jobs_summary(rt, rows, results, failed, fmt, waited=not no_wait)
        return
    if new and not results:
        drop(ref, settings)
    for line in failed:
        echo(f"error: {line}", err=True)
    for o in outcomes:
        if o.failed:
            echo(f"error: chunk {o.chunk.value} ({o.component}): {o.error}", err=True)
    for r in results:
        for w in r.warnings:
            echo(f"warning: {r.document.value}: {w}", err=True)
    _summary(results, outcomes, failed, fmt)
    if failed or any(o.failed for o in outcomes):
        raise typer.Exit(1)


def extract(
    ctx: typer.Context,
    doc: str = typer.Argument(..., help="Document ID (as given to load, or its IRI)."),
    collection: str = COLLECTION_OPTION,
    user: str = USER_OPTION,
    extractors: str = typer.Option(None, "--extractor", "--extractors", help="Extractor(s), comma-separated."),
    ontology: Path = typer.Option(None, "--ontology", help="Ontology (Turtle) for the ontology extractor."),
    force: bool = typer.Option(False, "--force", help="Re-extract every chunk, not only failed or new ones."),
    concurrency: int = typer.Option(None, "--concurrency", help="Concurrent LLM calls (default 4)."),
    llm: str = LLM_OPTION,
) -> None:
    """Re-run extraction on a loaded document (by default only chunks that failed or were never extracted).

    Example: provgraph extract report.pdf --extractor relationships -C demo
    """
    if concurrency is not None and concurrency < 1:
        raise InputError(f"--concurrency must be at least 1, got {concurrency}")
    settings = settings_from(ctx, collection=collection, user=user, llm=llm)
    with open_runtime(settings) as rt, _progress() as progress:
        iri = document_iri(doc)
        if not rt.librarian.exists(iri.value):
            raise NotFound(f"document {iri.value} is not in collection {rt.ref}")
        chunks = list(rt.loader().stored_chunks(iri))
        complete = rt.librarian.is_complete(iri.value)  # an interrupted load stays incomplete: `load` redoes it
        if force:
            rt.librarian.clear_complete(iri.value)  # until its new vectors are written too
        outcomes = _extract(rt, chunks, extractors=rt.extractors(extractors, ontology=ontology),
                            concurrency=concurrency, only_missing=not force, progress=progress,
                            commit=complete or force)
    done = [o for o in outcomes if not o.skipped and not o.failed]
    failed = [o for o in outcomes if o.failed]
    for o in failed:
        echo(f"error: chunk {o.chunk.value} ({o.component}): {o.error}", err=True)
    echo(f"{iri.value}: {len(done)} chunk extraction(s) done, {sum(o.facts for o in done)} facts, "
               f"{len(failed)} failed, {sum(1 for o in outcomes if o.skipped)} already done")
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``load`` and ``extract``."""
    app.command("load")(load)
    app.command("extract")(extract)
