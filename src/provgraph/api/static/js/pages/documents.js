// The document list, and one document's provenance tree: document → pages/sections → chunks → edges.

import { api } from "../api.js";
import { h, link, notice, pretty, setContent } from "../dom.js";
import { showSource, sourcePanel } from "../source.js";

export async function documentsPage(main, { collection }) {
  setContent(main, h("h1", {}, `Documents · ${collection}`), notice("Loading documents…"));
  let docs;
  try {
    const body = await api.documents(collection);
    docs = Array.isArray(body) ? body : body.documents || [];
  } catch (err) {
    setContent(main, h("h1", {}, "Documents"), notice(err.message, "error"));
    return;
  }
  setContent(main, h("h1", {}, `Documents · ${collection}`),
    docs.length
      ? h("table", { class: "documents" },
        h("thead", {}, h("tr", {}, ["Title", "Document", "Type", "Bytes", "Parts"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, docs.map((d) => h("tr", {},
          h("td", {}, link(`/documents/${encodeURIComponent(d.id)}`, d.title || d.id, { collection })),
          h("td", { class: "mono" }, d.id), h("td", {}, d.mime_type || ""),
          h("td", { class: "num" }, (d.size ?? "").toLocaleString()), h("td", { class: "num" }, String(d.parts ?? ""))))))
      : notice("No documents in this collection."));
}

export async function documentPage(main, { collection, arg: doc }) {
  setContent(main, notice("Loading the provenance tree…"));
  let tree;
  try {
    tree = await api.provenance(collection, doc);
  } catch (err) {
    setContent(main, h("h1", {}, "Document"), notice(err.message, "error"));
    return;
  }
  const panel = sourcePanel();
  const open = (part, chunk) => showSource(panel, collection, {
    heading: `Chunk ${chunk.index}`,
    source: {
      document: tree.document, title: tree.title, chunk: chunk.chunk, chunk_index: chunk.index,
      offset: chunk.offset, length: chunk.length,
      page_number: part && part.kind === "page" ? part.number : null,
      section_title: part && part.kind === "section" ? part.label : null,
    },
  });
  const chunkItem = (part, c) => h("li", { class: "chunk" },
    h("button", { type: "button", class: "link-button", onclick: () => open(part, c) },
      `Chunk ${c.index}`),
    h("span", { class: "muted" }, ` characters ${c.offset}–${c.offset + c.length} · ${c.extractors.join(", ") || "no extractor"}`),
    c.edges.length
      ? h("ul", { class: "edges-list" }, c.edges.map(([s, p, o]) => h("li", {}, `(${pretty(s)}, ${pretty(p)}, ${pretty(o)})`)))
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
