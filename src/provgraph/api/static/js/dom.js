// Building the page. Text from documents, models and the store only ever becomes a text node:
// nothing here parses HTML, so markup in a document shows as characters and runs nothing.

/** An element: h("a", {href: "/x", class: "link"}, "text", child, [more, children]). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "href") el.setAttribute("href", safeHref(value));
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/**
 * Whether `path` is a path on this site: "/x", not "//host" nor "/\\host", which browsers read as a host, and
 * nothing with a control character or a backslash: URL parsing drops tabs and newlines ("/\t/host" is "//host").
 */
export function isLocalPath(path) {
  const text = String(path);
  return /^\/(?![/\\])/.test(text) && !/[\u0000-\u001f\u007f\\]/.test(text);
}

/** Links stay on this site: anything else (javascript:, data:, other hosts) becomes "#". */
export function safeHref(value) {
  const text = String(value);
  return isLocalPath(text) || text.startsWith("#") ? text : "#";
}

/** Replace an element's content. */
export function setContent(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A site link, with the current collection carried in the query string. */
export function link(path, text, params = {}, attrs = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  const q = query.toString();
  return h("a", { ...attrs, href: q ? `${path}?${q}` : path }, text);
}

/**
 * A chunk's name. Chunks are numbered within their page or section (the store's tg:chunkIndex), so
 * the name says which: "Page 2 · chunk 1", "“Early life” · chunk 1", or "Chunk 3" directly under a document.
 */
export function chunkName({ chunk_index: index, page_number: page = null, section_title: section = null }) {
  if (page !== null && page !== undefined) return `Page ${page} · chunk ${index}`;
  if (section) return `“${section}” · chunk ${index}`;
  return `Chunk ${index}`;
}

/** "Page 3 · chunk 2 → Title": a source's chunk and document. */
export function sourceLabel(src) {
  return `${chunkName(src)} → ${src.title || src.document}`;
}

/** How every page shows a time: "2026-03-01 12:34:56 UTC" (the API's times are UTC). */
export function when(iso) {
  if (!iso) return "";
  const m = String(iso).match(/^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/);
  return m ? `${m[1]} ${m[2]} UTC` : String(iso);
}

/** The kinds of question, named the same on every page. */
export const KIND = { GraphRAG: "GraphRAG", DocRAG: "Document RAG", Agent: "Agent", Global: "Global" };

// what the server's messages advise its operator: a command to run, or a setting, package or file to change
const COMMAND_ADVICE = /\s*\([^()]*\bprovgraph [a-z][^()]*\)/g;
const SETTING_ADVICE = /\s*\([^()]*\b(?:PROVGRAPH_[A-Z]|pip install|provgraph\.toml)[^()]*\)|:\s*set PROVGRAPH_[\s\S]*$/g;

/**
 * An API error (or a stream's error message) as a browser user reads it: a missing thing named as
 * `what`, no advice to run a command, and a setting to change named as the server's (the server's
 * messages are the CLI's, which suggest `provgraph …` commands and PROVGRAPH_ settings).
 */
export function problem(err, what = null) {
  if (err && err.status === 404 && what) return `${what} is not in this collection.`;
  if (err && err.status === 401) return "Your token is no longer valid: log in again.";
  const said = String(err?.message ?? err).replace(COMMAND_ADVICE, "").trim();
  const text = said.replace(SETTING_ADVICE, "").trim();
  if (/\bprovgraph [a-z]+|PROVGRAPH_[A-Z]/.test(text)) return "The server refused the request.";
  return text === said ? text : `${text} (a setting of this server: whoever runs it can change it)`;
}

/** A number shown with two decimals, or "–". */
export function score(value) {
  return typeof value === "number" ? value.toFixed(2) : "–";
}

/** A status line that screen readers announce. */
export function notice(text, kind = "info") {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/** A label as people read it: an IRI that stands in for a missing label shows its last segment. */
export function pretty(label) {
  const text = String(label);
  return /^https?:\/\/\S+$/.test(text) ? text.split(/[/#]/).pop() || text : text;
}
