// Ask: a question goes to GraphRAG, Document RAG or the agent, and each step shows as it arrives.

import { api } from "../api.js";
import { KIND, h, notice, problem, setContent } from "../dom.js";
import { focusEdges, values } from "../ntriples.js";
import { clearPanel, showCitation, showEdge, showSource, sourcePanel } from "../source.js";
import {
  answerText, card, chunksCard, conclusionCard, explorationCard, focusCard, globalCitation, groundingCard, mapCard,
  questionCard, rankingCard, sourceList, synthesisCard, traceLink,
} from "../steps.js";

const MODES = [
  ["graph-rag", "GraphRAG", "answer from the knowledge graph's edges"],
  ["document-rag", "Document RAG", "answer from the most similar chunks"],
  ["agent", "Agent", "a ReAct agent using both (needs an LLM)"],
  ["global-rag", "Global", "answer from the community reports: questions about the whole corpus"],
];

export function askPage(main, { collection }) {
  const question = h("input", { id: "question", name: "question", type: "text", required: true, autocomplete: "off",
    placeholder: "What did Marie Curie discover?" });
  const modes = h("fieldset", { class: "modes" }, h("legend", {}, "Answer with"),
    MODES.map(([value, label, help], i) => h("label", { class: "mode" },
      h("input", { type: "radio", name: "mode", value, checked: i === 0 }), ` ${label} `, h("span", { class: "muted" }, help))));
  const ask = h("button", { type: "submit", id: "ask" }, "Ask");
  const stop = h("button", { type: "button", id: "stop", disabled: true }, "Stop");
  const form = h("form", { class: "ask", "aria-label": "Ask a question" },
    h("label", { for: "question" }, "Question"), h("div", { class: "ask-row" }, question, ask, stop), modes);
  const steps = h("ol", { id: "steps", class: "steps", "aria-label": "Steps" });
  const summary = h("summary", { id: "steps-summary", "aria-live": "polite" }, "Steps");
  const fold = h("details", { id: "steps-box", class: "steps-box", hidden: true }, summary, steps);
  const answer = h("div", { id: "answer", class: "answer-box", "aria-live": "polite" });
  const status = h("div", { id: "run-status", class: "status-line", role: "status" });
  const panel = sourcePanel();
  setContent(main,
    h("div", { class: "with-panel" },
      h("section", { class: "primary" }, h("h1", {}, `Ask · ${collection}`), form, status, answer, fold),
      panel));

  let controller = null;
  stop.addEventListener("click", () => controller?.abort());
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const mode = form.querySelector("input[name=mode]:checked").value;
    controller = new AbortController();
    ask.disabled = true;
    stop.disabled = false;
    steps.replaceChildren();
    answer.replaceChildren();
    clearPanel(panel);
    fold.hidden = false;
    steps.dataset.state = "running";
    setContent(status, notice("Working…"));
    const view = new LiveTrace(steps, panel, collection, answer, summary);
    try {
      for await (const message of api.ask(mode, collection, question.value, controller.signal)) view.add(message);
      const warned = view.warnings ? `Done, with ${view.warnings} warning${view.warnings === 1 ? "" : "s"}: see under the answer.` : "Done.";
      setContent(status, view.failed ? notice(view.failed, "error") : notice(warned, view.warnings ? "warn" : "info"));
    } catch (err) {
      setContent(status, notice(err.name === "AbortError" ? "Stopped." : `The request failed: ${problem(err)}`, "error"));
    } finally {
      steps.dataset.state = "done";
      ask.disabled = false;
      stop.disabled = true;
      controller = null;
    }
  });
  question.focus();
}

/** Renders stream messages: the answer into its own box, the steps into a (folded) step list whose
 * summary names the latest step; agent sub-traces nest under their iteration. */
class LiveTrace {
  constructor(list, panel, collection, answerBox, summary) {
    this.answerBox = answerBox;
    this.summary = summary;
    this.citations = null; // the stored trace's citations, once read back
    this.root = list;
    this.panel = panel;
    this.collection = collection;
    this.rootId = null;
    this.target = list; // where the next step goes
    this.iterations = new Map();
    this.answer = null; // the streaming answer paragraph of the innermost trace
    this.failed = "";
    this.warnings = 0; // the final message's
  }

