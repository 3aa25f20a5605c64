// The explored neighbourhood of a GraphRAG trace: the edges around its seed entities, read with a
// read-only SPARQL query through the public API.

import { api } from "../api.js";
import { parseTerm, termLabel, toNT } from "../ntriples.js";

const LIMIT = 60;

function query(seeds) {
  return `PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?s ?p ?o ?sl ?pl ?ol WHERE {
  VALUES ?e { ${seeds.join(" ")} }
  { ?e ?p ?o . BIND(?e AS ?s) } UNION { ?s ?p ?e . BIND(?e AS ?o) }
  FILTER(?p != rdfs:label)
  OPTIONAL { ?s rdfs:label ?sl } OPTIONAL { ?p rdfs:label ?pl } OPTIONAL { ?o rdfs:label ?ol }
} LIMIT ${LIMIT}`;
}

/** A SPARQL JSON binding as a term ({kind, value, datatype, language}). */
function term(binding) {
  if (binding.type === "uri") return { kind: "iri", value: binding.value };
  if (binding.type === "bnode") return { kind: "blank", value: binding.value };
  return { kind: "literal", value: binding.value, datatype: binding.datatype || null, language: binding["xml:lang"] || null };
}

/**
 * Edges {s, p, o, labels} around the entities of the selected edges that the exploration started
 * from (all selected entities when none was a seed); [] when there are none.
 */
export async function neighbourhood(collection, trace) {
  const ends = new Set((trace.focus?.edges || []).flatMap((e) => [e.s, e.o]));
  const all = (trace.exploration?.entities || []).map((e) => e.term);
  const seeded = all.filter((t) => ends.has(t));
  const seeds = (seeded.length ? seeded : [...ends]).filter((t) => parseTerm(t).kind === "iri").slice(0, 20);
  if (!seeds.length) return [];
  const body = await api.sparql(collection, query(seeds));
  const seen = new Set();
  const edges = [];
  for (const row of body.results?.bindings || []) {
    if (!row.s || !row.p || !row.o || row.o.type === "triple") continue;
    const [s, p, o] = [term(row.s), term(row.p), term(row.o)];
    const edge = {
      s: toNT(s), p: toNT(p), o: toNT(o),
      labels: {
        s: row.sl?.value ?? termLabel(s), p: row.pl?.value ?? termLabel(p), o: row.ol?.value ?? termLabel(o),
      },
    };
    const key = `${edge.s} ${edge.p} ${edge.o}`;
    if (!seen.has(key)) {
      seen.add(key);
      edges.push(edge);
    }
  }
  return edges;
}
