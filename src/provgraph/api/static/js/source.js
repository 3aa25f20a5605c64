// The source panel: a chunk's text with the supporting sentence marked at its recorded offsets.

import { api } from "./api.js";
import { chunkName, h, link, notice, problem, setContent, sourceLabel } from "./dom.js";
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

const EMPTY = "Choose an edge or a citation to see the text behind it.";

/** The panel element, empty until a source is shown. */
export function sourcePanel(hint = EMPTY) {
  const panel = h("aside", { id: "source-panel", class: "source-panel", "aria-label": "Source", "aria-live": "polite", tabindex: "-1" });
  return clearPanel(panel, hint);
}

/** Empty the panel again (a new question shows nothing of the previous one's sources). */
export function clearPanel(panel, hint = EMPTY) {
  panel.dataset.shown = "";
  return setContent(panel, h("h2", {}, "Source"), h("p", { class: "muted" }, hint));
}

/**
 * Show one source in the panel: {source, evidence?, edge?}. `evidence` is {offset, length, text}
 * in the chunk's text; without it the whole chunk is the evidence.
 */
export async function showSource(panel, collection, { source, evidence = null, edge = null, heading = "Source", cited = null }) {
  const ticket = String(Number(panel.dataset.ticket || 0) + 1); // a later click wins over a slower earlier one
  panel.dataset.ticket = ticket;
  setContent(panel, h("h2", {}, heading), notice("Loading the source text…"));
  panel.focus({ preventScroll: true });
  let record;
  try {
    record = await api.record(collection, source.chunk);
  } catch (err) {
    if (panel.dataset.ticket === ticket) {
      setContent(panel, h("h2", {}, heading), notice(`Could not read the source: ${problem(err, "Its chunk")}`, "error"));
    }
    return;
  }
  if (panel.dataset.ticket !== ticket) return;
  const text = record.text ?? "";
  const [before, marked, after] = evidence
    ? splitAt(text, evidence.offset, evidence.length)
    : ["", text, ""];
  const where = [];
  if (source.page_number !== null && source.page_number !== undefined) where.push(`Page ${source.page_number}`);
  if (source.section_title) where.push(`Section: ${source.section_title}`);
  where.push(`${chunkName({ ...source, page_number: null, section_title: null })}, characters ${source.offset}–${source.offset + source.length}`);
  panel.dataset.shown = source.chunk;
  setContent(
    panel,
    h("h2", {}, heading),
    cited ? h("p", { class: "cited-line" }, "Cited for: ", h("q", {}, cited)) : null,
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

const WORD = /[\p{L}\p{N}]{3,}/gu;

/** How many of `text`'s words (3+ letters, any case) `other` has too. */
function shared(text, other) {
  const words = new Set((String(other || "").toLowerCase().match(WORD)) || []);
  return ((String(text || "").toLowerCase().match(WORD)) || []).filter((w) => words.has(w)).length;
}

/**
 * Open one citation of a stored trace (its `citations[i]`): the sentence the answer quotes when it
 * quotes one, else the cited edge sentence closest in words to the cited span; the rest listed.
 */
export async function showCitation(panel, collection, citation) {
  const heading = `Source ${citation.marker}`;
  const sources = citation.sources || [];
  const best = citation.quote
    || [...sources].sort((a, b) => shared(citation.text, b.evidence?.text) - shared(citation.text, a.evidence?.text))[0];
  if (!best) {
    setContent(panel, h("h2", {}, heading), h("p", { class: "cited-line" }, "Cited for: ", h("q", {}, citation.text)),
      notice("No source recorded for this citation.", "warn"));
    return;
  }
  const open = (s) => showSource(panel, collection, { source: s, evidence: s.evidence || null, heading, cited: citation.text });
  await open(best);
  const others = sources.filter((s) => s !== best && !(s.chunk === best.chunk && s.evidence?.offset === best.evidence?.offset));
  if (others.length && panel.dataset.shown === best.chunk) {
    panel.append(h("h3", {}, `The cited edges' sentences (${others.length})`), sourceList(others, open));
  }
}
