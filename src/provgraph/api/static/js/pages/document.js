// One document's provenance tree: document → pages/sections → chunks → the edges extracted from each.

import { api } from "../api.js";
import { chunkName, h, link, notice, pretty, problem, setContent } from "../dom.js";
import { showSource, sourcePanel } from "../source.js";

const key = (labels) => labels.map((l) => pretty(l)).join("\u0000");

export async function documentPage(main, { collection, arg: doc }) {
  setContent(main, notice("Loading the provenance tree…"));
  let tree;
  try {
    tree = await api.provenance(collection, doc);
  } catch (err) {
    setContent(main, h("h1", {}, "Document"), notice(problem(err, `Document ${doc}`), "error"),
      h("p", {}, link("/documents", "All documents", { collection })));
    return;
  }
  const panel = sourcePanel("Choose a chunk or an edge to see its text.");
  const facts = new Map(); // chunk → its facts with their sentences, read on first use
  const sourceOf = (part, chunk) => ({
    document: tree.document, title: tree.title, chunk: chunk.chunk, chunk_index: chunk.index,
    offset: chunk.offset, length: chunk.length,
    page_number: part && part.kind === "page" ? part.number : null,
    section_title: part && part.kind === "section" ? part.label : null,
  });
  const open = (part, chunk) => showSource(panel, collection, { heading: chunkName(sourceOf(part, chunk)), source: sourceOf(part, chunk) });
  const openEdge = async (part, chunk, labels) => {
    if (!facts.has(chunk.chunk)) facts.set(chunk.chunk, api.chunkFacts(collection, chunk.chunk).catch(() => []));
    const fact = (await facts.get(chunk.chunk)).find((f) => key([f.labels.s, f.labels.p, f.labels.o]) === key(labels));
    const evidence = fact?.sources?.[0]?.evidence || null;
    await showSource(panel, collection, {
      heading: "Source of the edge", source: sourceOf(part, chunk), evidence,
      edge: { s: pretty(labels[0]), p: pretty(labels[1]), o: pretty(labels[2]) },
    });
  };
  const chunkItem = (part, c) => h("li", { class: "chunk" },
    h("button", { type: "button", class: "link-button chunk-button", onclick: () => open(part, c) }, chunkName(sourceOf(part, c))),
    h("span", { class: "muted" }, ` characters ${c.offset}–${c.offset + c.length} · ${c.extractors.join(", ") || "no extractor"}`),
    c.edges.length
      ? h("ul", { class: "edges-list" }, c.edges.map((labels) => h("li", {},
        h("button", { type: "button", class: "link-button edge-button", onclick: () => openEdge(part, c, labels) },
          `(${labels.map(pretty).join(", ")})`))))
      : null);
  const partItem = (p) => h("li", { class: "part" },
    h("details", { open: true },
      h("summary", {}, p.kind === "page" ? `Page ${p.number}` : `Section: ${p.label}`,
        h("span", { class: "muted" }, ` characters ${p.offset}–${p.offset + p.length}`)),
      h("ul", {}, p.chunks.map((c) => chunkItem(p, c)))));
  const pages = tree.pages ? `, ${tree.pages} pages` : "";
  setContent(main, h("div", { class: "with-panel" },
    h("section", { class: "primary" },
      h("p", { class: "crumbs" }, link("/documents", "Documents", { collection }), " / ", tree.document),
      h("h1", {}, tree.title),
      h("p", { class: "muted" }, `${tree.document} · ${tree.mime_type}${pages}`),
      h("ul", { class: "tree", "aria-label": "Provenance tree" },
        tree.parts.map(partItem), tree.chunks.map((c) => chunkItem(null, c)))),
    panel));
}
