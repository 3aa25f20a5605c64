// Cards for the steps of a trace, shared by the live Ask page and the stored trace page.

import { h, link, score, sourceLabel, when } from "./dom.js";

/** One step card: a list item with a step badge, a title and a body. */
export function card(step, title, ...body) {
  return h("li", { class: `step step-${step}`, dataset: { step } },
    h("div", { class: "step-head" }, h("span", { class: "badge" }, step), h("h3", {}, title)),
    h("div", { class: "step-body" }, ...body));
}

export function questionCard(query, kind, started) {
  return card("question", query, h("p", { class: "muted" }, [kind, when(started)].filter(Boolean).join(" · ")));
}

export function groundingCard(concepts) {
  return card("grounding", "Concepts in the question", h("p", {}, concepts.length ? concepts.join(", ") : "none"));
}

const SHOWN_SEEDS = 12;

export function explorationCard(edgeCount, entities) {
  const more = entities.slice(SHOWN_SEEDS);
  return card("exploration", `Explored ${edgeCount ?? "?"} edges`,
    h("p", {}, `From ${entities.length} seed entit${entities.length === 1 ? "y" : "ies"}: `,
      entities.length ? entities.slice(0, SHOWN_SEEDS).join(", ") : "none"),
    more.length ? h("details", { class: "more" }, h("summary", {}, `${more.length} more`), h("p", {}, more.join(", "))) : null);
}

/** A reason's kind: its text with quoted parts and numbers blanked ("Halley's" stays one word). */
export function reasonKind(text) {
  return String(text || "").replace(/'(?:[^']|'(?=\w))*'/g, "‘…’").replace(/\d+(?:\.\d+)?/g, "…");
}

const KIND_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/**
 * The focus: each selected edge with its reasoning and score. A reason shared by several edges
 * (the same words, other numbers or edge text: the no-LLM selection's) is written once above the
 * table, and each of those edges names its kind. `onPick(edge, button)` opens its sources;
 * `retracted` holds the N-Triples keys ("s p o") of edges whose source was retracted.
 */
export function focusCard(edges, { onPick = null, retracted = new Set() } = {}) {
  const counts = new Map();
  for (const e of edges) counts.set(reasonKind(e.reasoning), (counts.get(reasonKind(e.reasoning)) || 0) + 1);
  const kinds = new Map([...counts].filter(([kind, n]) => n > 1 && kind).map(([kind], i) => [kind, KIND_NAMES[i % 26]]));
  const legend = kinds.size
    ? h("dl", { class: "reason-kinds", "aria-label": "Reasons" }, [...kinds].map(([kind, name]) => [
      h("dt", {}, h("span", { class: "reason-kind" }, name), ` ${counts.get(kind)} edges`),
      h("dd", {}, kind)]))
    : null;
  const rows = edges.map((e, i) => {
    const gone = Boolean(e.retracted) || retracted.has(edgeKey(e));
    const kind = kinds.get(reasonKind(e.reasoning));
    return h("tr", { class: gone ? "retracted" : null, dataset: { edge: String(e.index ?? i) } },
      h("td", { class: "num" }, String((e.index ?? i) + 1)),
      h("td", { class: "edge" },
        onPick
          ? h("button", { type: "button", class: "edge-button", onclick: (ev) => onPick(e, ev.currentTarget) },
            `(${e.labels.s}, ${e.labels.p}, ${e.labels.o})`)
          : `(${e.labels.s}, ${e.labels.p}, ${e.labels.o})`,
        gone ? h("span", { class: "tag warn" }, "retracted") : null),
      h("td", { class: "reason" }, kind ? h("span", { class: "reason-kind", title: e.reasoning }, kind) : e.reasoning || ""),
      h("td", { class: "num" }, score(e.score)));
  });
  return card("focus", `Selected ${edges.length} edge${edges.length === 1 ? "" : "s"}`, legend,
    h("table", { class: "edges" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Edge"),
        h("th", { scope: "col" }, "Reason"), h("th", { scope: "col" }, "Score"))),
      h("tbody", {}, rows)));
}

/** The key of an edge for matching against retraction records. */
export function edgeKey(e) {
  return `${e.s} ${e.p} ${e.o}`;
}

/** Citation markers as the server finds them (retrieval/markers.py): "[2]", "[1, 3]". */
const MARKER = /\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]/g;

/**
 * Answer text with each citation marker as a link. `cite(marker, i)` gets the marker's text and its
 * place among the answer's markers (0-based: the stored trace's i-th citation is this marker) and
 * returns a click handler, or null when the marker resolves to nothing.
 */
export function answerText(text, cite) {
  const out = [];
  let last = 0;
  let i = 0;
  for (const m of text.matchAll(MARKER)) {
    out.push(text.slice(last, m.index));
    const handler = cite(m[0], i);
    out.push(handler
      ? h("a", { href: `#cite-${i + 1}`, class: "cite", dataset: { citation: String(i) },
        onclick: (ev) => { ev.preventDefault(); handler(ev.currentTarget); } }, m[0])
      : h("span", { class: "cite unresolved" }, m[0]));
    last = m.index + m[0].length;
    i += 1;
  }
  out.push(text.slice(last));
  return h("p", { class: "answer-text" }, out);
}

