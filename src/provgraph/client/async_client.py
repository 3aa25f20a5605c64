"""``AsyncClient``: every API call once, over httpx; the sync ``Client`` drives it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from provgraph import errors
from provgraph.api.objects import from_objects, to_objects
from provgraph.client.wire import event_from_json
from provgraph.errors import InputError, ProvgraphError, StoreUnavailable
from provgraph.events import Event
from provgraph.explain.model import Trace, TraceSummary
from provgraph.extract.base import ChunkInput
from provgraph.extract.pipeline import ChunkOutcome
from provgraph.ingest.pipeline import LoadResult
from provgraph.ingest.paths import expand_paths
from provgraph.retrieval.retrieve import Retrieval
from provgraph.retrieval.retrieve import from_json as retrieval_from_json
from provgraph.session import Answer, collect_answer

__all__ = ["AsyncClient"]


def _error(response: httpx.Response) -> ProvgraphError:
    """The provgraph error a refusal names (its class when provgraph has it)."""
    try:
        detail = response.json()["error"]
        cls = getattr(errors, detail["type"], None)
        kind = cls if isinstance(cls, type) and issubclass(cls, ProvgraphError) else ProvgraphError
        return kind(str(detail["message"]))
    except (ValueError, KeyError, TypeError):
        return ProvgraphError(f"HTTP {response.status_code} from {response.request.url}")


class AsyncClient:
    """A provgraph server's collection, as :class:`provgraph.Provgraph` offers a local one."""

    def __init__(self, url: str, token: str | None = None, *, collection: str = "default",
                 timeout: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self.collection = collection
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.url + "/api/v1", headers=headers,
                                       timeout=httpx.Timeout(timeout, connect=10.0))

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise StoreUnavailable(f"cannot reach the provgraph server at {self.url}: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response)
        kind = response.headers.get("content-type", "")
        return response.json() if kind.startswith("application/json") or "sparql-results" in kind else response.content

    def _c(self, path: str = "") -> str:
        return f"/collections/{self.collection}{path}"

    async def collections(self) -> list[dict[str, str]]:
        """The caller's collections."""
        result: list[dict[str, str]] = await self._call("GET", "/collections")
        return result

    async def load(self, paths: Sequence[str | Path], *, extractors: str | None = None,
                   poll: float = 0.2) -> list[LoadResult]:
        """Upload files or folders, load them as one job and wait for it: what ``Provgraph.load`` returns.

        A file the server could not load raises, as it does in-process; :meth:`load_job` gives the summary.
        """
        job = await self.load_job(paths, extractors=extractors, poll=poll)
        if job["result"]["failed_files"]:
            raise ProvgraphError("; ".join(job["result"]["failed_files"]))
        loaded: list[LoadResult] = from_objects(job["loaded"])
        return loaded

    async def load_job(self, paths: Sequence[str | Path], *, extractors: str | None = None,
                       poll: float = 0.2) -> dict[str, Any]:
        """Upload and load as one job, waiting for it; returns the finished job (``result`` as ``load --format json``)."""
        files, problems = expand_paths([str(p) for p in paths])
        if problems:
            raise InputError("; ".join(problems))
        parts = [("files", (p.name, p.read_bytes())) for p in files]
        job = await self._call("POST", self._c("/documents"), files=parts,
                               data={"extractors": extractors} if extractors else None)
        while job["status"] not in ("done", "failed"):
            await asyncio.sleep(poll)
            job = await self._call("GET", f"/jobs/{job['id']}", params={"form": "objects"})
        if job["status"] == "failed":
            raise ProvgraphError("; ".join(job["errors"]) or "the load failed")
        if "loaded" not in job:
            job = await self._call("GET", f"/jobs/{job['id']}", params={"form": "objects"})
        return dict(job)

    async def extract(self, chunks: Sequence[ChunkInput], *, extractors: str | None = None) -> list[ChunkOutcome]:
        """Extract (only chunks not yet extracted) and embed, as ``Provgraph.extract`` does."""
        body = {"chunks": to_objects(list(chunks)), "extractors": extractors}
        outcomes: list[ChunkOutcome] = from_objects(await self._call("POST", self._c("/extract"), json=body))
        return outcomes

    async def documents(self) -> list[dict[str, Any]]:
        """The collection's documents (as ``documents list --format json``)."""
        result: list[dict[str, Any]] = await self._call("GET", self._c("/documents"))
        return result

    async def document(self, doc: str) -> dict[str, Any]:
        """One document's metadata and parts."""
        result: dict[str, Any] = await self._call("GET", self._c(f"/documents/{doc}"))
        return result

    async def remove(self, doc: str) -> int:
        """Remove a document; returns the number of quads removed."""
        return int((await self._call("DELETE", self._c(f"/documents/{doc}")))["quads"])

    async def provenance(self, doc: str) -> dict[str, Any]:
        """The document → page → chunk → edges tree."""
        result: dict[str, Any] = await self._call("GET", self._c(f"/provenance/{doc}"))
        return result

    async def traces(self, *, include_sub_traces: bool = False, limit: int | None = None) -> list[TraceSummary]:
        """Trace summaries, newest first."""
        params: dict[str, Any] = {"all": include_sub_traces, "form": "objects", **({"limit": limit} if limit else {})}
        found: list[TraceSummary] = from_objects(await self._call("GET", self._c("/traces"), params=params))
        return found

    async def trace(self, session_id: str, *, provenance: bool = False) -> Trace:
        """A stored trace (GraphRAG, Document RAG or agent), typed as ``Provgraph.trace`` gives it."""
        found: Trace = from_objects(await self._call("GET", self._c(f"/traces/{session_id}"),
                                                     params={"provenance": provenance, "form": "objects"}))
        return found

    async def delete_trace(self, session_id: str) -> int:
        """Delete a trace (its sub-traces and stored answers go with it); returns the quads removed."""
        return int((await self._call("DELETE", self._c(f"/traces/{session_id}")))["quads"])

    async def delete_traces_before(self, moment: datetime) -> list[str]:
        """Delete every top-level trace started before ``moment``; returns the questions deleted."""
        found = await self._call("DELETE", self._c("/traces"), params={"before": moment.isoformat()})
        return list(found["deleted"])

    async def conversations(self) -> list[dict[str, Any]]:
        """The collection's conversations, newest first."""
        found: list[dict[str, Any]] = await self._call("GET", self._c("/conversations"))
        return found

    async def conversation(self, conversation: str) -> dict[str, Any]:
        """A conversation as a thread: each turn's question, rewrite, answer, citations and trace id."""
        found: dict[str, Any] = await self._call("GET", self._c(f"/conversations/{conversation}"))
        return found

    async def delete_conversation(self, conversation: str) -> int:
        """Delete a conversation and its turns' traces; returns how many traces went."""
        return len((await self._call("DELETE", self._c(f"/conversations/{conversation}")))["deleted"])

    async def backup(self, file: str | Path) -> dict[str, int]:
        """Write the collection's backup archive (what ``provgraph backup`` writes) to ``file``; returns its counts."""
        try:
            async with self._http.stream("GET", self._c("/backup")) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _error(response)
                partial = Path(f"{file}.partial")
                with partial.open("wb") as out:
                    async for piece in response.aiter_bytes():
                        out.write(piece)
                partial.replace(file)
                counts: dict[str, int] = json.loads(response.headers["x-provgraph-counts"])
                return counts
        except httpx.HTTPError as exc:
            raise StoreUnavailable(f"cannot reach the provgraph server at {self.url}: {exc}") from exc

    async def restore(self, file: str | Path) -> dict[str, Any]:
        """Restore a backup archive into this (empty or new) collection; returns its counts."""
        data = Path(file).read_bytes()
        result: dict[str, Any] = await self._call("POST", self._c("/restore"), content=data,
                                                  headers={"Content-Type": "application/x-tar"})
        return result

    async def check(self, *, repair: bool = False) -> dict[str, Any]:
        """What ``provgraph check [--repair] --format json`` prints for this collection (``consistent`` the verdict)."""
        result: dict[str, Any] = await (self._call("POST", self._c("/repair")) if repair
                                        else self._call("GET", self._c("/check")))
        return result

    async def sparql(self, query: str) -> Any:
        """SELECT/ASK: the SPARQL JSON results; CONSTRUCT: N-Triples bytes."""
        return await self._call("POST", self._c("/sparql"), json={"query": query})

    async def export(self, fmt: str = "nquads") -> bytes:
        """The whole collection as N-Quads or TriG."""
        data: bytes = await self._call("GET", self._c("/export"), params={"format": fmt})
        return data

    async def import_data(self, data: bytes, fmt: str = "nquads") -> int:
        """Import N-Quads or TriG atomically; returns the number of quads."""
        return int((await self._call("POST", self._c("/import"), params={"format": fmt}, content=data))["imported"])

    async def _stream(self, service: str, body: dict[str, Any]) -> AsyncIterator[Event]:
        payload = {"collection": self.collection, **{k: v for k, v in body.items() if v is not None}}
        try:
            async with self._http.stream("POST", f"/{service}", json=payload,
                                         headers={"Accept": "text/event-stream"}) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _error(response)
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        yield event_from_json(json.loads(line[6:]))
        except httpx.HTTPError as exc:
            raise StoreUnavailable(f"cannot reach the provgraph server at {self.url}: {exc}") from exc

    def stream_graph_rag(self, question: str, **limits: Any) -> AsyncIterator[Event]:
        """GraphRAG events as the server writes them; ``limits`` as in ``Provgraph.graph_rag``."""
        return self._stream("graph-rag", {"question": question, **limits})

    def stream_document_rag(self, question: str, **options: Any) -> AsyncIterator[Event]:
        """Document RAG events as the server writes them."""
        return self._stream("document-rag", {"question": question, **options})

    def stream_global_rag(self, question: str, **options: Any) -> AsyncIterator[Event]:
        """Global search events (map-reduce over the community reports) as the server writes them."""
        return self._stream("global-rag", {"question": question, **options})

    def stream_agent(self, question: str, **options: Any) -> AsyncIterator[Event]:
        """The agent's events as the server writes them."""
        return self._stream("agent", {"question": question, **options})

    async def graph_rag(self, question: str, **limits: Any) -> Answer:
        """Answer from the knowledge graph; raises the step's error if the query failed."""
        return await collect_answer(self.stream_graph_rag(question, **limits))

    async def document_rag(self, question: str, **options: Any) -> Answer:
        """Answer from the most similar chunks."""
        return await collect_answer(self.stream_document_rag(question, **options))

    async def global_rag(self, question: str, **options: Any) -> Answer:
        """Answer a question about the whole corpus: each sentence cites report findings → facts → sentences."""
        return await collect_answer(self.stream_global_rag(question, **options))

    async def agent(self, question: str, **options: Any) -> Answer:
        """The agent's answer."""
        return await collect_answer(self.stream_agent(question, **options))

    async def retrieve(self, question: str, *, k: int = 5, mode: str = "graph") -> Retrieval:
        """The ranked passages with scores, provenance and facts, as ``Provgraph.retrieve`` returns them."""
        body = {"collection": self.collection, "question": question, "k": k, "mode": mode}
        return retrieval_from_json(await self._call("POST", "/retrieve", json=body))

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