  add(m) {
    this.added(m);
    const handler = {
      explain: () => this.explain(m),
      chunk: () => this.piece(m.response || ""),
      thought: () => this.iteration(m.step).body.append(h("p", {}, h("strong", {}, "Thought: "), m.response)),
      action: () => {
        const it = this.iteration(m.step);
        it.body.append(h("p", {}, h("strong", {}, "Action: "), h("code", {}, m.name), " ", h("code", {}, JSON.stringify(m.arguments))));
        it.body.append(it.nested);
        this.target = it.nested;
        this.answer = null;
      },
      observation: () => {
        const it = this.iteration(m.step);
        it.body.append(h("p", { class: m.error ? "observation error" : "observation" }, h("strong", {}, "Observation: "), m.response));
        this.target = this.root;
        this.answer = null;
      },
      final: () => this.final(m),
      error: () => { this.failed = `${m.error.type}: ${problem(m.error)}`; },
    }[m.message_type];
    if (handler) handler();
  }

  explain(m) {
    const t = m.explain_triples;
    const q = values(t, "query")[0];
    if (m.step === "question") {
      if (this.rootId === null) this.rootId = m.explain_id;
      else if (this.target === this.root) this.target = this.nestedList(); // a sub-trace without an action
      this.target.append(questionCard(q ?? "", kindOf(t), ""));
    } else if (m.step === "grounding") this.target.append(groundingCard(values(t, "concept")));
    else if (m.step === "exploration") {
      const chunks = values(t, "chunkCount")[0];
      this.target.append(chunks !== undefined
        ? card("exploration", `Retrieved ${chunks} chunks`)
        : explorationCard(values(t, "edgeCount")[0], values(t, "entity")));
    } else if (m.step === "ranking") {
      const bridged = values(t, "bridgeEntity").length;
      this.target.append(card("ranking", `Ranked ${values(t, "rankedPassage").length} passages`
        + (bridged ? ` (${bridged} over a bridge entity)` : "")));
    } else if (m.step === "focus") this.target.append(focusCard(focusEdges(t)));
    else if (m.step === "map") {
      this.target.append(card("map", `Scored ${values(t, "reportCount")[0] ?? "?"} community reports`));
    }
    else if (m.step === "synthesis") {
      const answer = this.answerCard();
      if (!answer.textContent) answer.append(values(t, "content")[0] ?? ""); // a tool's answer is not streamed
      if (answer.closest("ol") !== this.root) answer.classList.remove("streaming");
    } else if (m.step === "conclusion") {
      this.target = this.root;
      this.answer = null;
    }
  }

  /** The folded list's summary: how many steps, and the latest. */
  added(m) {
    if (m.message_type !== "explain" && m.message_type !== "thought" && m.message_type !== "observation") return;
    this.count = (this.count || 0) + 1;
    const last = m.message_type === "explain" ? m.step : m.message_type;
    setContent(this.summary, `Steps (${this.count}) · latest: ${last}`);
    this.summary.dataset.latest = last;
  }

  nestedList() {
    const list = h("ol", { class: "steps subtrace" });
    this.root.append(h("li", { class: "step step-subtrace" }, list));
    return list;
  }

  iteration(n) {
    if (!this.iterations.has(n)) {
      const item = card("analysis", `Iteration ${n}`);
      this.root.append(item);
      this.iterations.set(n, { body: item.querySelector(".step-body"), nested: h("ol", { class: "steps subtrace" }) });
    }
    return this.iterations.get(n);
  }

  answerCard() {
    if (!this.answer) {
      this.answer = h("p", { class: "answer-text streaming" });
      (this.target === this.root ? this.answerBox : this.target).append(synthesisCard(this.answer));
    }
    return this.answer;
  }

  piece(text) {
    this.answerCard().append(text);
  }

