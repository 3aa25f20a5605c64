// The graph view of a trace's focus: the explored neighbourhood in grey, the selected edges in colour.

import cytoscape from "/static/vendor/cytoscape/cytoscape.esm.min.js";

const STYLE = [
  { selector: "node", style: { label: "", "font-size": 11, color: "#1f2933", "background-color": "#9fb3c8",
    "text-valign": "bottom", "text-margin-y": 4, width: 14, height: 14, "text-wrap": "ellipsis", "text-max-width": 140 } },
  { selector: "node.focus", style: { label: "data(label)", "background-color": "#2f6fab", width: 18, height: 18 } },
  { selector: "edge", style: { width: 1, "line-color": "#cbd2d9", "target-arrow-color": "#cbd2d9",
    "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.7 } },
  { selector: "edge.selected", style: { width: 3, "line-color": "#d9822b", "target-arrow-color": "#d9822b",
    label: "data(label)", "font-size": 10, color: "#8a4b0f", "text-rotation": "autorotate",
    "text-background-color": "#ffffff", "text-background-opacity": 0.8 } },
  { selector: "edge.retracted", style: { "line-style": "dashed", "line-color": "#c23030", "target-arrow-color": "#c23030" } },
  { selector: ":selected", style: { "overlay-color": "#2f6fab", "overlay-opacity": 0.25 } },
];

/**
 * Draw into `container`. `selected` and `explored` are edges {s, p, o, labels:{s,p,o}} with s/p/o
 * in N-Triples form; the entities of selected edges are labelled, the rest are context.
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
  const cy = cytoscape({
    container,
    elements: [...nodes.values(), ...edges.values()],
    style: STYLE,
    layout: { name: "cose", animate: false, randomize: true, nodeRepulsion: () => 9000, idealEdgeLength: () => 90 },
  });
  cy.on("tap", "edge.selected", (ev) => onEdge(ev.target.data("ref")));
  return cy;
}
