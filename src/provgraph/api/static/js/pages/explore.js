// The graph explorer: find entities by name (exact, keyword or spelled alike), open one to see its
// facts, each fact's sources with the sentence stating it, and its neighbours; expand the graph
// one neighbour at a time.

import { api } from "../api.js";
import { h, link, notice, problem, setContent } from "../dom.js";
import { entityGraph } from "../graph.js";
import { showEdge, sourcePanel } from "../source.js";

const MATCH = { exact: "named", lexical: "keyword", fuzzy: "spelled alike" };

export async function explorePage(main, { collection, arg }) {
  const params = new URLSearchParams(location.search);
  const input = h("input", { id: "entity-search", type: "search", name: "q", value: params.get("q") || "",
    placeholder: "a name, e.g. Marie Curie", autocomplete: "off", required: true });
  const form = h("form", { class: "filters", role: "search", "aria-label": "Search entities" },
    h("label", { for: "entity-search" }, "Entity"), input, h("button", { type: "submit" }, "Search"));
  const results = h("div", { id: "entity-results", "aria-live": "polite" });
  const detail = h("article", { id: "entity", "aria-live": "polite" });
  const canvas = h("div", { id: "explore-graph", class: "graph-canvas", role: "img",
    "aria-label": "The entities opened and expanded so far, and the facts between them" });
  const figure = h("figure", { class: "graph", hidden: true }, canvas,
    h("figcaption", { class: "muted" }, "Opened and expanded entities. Click a node to open it."));
  const panel = sourcePanel("Choose a fact's sources to see the sentence that states it.");
  setContent(main, h("h1", {}, `Explore · ${collection}`), form, results,
    h("div", { class: "with-panel" }, h("section", { class: "primary" }, figure, detail), panel));

  const view = { collection, results, detail, figure, canvas, panel, graph: null };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    history.replaceState(null, "", `/explore${arg ? `/${encodeURIComponent(arg)}` : ""}?${new URLSearchParams({ collection, q: input.value })}`);
    search(view, input.value);
  });
  addEventListener("popstate", () => {
    const entity = decodeURIComponent(location.pathname.replace(/^\/explore\/?/, ""));
    if (entity) open(view, entity, { push: false });
  });
  if (input.value) search(view, input.value);
  if (arg) await open(view, arg, { push: false });
  else input.focus();
}

async function search(view, q) {
  setContent(view.results, notice("Searching…"));
  let found;
  try {
    found = await api.entities(view.collection, q);
  } catch (err) {
    setContent(view.results, notice(problem(err), "error"));
    return;
  }
  if (!found.length) {
    setContent(view.results, notice(`No entity is named like “${q}”.`));
    return;
  }
  setContent(view.results, h("ul", { class: "entity-results" }, found.map((e) => h("li", {},
    h("button", { type: "button", class: "link-button", onclick: () => open(view, e.entity) }, e.label),
    h("span", { class: "tag" }, MATCH[e.match] || e.match),
    e.names.length > 1 ? h("span", { class: "muted" }, ` also ${e.names.filter((n) => n !== e.label).join(", ")}`) : null))));
}

/** Open an entity: its facts and neighbours in the page, its facts added to the graph. */
async function open(view, iri, { push = true } = {}) {
  setContent(view.detail, notice("Reading the entity…"));
  let e;
  try {
    e = await api.entity(view.collection, iri);
  } catch (err) {
    setContent(view.detail, notice(problem(err, `Entity ${iri}`), "error"));
    return;
  }
  if (push) {
    const params = new URLSearchParams(location.search);
    history.pushState(null, "", `/explore/${encodeURIComponent(iri)}?${params}`);
  }
  document.title = `${e.label} · Explore · provgraph`;
  renderEntity(view, e);
  grow(view, e);
}

function grow(view, e) {
  view.figure.hidden = false;
  if (!view.graph) view.graph = entityGraph(view.canvas, (id) => open(view, id));
  view.graph.add(e.facts, e.entity);
  view.canvas.dataset.entities = String(view.graph.cy.nodes().length);
}

function renderEntity(view, e) {
  const rows = e.facts.map((f, i) => h("tr", { dataset: { fact: String(i) } },
    h("td", {}, `(${f.labels.s}, ${f.labels.p}, ${f.labels.o})`),
    h("td", { class: "num" }, f.sources.length
      ? h("button", { type: "button", class: "link-button fact-sources",
        onclick: () => showEdge(view.panel, view.collection, f) }, `${f.sources.length} source${f.sources.length === 1 ? "" : "s"}`)
      : "none")));
  const expand = async (n, button) => {
    button.disabled = true;
    try {
      grow(view, await api.entity(view.collection, n.entity));
      button.textContent = "Expanded";
    } catch (err) {
      button.disabled = false;
      button.after(notice(problem(err, n.label), "error"));
    }
  };
  setContent(view.detail,
    h("h2", {}, e.label),
    h("p", { class: "muted mono" }, e.entity),
    e.names.length > 1 ? h("p", {}, "Also named: ", e.names.filter((n) => n !== e.label).join(", ")) : null,
    h("h3", {}, `Facts (${e.facts.length}${e.more_facts ? ` of ${e.facts.length + e.more_facts}` : ""})`),
    e.facts.length
      ? h("table", { class: "facts-table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Fact"), h("th", { scope: "col" }, "Sources"))),
        h("tbody", {}, rows))
      : notice("No facts name it."),
    h("h3", {}, `Neighbours (${e.neighbours.length})`),
    e.neighbours.length
      ? h("ul", { class: "neighbours" }, e.neighbours.map((n) => h("li", {},
        h("button", { type: "button", class: "link-button open-entity", onclick: () => open(view, n.entity) }, n.label),
        h("span", { class: "muted" }, ` ${n.facts} fact${n.facts === 1 ? "" : "s"} `),
        h("button", { type: "button", class: "secondary expand", onclick: (ev) => expand(n, ev.currentTarget) }, "Expand"))))
      : notice("No other entity is one fact away."),
    h("p", {}, link("/explore", "New search", { collection: view.collection })));
}
