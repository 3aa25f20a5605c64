// The trace list, searchable by question text and by date.

import { api } from "../api.js";
import { KIND, h, notice, problem, setContent, when } from "../dom.js";
import { traceLink } from "../steps.js";

/** Rows matching the filters: question words (all, any case) and an inclusive date range (YYYY-MM-DD, UTC). */
export function filterTraces(rows, { text = "", from = "", to = "" }) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  return rows.filter((r) => {
    const day = (r.started || "").slice(0, 10);
    const query = (r.query || "").toLowerCase();
    return words.every((w) => query.includes(w)) && (!from || day >= from) && (!to || day <= to);
  });
}

export async function tracesPage(main, { collection }) {
  const params = new URLSearchParams(location.search);
  const text = h("input", { id: "search", type: "search", name: "q", value: params.get("q") || "", placeholder: "words in the question" });
  const from = h("input", { id: "from", type: "date", name: "from", value: params.get("from") || "" });
  const to = h("input", { id: "to", type: "date", name: "to", value: params.get("to") || "" });
  const form = h("form", { class: "filters", role: "search", "aria-label": "Search traces" },
    h("label", { for: "search" }, "Question"), text,
    h("label", { for: "from" }, "From"), from,
    h("label", { for: "to" }, "To"), to,
    h("input", { type: "hidden", name: "collection", value: collection }),
    h("button", { type: "submit" }, "Search"));
  const results = h("div", { id: "trace-results", "aria-live": "polite" }, notice("Loading traces…"));
  setContent(main, h("h1", {}, `Traces · ${collection}`), form, results);

  let rows;
  try {
    const body = await api.traces(collection);
    rows = Array.isArray(body) ? body : body.traces || [];
  } catch (err) {
    setContent(results, notice(problem(err), "error"));
    return;
  }
  const show = () => {
    const found = filterTraces(rows, { text: text.value, from: from.value, to: to.value })
      .sort((a, b) => (a.started < b.started ? 1 : -1));
    if (!found.length) {
      setContent(results, notice(rows.length ? "No trace matches." : "No traces yet: ask a question first."));
      return;
    }
    setContent(results,
      h("p", { class: "muted" }, `${found.length} of ${rows.length} traces`),
      h("table", { class: "traces" },
        h("thead", {}, h("tr", {}, ["Question", "Kind", "Started", "Session"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, found.map((r) => h("tr", { class: r.informed_by ? "sub" : null },
          h("td", {}, traceLink(r.session_id, collection, r.query || "(no question)"),
            r.informed_by ? h("span", { class: "tag" }, "agent sub-trace") : null, r.stale ? h("span", { class: "tag warn" }, "stale") : null),
          h("td", {}, KIND[r.type] || r.type),
          h("td", {}, when(r.started)),
          h("td", { class: "mono" }, r.session_id))))));
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const next = new URLSearchParams({ collection, q: text.value, from: from.value, to: to.value });
    history.replaceState(null, "", `/traces?${next}`);
    show();
  });
  show();
}
