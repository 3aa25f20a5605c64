"""Typed, frozen views of stored traces (SPEC §5), as ``traces list`` and ``traces show`` read them.

A trace may be partial (a query that failed midway keeps the steps already written), so every
step after the question is optional. ``sources`` is ``None`` when provenance was not asked for,
and a (possibly empty) tuple once resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal, Union

from provgraph.events import Source
from provgraph.provenance.common import LlmCall
from provgraph.rdf.terms import Iri, Term, TripleTerm

__all__ = [
    "TraceType",
    "TraceSummary",
    "Question",
    "Evidence",
    "SourceRef",
    "Citation",
    "Retraction",
    "LabelledTerm",
    "SelectedEdge",
    "ChunkRef",
    "Grounding",
    "Exploration",
    "Focus",
    "Synthesis",
    "GraphRagTrace",
    "DocExploration",
    "DocRagTrace",
    "Analysis",
    "Conclusion",
    "AgentTrace",
    "ReportPick",
    "CitedFact",
    "FindingCitation",
    "GlobalTrace",
    "Trace",
]

TraceType = Literal["GraphRAG", "DocRAG", "Agent", "Global"]


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """One row of ``traces list``; ``informed_by`` is the agent question of a sub-trace."""

    session_id: str
    question_iri: Iri
    type: TraceType
    query: str
    started: datetime
    informed_by: Iri | None = None


@dataclass(frozen=True, slots=True)
class Question:
    """The question activity that starts every trace.

    A rewritten question (a conversation turn, or a chat's message history) keeps what was ``asked``
    and the ``rewrite_method`` (``query`` is what was answered); a turn of a stored conversation has
    its ``turn`` number and ``previous_turn``; an agent request restricted to tool groups has its
    ``tool_groups`` and the ``allowed_tools`` they left.
    """

    iri: Iri
    session_id: str
    query: str
    started: datetime
    informed_by: Iri | None = None
    asked: str | None = None
    rewrite_method: str | None = None
    turn: int | None = None
    previous_turn: Iri | None = None
    tool_groups: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Evidence:
    """The sentence(s) supporting a fact: ``offset``/``length`` in the chunk's text, and that text."""

    offset: int
    length: int
    text: str | None = None


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A supporting chunk → page/section → document, with an excerpt of the chunk's text
    and, when recorded, the supporting sentence."""

    source: Source
    excerpt: str | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class Retraction:
    """A retraction record naming this trace: the document that went, when, and what of the
    trace went with it (its selected edges and its chunks)."""

    iri: Iri
    document: Iri | None
    at: datetime
    reason: str
    edges: tuple[TripleTerm, ...] = ()
    chunks: tuple[Iri, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelledTerm:
    """A term with its display label (``rdfs:label``, the literal itself, or the IRI's last segment)."""

    term: Term
    label: str


@dataclass(frozen=True, slots=True)
class SelectedEdge:
    """One ``tg:EdgeSelection`` of the focus: the original edge, its labels, reasoning and score."""

    iri: Iri
    index: int | None  # the ``{i}`` of ``urn:trustgraph:prov:edge:{sid}:{i}``
    edge: TripleTerm
    labels: tuple[str, str, str]
    reasoning: str
    score: float | None = None
    sources: tuple[SourceRef, ...] | None = None
    retracted: bool = False


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """A chunk a Document RAG step retrieved or cited; ``source`` is None when it cannot be traced."""

    iri: Iri
    source: Source | None = None
    excerpt: str | None = None
    rank: int | None = None
    score: float | None = None
    retriever: str | None = None
    retracted: bool = False


@dataclass(frozen=True, slots=True)
class Citation:
    """One marker of the answer: the span it ends (``text``), the edges (GraphRAG) or chunks it
    cites, and their sources (for GraphRAG, each cited edge's source in the cited chunk)."""

    iri: Iri
    marker: str
    offset: int
    length: int
    text: str
    edges: tuple[SelectedEdge, ...] = ()
    chunks: tuple[ChunkRef, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    quote: SourceRef | None = None  # where the cited span stands in a cited chunk, when the answer quotes it


@dataclass(frozen=True, slots=True)
class Grounding:
    """The concepts the LLM found in the question (sorted: RDF keeps no order)."""

    iri: Iri
    concepts: tuple[str, ...]
    llm: LlmCall | None = None


@dataclass(frozen=True, slots=True)
class Exploration:
    """How many edges the walk found, from which seed entities (sorted by label)."""

    iri: Iri
    edge_count: int | None
    entities: tuple[LabelledTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class Focus:
    """The edges the LLM selected, in selection index order."""

    iri: Iri
    edges: tuple[SelectedEdge, ...]
    llm: LlmCall | None = None


@dataclass(frozen=True, slots=True)
class Synthesis:
    """The answer step; ``cited`` lists the chunks the answer cites (Document RAG)."""

    iri: Iri
    content: str
    document: Iri | None = None
    llm: LlmCall | None = None
    cited: tuple[ChunkRef, ...] = ()
    citations: tuple[Citation, ...] = ()


class _Synthesised:
    """Staleness and answer of a trace that ends in a synthesis and records its retractions."""

    __slots__ = ()
    retracted: tuple[Retraction, ...]
    synthesis: Synthesis | None

    @property
    def stale(self) -> bool:
        """Whether a document this trace used has been removed or replaced since."""
        return bool(self.retracted)

    @property
    def answer(self) -> str | None:
        """The answer text, or None when the trace stopped before the synthesis."""
        return self.synthesis.content if self.synthesis is not None else None


@dataclass(frozen=True, slots=True)
class GraphRagTrace(_Synthesised):
    """A GraphRAG trace: question → (grounding) → exploration → focus → synthesis."""

    type: ClassVar[TraceType] = "GraphRAG"
    question: Question
    grounding: Grounding | None = None
    exploration: Exploration | None = None
    focus: Focus | None = None
    ranking: Any = None  # explain.ranking.RankingView: graph-ranked passages, when the trace has them
    synthesis: Synthesis | None = None
    retracted: tuple[Retraction, ...] = ()


@dataclass(frozen=True, slots=True)
class DocExploration:
    """The chunks retrieved for a Document RAG question, by rank (traces written before ranks
    were recorded: in source order)."""

    iri: Iri
    chunk_count: int | None
    chunks: tuple[ChunkRef, ...] = ()


@dataclass(frozen=True, slots=True)
class DocRagTrace(_Synthesised):
    """A Document RAG trace: question → exploration → synthesis."""

    type: ClassVar[TraceType] = "DocRAG"
    question: Question
    exploration: DocExploration | None = None
    synthesis: Synthesis | None = None
    retracted: tuple[Retraction, ...] = ()


@dataclass(frozen=True, slots=True)
class Analysis:
    """One think → act → observe step; ``sub_trace`` is the trace the action ran, if any."""

    iri: Iri
    step: int
    thought: str | None = None
    action: str | None = None
    arguments: str | None = None
    observation: str | None = None
    error: bool = False
    llm: LlmCall | None = None
    sub_trace: Trace | None = None


@dataclass(frozen=True, slots=True)
class Conclusion:
    """The agent's final answer and why the loop ended."""

    iri: Iri
    answer: str
    termination_reason: str | None = None
    document: Iri | None = None
    llm: LlmCall | None = None


@dataclass(frozen=True, slots=True)
class AgentTrace:
    """An agent trace: question → analyses (step order) → conclusion.

    ``other_sub_traces`` are traces informed by this question that no analysis derives from
    (e.g. a tool that failed before its synthesis).
    """

    type: ClassVar[TraceType] = "Agent"
    question: Question
    analyses: tuple[Analysis, ...] = ()
    conclusion: Conclusion | None = None
    other_sub_traces: tuple[Trace, ...] = ()

    @property
    def sub_traces(self) -> tuple[Trace, ...]:
        """Every sub-trace, those run by an analysis first."""
        return tuple(a.sub_trace for a in self.analyses if a.sub_trace is not None) + self.other_sub_traces

    @property
    def retracted(self) -> tuple[Retraction, ...]:
        """The retractions of the sub-traces (the agent itself cites no edge or chunk)."""
        return tuple(r for t in self.sub_traces for r in t.retracted)

    @property
    def stale(self) -> bool:
        """Whether a sub-trace is stale."""
        return bool(self.retracted)

    @property
    def answer(self) -> str | None:
        """The final answer, or None when the trace has no conclusion."""
        return self.conclusion.answer if self.conclusion is not None else None


@dataclass(frozen=True, slots=True)
class ReportPick:
    """A report the global map kept: rank, score, the report (title if still stored), partial answer, findings."""

    rank: int
    score: float
    report: Iri
    community: Iri
    title: str | None
    content: str
    findings: tuple[Iri, ...] = ()


@dataclass(frozen=True, slots=True)
class CitedFact:
    """A fact a global citation rests on: labels, whether it is still stored, its sources with sentences."""

    fact: TripleTerm
    labels: tuple[str, str, str]
    stored: bool
    sources: tuple[SourceRef, ...] = ()


@dataclass(frozen=True, slots=True)
class FindingCitation:
    """One marker of a global answer: the answer span, the finding (its text while the report is stored), facts."""

    marker: str
    offset: int
    length: int
    text: str
    finding: Iri
    finding_text: str | None
    facts: tuple[CitedFact, ...] = ()


@dataclass(frozen=True, slots=True)
class GlobalTrace(_Synthesised):
    """A global search trace: question → map (reports kept) → synthesis citing findings → facts → sentences."""

    type: ClassVar[TraceType] = "Global"
    question: Question
    map_iri: Iri | None = None
    reports_scored: int = 0
    level: int = 0
    picks: tuple[ReportPick, ...] = ()
    map_llm: LlmCall | None = None
    synthesis: Synthesis | None = None
    citations: tuple[FindingCitation, ...] = ()
    retracted: tuple[Retraction, ...] = ()


Trace = Union[GraphRagTrace, DocRagTrace, AgentTrace, GlobalTrace]