  final(m) {
    const sources = uniqueSources(m.sources || []);
    this.warnings = (m.warnings || []).length;
    const byMarker = new Map();
    for (const s of sources) if (s.marker && !byMarker.has(s.marker)) byMarker.set(s.marker, s);
    const open = (s) => showSource(this.panel, this.collection,
      { source: s, evidence: s.evidence || null, heading: s.marker ? `Source ${s.marker}` : "Source" });
    // marker i opens the stored trace's citation i (its own sentence) once read back; until then, its number's source
    const cite = (marker, i) => (byMarker.has(marker) || m.session_id ? () => (this.citations?.[i]
      ? showCitation(this.panel, this.collection, this.citations[i])
      : byMarker.has(marker) && open(byMarker.get(marker))) : null);
    const text = answerText(m.answer || "", cite);
    const extra = [
      // what went wrong on the way, e.g. an LLM that failed and the extractive answer given instead
      (m.warnings || []).length ? h("div", { class: "warnings" }, m.warnings.map((w) => notice(problem(w), "warn"))) : null,
      sources.length ? h("h4", {}, "Sources") : null,
      sources.length ? sourceList(sources, open) : null,
      m.session_id ? h("p", { class: "muted" }, "Stored as ", traceLink(m.session_id, this.collection)) : null,
    ].filter(Boolean);
    const item = m.end_of_dialog ? conclusionCard(text, null) : synthesisCard(text, extra);
    if (m.end_of_dialog) item.querySelector(".step-body").append(...extra);
    item.id = "final";
    setContent(this.answerBox, item);
    for (const p of this.root.querySelectorAll(".answer-text.streaming")) p.classList.remove("streaming");
    if (m.session_id && !m.end_of_dialog) this.upgrade(m.session_id);
  }

  /** Once stored, the trace is read back with labels and sources: the ranked passages and focus edges
   * (GraphRAG) and the retrieved chunks (Document RAG) then open their text. */
  async upgrade(sid) {
    const card = (step) => [...this.root.children].find((li) => li.dataset.step === step);
    try {
      const trace = await api.trace(this.collection, sid);
      this.citations = trace.type === "Global" ? (trace.citations || []).map(globalCitation) : trace.citations || [];
      this.answerBox.querySelector("#final")?.setAttribute("data-citations", String(this.citations.length));
      const open = (s) => showSource(this.panel, this.collection, { source: s, evidence: s.evidence || null });
      if (trace.type === "GraphRAG" && trace.ranking && card("ranking")) {
        card("ranking").replaceWith(rankingCard(trace.ranking, open));
      }
      if (trace.type === "GraphRAG" && trace.focus && card("focus")) {
        card("focus").replaceWith(focusCard(trace.focus.edges, { onPick: (e) => showEdge(this.panel, this.collection, e) }));
      } else if (trace.type === "Global" && trace.map && card("map")) {
        card("map").replaceWith(mapCard(trace.map, this.collection));
      } else if (trace.type === "DocRAG" && trace.exploration && card("exploration")) {
        card("exploration").replaceWith(chunksCard(`Retrieved ${trace.exploration.chunk_count ?? "?"} chunks`,
          trace.exploration.chunks, open));
      }
    } catch {
      // the live cards stay as they were
    }
  }
}

/** One entry per (marker, chunk), in marker order. */
function uniqueSources(sources) {
  const seen = new Set();
  const out = [];
  for (const s of sources) {
    const key = `${s.marker} ${s.chunk}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(s);
    }
  }
  const num = (s) => Number((s.marker || "").replace(/\D/g, "")) || Infinity;
  return out.sort((a, b) => num(a) - num(b));
}

function kindOf(triples) {
  const types = triples.map((t) => t.o);
  if (types.some((o) => o.includes("GraphRagQuestion"))) return KIND.GraphRAG;
  if (types.some((o) => o.includes("DocRagQuestion"))) return KIND.DocRAG;
  if (types.some((o) => o.includes("AgentQuestion"))) return KIND.Agent;
  if (types.some((o) => o.includes("GlobalRagQuestion"))) return KIND.Global;
  return "";
}
