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

/** "Chunk 2 → Page 3 → Title" style breadcrumb of a source. */
export function sourceLabel(src) {
  const parts = [`Chunk ${src.chunk_index}`];
  if (src.page_number !== null && src.page_number !== undefined) parts.push(`Page ${src.page_number}`);
  else if (src.section_title) parts.push(`Section: ${src.section_title}`);
  parts.push(src.title || src.document);
  return parts.join(" → ");
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