export function synthesisCard(answerEl, extra = null) {
  return card("synthesis", "Answer", answerEl, extra);
}

/** A list of sources (chunk → page → document), each a button that opens it. */
export function sourceList(sources, onPick) {
  return h("ul", { class: "sources" }, sources.map((s) =>
    h("li", {}, s.marker ? h("span", { class: "marker" }, s.marker, " ") : null,
      h("button", { type: "button", class: "link-button", onclick: (ev) => onPick(s, ev.currentTarget) }, sourceLabel(s)),
      s.excerpt ? h("span", { class: "excerpt" }, ` ${s.excerpt}`) : null)));
}

export function chunksCard(title, chunks, onPick) {
  const found = chunks.filter((c) => c.source);
  const lost = chunks.length - found.length;
  const ranked = (c) => [c.rank ? `#${c.rank}` : null, typeof c.score === "number" ? `score ${score(c.score)}` : null,
    c.retriever, c.retracted ? "retracted" : null].filter(Boolean).join(" · ");
  return card("exploration", title,
    sourceList(found.map((c) => ({ ...c.source, marker: ranked(c) || null, excerpt: c.excerpt })), onPick),
    lost ? h("p", { class: "notice warn" }, `${lost} chunk${lost === 1 ? "" : "s"} no longer in the store`) : null);
}

/**
 * The ranking: graph-ranked passages, each with the scores that placed it (fused, graph, lexical and dense
 * ranks) and, for a bridge hop, the entity that brought it in; the seeds of each hop above.
 */
export function rankingCard(ranking, onPick) {
  const why = (p) => [`#${p.rank}`, typeof p.score === "number" ? `score ${score(p.score)}` : null,
    p.graph_rank ? `graph #${p.graph_rank}` : null, p.lexical_rank ? `lexical #${p.lexical_rank}` : null,
    p.dense_rank ? `dense #${p.dense_rank}` : null,
    p.bridge ? `hop ${p.hop} via ${p.bridge_label || p.bridge}` : null].filter(Boolean).join(" · ");
  const hops = [...new Set(ranking.seeds.map((s) => s.hop || 1))].sort();
  const seeds = hops.map((hop) => h("p", {}, h("strong", {}, `Seeds, hop ${hop}: `),
    ranking.seeds.filter((s) => (s.hop || 1) === hop && !String(s.node).startsWith("urn:chunk:")).slice(0, SHOWN_SEEDS)
      .map((s) => `${s.label} (${s.linked_by}, ${score(s.weight)})`).join(", ") || "passages only"));
  const found = ranking.passages.filter((p) => p.source);
  return card("ranking", ranking.relevant ? `Ranked ${ranking.passages.length} passages` : "Nothing relevant found",
    ...seeds,
    sourceList(found.map((p) => ({ ...p.source, marker: why(p), excerpt: p.excerpt })), onPick));
}

export function analysisCard(a, nested = null) {
  return card("analysis", `Iteration ${a.step}`,
    a.thought ? h("p", {}, h("strong", {}, "Thought: "), a.thought) : null,
    a.action ? h("p", {}, h("strong", {}, "Action: "), h("code", {}, a.action), " ", h("code", {}, a.arguments || "")) : null,
    nested,
    a.observation !== null && a.observation !== undefined
      ? h("p", { class: a.error ? "observation error" : "observation" }, h("strong", {}, "Observation: "), a.observation)
      : null);
}

export function conclusionCard(answerEl, reason) {
  return card("conclusion", "Conclusion", answerEl, reason ? h("p", { class: "muted" }, `Ended by ${reason}`) : null);
}

/** A link to a stored trace page. */
export function traceLink(sid, collection, text = sid) {
  return link(`/traces/${encodeURIComponent(sid)}`, text, { collection });
}

/**
 * The map of a global answer: the community reports it used, by rank, each with its score, its report's title
 * (linked to the community's page) and the part of the answer it gave.
 */
export function mapCard(map, collection) {
  const reports = map.reports || [];
  return card("map", `Used ${reports.length} of ${map.reports_scored ?? "?"} community reports (level ${map.level ?? "?"})`,
    h("ol", { class: "map-reports" }, reports.map((r) => h("li", { dataset: { community: r.community } },
      link(`/communities/${encodeURIComponent(r.community)}`, r.title || r.community, { collection }),
      h("span", { class: "muted" }, ` score ${score(r.score)}`),
      r.content ? h("p", { class: "excerpt" }, r.content) : null))));
}

/**
 * A global answer's citation as the source panel opens one: a cited finding's facts' sources, the one whose
 * sentence is the finding's own first (``quote``).
 */
export function globalCitation(c) {
  const sources = (c.facts || []).flatMap((f) => f.sources || []);
  const flat = (text) => String(text || "").split(/\s+/).join(" ").trim();
  const quote = sources.find((s) => s.evidence && flat(s.evidence.text) === flat(c.finding_text)) || null;
  return { marker: c.marker, text: c.text, sources, quote };
}
