// Graphs: a trace's focus (the explored neighbourhood in grey, the selected edges in colour) and the
// explorer's growing neighbourhood of entities. Labels are drawn at a readable size whatever the
// zoom the layout fits to, and a label that would overlap a more important one waits for hover.

import cytoscape from "/static/vendor/cytoscape/cytoscape.esm.min.js";

export const LABEL_PX = 12; // node labels on screen at the fitted zoom
const graphs = new WeakMap();

const STYLE = [
  { selector: "node", style: { label: "data(label)", "font-size": LABEL_PX, color: "#1f2933", "background-color": "#9fb3c8",
    "text-valign": "bottom", "text-margin-y": 3, width: 12, height: 12, "text-wrap": "ellipsis", "text-max-width": 130,
    "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": 1, "min-zoomed-font-size": 0 } },
  { selector: "node.focus", style: { "background-color": "#2f6fab", width: 16, height: 16, "font-weight": 600 } },
  { selector: "node.centre", style: { "background-color": "#d9822b", width: 20, height: 20 } },
  { selector: "node.quiet", style: { label: "" } },
  { selector: "node.quiet:active, node.quiet.hover", style: { label: "data(label)", "z-index": 10 } },
  { selector: "edge", style: { width: 1, "line-color": "#cbd2d9", "target-arrow-color": "#cbd2d9",
    "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.7, "font-size": LABEL_PX - 1 } },
  { selector: "edge.selected", style: { width: 3, "line-color": "#d9822b", "target-arrow-color": "#d9822b" } },
  { selector: "edge.hover, edge:selected", style: { label: "data(label)", color: "#8a4b0f", "text-rotation": "autorotate",
    "text-background-color": "#ffffff", "text-background-opacity": 0.9, "z-index": 10 } },
  { selector: "edge.retracted", style: { "line-style": "dashed", "line-color": "#c23030", "target-arrow-color": "#c23030" } },
  { selector: ":selected", style: { "overlay-color": "#2f6fab", "overlay-opacity": 0.25 } },
];

const LAYOUT = { name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true, padding: 24,
  nodeRepulsion: () => 60000, idealEdgeLength: () => 110, componentSpacing: 90, numIter: 1500 };

/** The cytoscape instance drawn into `container` (null before it is drawn). */
export function graphOf(container) {
  return graphs.get(container) || null;
}

/** A node's label box in screen pixels (its text under the node, at the rendered font size). */
export function labelBox(node) {
  const label = node.data("label") || "";
  if (!label || node.hasClass("quiet")) return null;
  const zoom = node.cy().zoom();
  const size = parseFloat(node.style("font-size")) * zoom;
  const width = Math.min(measure(label, size), parseFloat(node.style("text-max-width")) * zoom);
  const p = node.renderedPosition();
  const top = p.y + node.renderedOuterHeight() / 2 + parseFloat(node.style("text-margin-y")) * zoom;
  return { x1: p.x - width / 2, x2: p.x + width / 2, y1: top, y2: top + size * 1.25 };
}

let canvas = null;
function measure(text, px) {
  canvas = canvas || document.createElement("canvas");
  const ctx = canvas.getContext("2d");
  ctx.font = `600 ${px}px system-ui, sans-serif`;
  return ctx.measureText(text).width + 4;
}

const overlaps = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

/** Fit, scale labels to LABEL_PX on screen, and quiet each label that would overlap a more important one. */
function settle(cy) {
  cy.fit(undefined, 24);
  const zoom = cy.zoom();
  cy.nodes().style("font-size", LABEL_PX / zoom);
  cy.nodes().style("text-max-width", 130 / zoom);
  cy.edges().style("font-size", (LABEL_PX - 1) / zoom);
  cy.nodes().removeClass("quiet");
  const rank = (n) => (n.hasClass("centre") ? 2 : 0) + (n.hasClass("focus") ? 1 : 0) + n.degree() / 1000;
  const shown = [];
  const nodes = [];
  cy.nodes().forEach((n) => { nodes.push(n); });
  for (const node of nodes.sort((a, b) => rank(b) - rank(a))) {
    const box = labelBox(node);
    if (!box) continue;
    if (shown.some((other) => overlaps(box, other))) node.addClass("quiet");
    else shown.push(box);
  }
}

function build(container, elements, onTap) {
  const cy = cytoscape({ container, elements, style: STYLE, layout: LAYOUT, wheelSensitivity: 0.3 });
  cy.on("mouseover", "node, edge", (ev) => ev.target.addClass("hover"));
  cy.on("mouseout", "node, edge", (ev) => ev.target.removeClass("hover"));
  cy.on("tap", onTap);
  settle(cy);
  graphs.set(container, cy);
  return cy;
}

/**
 * Draw a trace's focus into `container`. `selected` and `explored` are edges {s, p, o, labels:{s,p,o}}
 * with s/p/o in N-Triples form; the ends of selected edges stand out, the rest are context.
 * `onEdge(edge)` is called when a selected edge is tapped. Returns the cytoscape instance.
 */
export function drawGraph(container, { selected, explored = [], retracted = new Set() }, onEdge) {
  const nodes = new Map();
  const edges = new Map();
  const ends = new Set(selected.flatMap((e) => [e.s, e.o]));
  const addNode = (id, label) => {
    if (!nodes.has(id)) nodes.set(id, { data: { id, label }, classes: ends.has(id) ? "focus" : "" });
  };
  const add = (e, cls) => {
    const id = `${e.s} ${e.p} ${e.o}`;
    addNode(e.s, e.labels.s);
    addNode(e.o, e.labels.o);
    const classes = [cls, retracted.has(id) ? "retracted" : ""].join(" ").trim();
    edges.set(id, { data: { id, source: e.s, target: e.o, label: e.labels.p, ref: e }, classes });
  };
  for (const e of explored) add(e, "explored");
  for (const e of selected) add(e, "selected");
  return build(container, [...nodes.values(), ...edges.values()], (ev) => {
    if (ev.target !== ev.cy && ev.target.isEdge() && ev.target.hasClass("selected")) onEdge(ev.target.data("ref"));
  });
}

/**
 * The explorer's graph: entities as nodes (`centre` stands out), facts between them as edges.
 * Returns {cy, add(facts, centre)}; `add` grows the graph and lays it out again. Tapping a node
 * calls `onNode(iri)`.
 */
export function entityGraph(container, onNode) {
  const cy = build(container, [], (ev) => {
    if (ev.target !== ev.cy && ev.target.isNode()) onNode(ev.target.id());
  });
  const add = (facts, centre) => {
    cy.nodes().removeClass("centre");
    for (const f of facts) {
      if (!f.o.startsWith("<")) continue; // literals stay in the fact list
      for (const [id, label] of [[f.s, f.labels.s], [f.o, f.labels.o]]) {
        if (cy.getElementById(id.slice(1, -1)).empty()) cy.add({ group: "nodes", data: { id: id.slice(1, -1), label } });
      }
      const id = `${f.s} ${f.p} ${f.o}`;
      if (cy.getElementById(id).empty()) {
        cy.add({ group: "edges", data: { id, source: f.s.slice(1, -1), target: f.o.slice(1, -1), label: f.labels.p } });
      }
    }
    cy.getElementById(centre).addClass("centre focus");
    cy.layout({ ...LAYOUT, randomize: cy.nodes().length < 3 }).run();
    settle(cy);
  };
  return { cy, add };
}
