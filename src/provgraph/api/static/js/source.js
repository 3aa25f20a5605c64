// The source panel: a chunk's text with the supporting sentence marked at its recorded offsets.

import { api } from "./api.js";
import { h, link, notice, setContent, sourceLabel } from "./dom.js";
import { sourceList } from "./steps.js";

/** Split `text` at code-point offsets (the store counts code points; JS strings count UTF-16 units). */
export function splitAt(text, offset, length) {
  const points = Array.from(text);
  return [
    points.slice(0, offset).join(""),
    points.slice(offset, offset + length).join(""),
    points.slice(offset + length).join(""),
  ];
}

/** The panel element, empty until a source is shown. */
export function sourcePanel() {
  return h("aside", { id: "source-panel", class: "source-panel", "aria-label": "Source", "aria-live": "polite", tabindex: "-1" },
    h("h2", {}, "Source"), h("p", { class: "muted" }, "Choose an edge or a citation to see the text behind it."));
}

/**
 * Show one source in the panel: {source, evidence?, edge?}. `evidence` is {offset, length, text}
 * in the chunk's text; without it the whole chunk is the evidence.
 */
export async function showSource(panel, collection, { source, evidence = null, edge = null, heading = "Source" }) {
  setContent(panel, h("h2", {}, heading), notice("Loading the source text…"));
  panel.focus({ preventScroll: true });
  let record;
  try {
    record = await api.record(collection, source.chunk);
  } catch (err) {
    setContent(panel, h("h2", {}, heading), notice(`Could not read the source: ${err.message}`, "error"));
    return;
  }
  const text = record.text ?? "";
  const [before, marked, after] = evidence
    ? splitAt(text, evidence.offset, evidence.length)
    : ["", text, ""];
  const where = [];
  if (source.page_number !== null && source.page_number !== undefined) where.push(`Page ${source.page_number}`);
  if (source.section_title) where.push(`Section: ${source.section_title}`);
  where.push(`Chunk ${source.chunk_index}, characters ${source.offset}–${source.offset + source.length}`);
  setContent(
    panel,
    h("h2", {}, heading),
    edge ? h("p", { class: "edge-line" }, `(${edge.s}, ${edge.p}, ${edge.o})`) : null,
    h("dl", { class: "facts" },
      h("dt", {}, "Document"), h("dd", {}, link(`/documents/${encodeURIComponent(source.document)}`, source.title || source.document, { collection })),
      h("dt", {}, "Where"), h("dd", {}, where.join(" · ")),
      h("dt", {}, "Evidence"), h("dd", {}, evidence ? `characters ${evidence.offset}–${evidence.offset + evidence.length} of the chunk` : "the whole chunk (no sentence recorded)")),
    h("blockquote", { class: "source-text", "data-chunk": source.chunk },
      before, h("mark", { class: evidence ? "evidence" : "evidence whole", dataset: { offset: evidence ? evidence.offset : 0, length: evidence ? evidence.length : Array.from(text).length } }, marked), after),
    h("p", { class: "muted" }, sourceLabel(source)),
  );
  if (evidence) panel.querySelector("mark")?.scrollIntoView({ block: "nearest" });
}

/** Show a selected edge's first source (its evidence marked) and list the others. */
export async function showEdge(panel, collection, edge, { retracted = false } = {}) {
  const sources = edge.sources || [];
  const line = `(${edge.labels.s}, ${edge.labels.p}, ${edge.labels.o})`;
  if (!sources.length) {
    setContent(panel, h("h2", {}, "Source"), h("p", { class: "edge-line" }, line),
      notice(retracted ? "Its source was retracted." : "No source recorded for this edge.", "warn"));
    panel.focus({ preventScroll: true });
    return;
  }
  const open = (s) => showSource(panel, collection, { source: s, evidence: s.evidence || null, edge: edge.labels, heading: "Source of the edge" });
  await open(sources[0]);
  if (sources.length > 1) {
    panel.append(h("h3", {}, `Also supported by ${sources.length - 1} more`), sourceList(sources.slice(1), open));
  }
}
