// A stored trace: its steps, the focus as a graph, and the text behind every edge and citation.

import { api } from "../api.js";
import { KIND, h, link, notice, problem, setContent, when } from "../dom.js";
import { drawGraph } from "../graph.js";
import { showCitation, showEdge, showSource, sourcePanel } from "../source.js";
import {
  analysisCard, answerText, chunksCard, conclusionCard, edgeKey, explorationCard, focusCard, globalCitation, groundingCard,
  mapCard, rankingCard, questionCard, synthesisCard, traceLink,
} from "../steps.js";
import { neighbourhood } from "./neighbourhood.js";

export async function tracePage(main, { collection, arg: sid }) {
  setContent(main, notice("Loading the trace…"));
  let trace;
  try {
    trace = await api.trace(collection, sid);
  } catch (err) {
    setContent(main, h("h1", {}, "Trace"), notice(problem(err, `Trace ${sid}`), "error"),
      h("p", {}, link("/traces", "All traces", { collection })));
    return;
  }
  const panel = sourcePanel();
  const view = new TraceView(panel, collection, retractedEdges(trace));
  const primary = h("section", { class: "primary" },
    h("p", { class: "crumbs" }, link("/traces", "Traces", { collection }), " / ", trace.session_id),
    h("h1", {}, trace.question.query),
    h("p", { class: "muted" }, `${KIND[trace.type] || trace.type} · ${when(trace.question.started)} · ${trace.session_id}`),
    staleBanner(trace));
  const graphBox = trace.type === "GraphRAG" && trace.focus?.edges?.length
    ? h("figure", { class: "graph" },
      h("div", { id: "graph", class: "graph-canvas", role: "img", "aria-label": "Graph of the explored edges; selected edges in orange" }),
      h("figcaption", { class: "muted" }, "Explored neighbourhood (grey) and selected edges (orange). Click a selected edge for its source."))
    : null;
  primary.append(...[graphBox, view.steps(trace)].filter(Boolean));
  setContent(main, h("div", { class: "with-panel" }, primary, panel));
  if (graphBox) {
    const explored = await neighbourhood(collection, trace).catch(() => []);
    drawGraph(graphBox.querySelector("#graph"), {
      selected: trace.focus.edges,
      explored,
      retracted: view.retracted,
    }, (edge) => view.pickEdge(edge));
  }
}

function retractedEdges(trace) {
  const keys = new Set();
  for (const r of trace.retracted || []) {
    for (const e of r.edges || []) keys.add(typeof e === "string" ? e : edgeKey(e));
  }
  return keys;
}

function staleBanner(trace) {
  if (!trace.stale) return null;
  const items = (trace.retracted || []).map((r) => h("li", {},
    `${r.document || "a document"} ${r.reason || "retracted"} at ${when(r.at)}: `
    + `${(r.edges || []).length} edge(s) and ${(r.chunks || []).length} chunk(s) this trace used`));
  return h("div", { class: "banner stale", role: "alert" },
    h("strong", {}, "Stale trace. "), "Sources this answer used have been retracted since it was made.",
    items.length ? h("ul", {}, items) : null);
}

class TraceView {
  constructor(panel, collection, retracted) {
    this.panel = panel;
    this.collection = collection;
    this.retracted = retracted;
  }

  open(source, heading, edge = null) {
    const labels = edge ? edge.labels : null;
    return showSource(this.panel, this.collection, { source, evidence: source.evidence || null, edge: labels, heading });
  }

  pickEdge(edge) {
    return showEdge(this.panel, this.collection, edge, { retracted: this.retracted.has(edgeKey(edge)) });
  }

  /** Marker i of the answer opens citation i: its own sentence, not the first of its number's. */
  citer(trace) {
    const citations = trace.citations || [];
    return (marker, i) => (citations[i] && citations[i].marker === marker
      ? () => showCitation(this.panel, this.collection, citations[i]) : null);
  }

  /** The step list of a trace (sub-traces nested under the iteration that ran them). */
  steps(trace) {
    const list = h("ol", { class: "steps", "aria-label": "Steps" });
    list.append(questionCard(trace.question.query, KIND[trace.type] || trace.type, trace.question.started));
    const pick = (s) => this.open(s, "Source");
    if (trace.type === "GraphRAG") {
      if (trace.grounding) list.append(groundingCard(trace.grounding.concepts));
      if (trace.exploration) {
        list.append(explorationCard(trace.exploration.edge_count, trace.exploration.entities.map((e) => e.label)));
      }
      if (trace.ranking) list.append(rankingCard(trace.ranking, pick));
      if (trace.focus) list.append(focusCard(trace.focus.edges, { onPick: (e) => this.pickEdge(e), retracted: this.retracted }));
      if (trace.synthesis) list.append(synthesisCard(answerText(trace.synthesis.content, this.citer(trace)), this.citationList(trace)));
    } else if (trace.type === "Global") {
      const cited = { ...trace, citations: (trace.citations || []).map(globalCitation) };
      if (trace.map) list.append(mapCard(trace.map, this.collection));
      if (trace.synthesis) list.append(synthesisCard(answerText(trace.answer || "", this.citer(cited)), this.citationList(cited)));
    } else if (trace.type === "DocRAG") {
      if (trace.exploration) list.append(chunksCard(`Retrieved ${trace.exploration.chunk_count ?? "?"} chunks`, trace.exploration.chunks, pick));
      if (trace.synthesis) {
        list.append(synthesisCard(answerText(trace.synthesis.content, this.citer(trace)), this.citationList(trace)));
      }
    } else {
      for (const a of trace.analyses || []) {
        list.append(analysisCard(a, a.sub_trace ? this.subTrace(a.sub_trace) : null));
      }
      for (const sub of trace.other_sub_traces || []) list.append(h("li", { class: "step" }, this.subTrace(sub)));
      if (trace.conclusion) {
        list.append(conclusionCard(answerText(trace.conclusion.answer, () => null), trace.conclusion.termination_reason));
      }
    }
    return list;
  }

  citationList(trace) {
    const citations = (trace.citations || []).filter((c) => c.quote || (c.sources || []).length);
    if (!citations.length) return null;
    return [h("h4", {}, "Citations"), h("ol", { class: "citations" }, citations.map((c) => h("li", {},
      h("span", { class: "marker" }, c.marker, " "),
      h("button", { type: "button", class: "link-button", onclick: () => showCitation(this.panel, this.collection, c) },
        c.text || "(the answer)"))))];
  }

  subTrace(sub) {
    return h("details", { class: "subtrace", open: true },
      h("summary", {}, `${KIND[sub.type] || sub.type} sub-trace: `, traceLink(sub.session_id, this.collection, sub.question.query)),
      this.steps(sub));
  }
}
