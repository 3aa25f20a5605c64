// Reading the N-Triples terms of live explain messages ({s, p, o} strings) into plain values.

const TG = "https://trustgraph.ai/ns/";
const ESCAPES = { t: "\t", b: "\b", n: "\n", r: "\r", f: "\f", '"': '"', "'": "'", "\\": "\\" };

/** Parse one term: {kind: "iri"|"literal"|"blank"|"triple", value, datatype?, s?, p?, o?}. */
export function parseTerm(text) {
  const [term, rest] = readTerm(text.trim(), 0);
  if (rest !== text.trim().length) throw new Error(`trailing text in term: ${text}`);
  return term;
}

function readTerm(text, at) {
  while (text[at] === " ") at += 1;
  if (text.startsWith("<<(", at)) {
    const [s, a1] = readTerm(text, at + 3);
    const [p, a2] = readTerm(text, a1);
    const [o, a3] = readTerm(text, a2);
    let end = a3;
    while (text[end] === " ") end += 1;
    if (!text.startsWith(")>>", end)) throw new Error(`unclosed triple term: ${text}`);
    return [{ kind: "triple", s, p, o }, end + 3];
  }
  if (text[at] === "<") {
    const end = text.indexOf(">", at);
    return [{ kind: "iri", value: unescapeIri(text.slice(at + 1, end)) }, end + 1];
  }
  if (text.startsWith("_:", at)) {
    let end = at + 2;
    while (end < text.length && text[end] !== " " && text[end] !== ")") end += 1;
    return [{ kind: "blank", value: text.slice(at + 2, end) }, end];
  }
  if (text[at] === '"') return readLiteral(text, at);
  throw new Error(`not an N-Triples term: ${text.slice(at, at + 40)}`);
}

function readLiteral(text, at) {
  let value = "";
  let i = at + 1;
  while (text[i] !== '"') {
    if (i >= text.length) throw new Error("unterminated literal");
    if (text[i] === "\\") {
      const c = text[i + 1];
      if (c === "u" || c === "U") {
        const size = c === "u" ? 4 : 8;
        value += String.fromCodePoint(parseInt(text.slice(i + 2, i + 2 + size), 16));
        i += 2 + size;
      } else {
        value += ESCAPES[c] ?? c;
        i += 2;
      }
    } else {
      value += text[i];
      i += 1;
    }
  }
  i += 1;
  const term = { kind: "literal", value, datatype: null, language: null };
  if (text.startsWith("^^<", i)) {
    const end = text.indexOf(">", i);
    term.datatype = text.slice(i + 3, end);
    i = end + 1;
  } else if (text[i] === "@") {
    let end = i + 1;
    while (end < text.length && /[A-Za-z0-9-]/.test(text[end])) end += 1;
    term.language = text.slice(i + 1, end);
    i = end;
  }
  return [term, i];
}

function unescapeIri(text) {
  return text.replace(/\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (_, a, b) => String.fromCodePoint(parseInt(a || b, 16)));
}

/** A readable label for a term without a store lookup: a literal's text, an IRI's decoded last segment. */
export function termLabel(term) {
  if (term.kind === "literal") return term.value;
  if (term.kind === "triple") return `(${termLabel(term.s)}, ${termLabel(term.p)}, ${termLabel(term.o)})`;
  const value = term.value;
  const tail = value.split(/[/#]/).pop() || value;
  const segment = tail.includes(":") && !value.includes("/") ? tail.split(":").pop() : tail;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The focus step's edges from its explain triples: [{index, edge:{s,p,o}, labels, reasoning, score}]. */
export function focusEdges(triples) {
  const bySubject = new Map();
  for (const t of triples) {
    const subject = parseTerm(t.s).value;
    if (!bySubject.has(subject)) bySubject.set(subject, []);
    bySubject.get(subject).push(t);
  }
  const edges = [];
  for (const t of triples) {
    if (parseTerm(t.p).value !== `${TG}selectedEdge`) continue;
    const selection = parseTerm(t.o).value;
    const edge = { selection, index: Number(selection.split(":").pop()), reasoning: "", score: null };
    for (const u of bySubject.get(selection) || []) {
      const predicate = parseTerm(u.p).value;
      if (predicate === `${TG}edge`) {
        const triple = parseTerm(u.o);
        edge.s = toNT(triple.s);
        edge.p = toNT(triple.p);
        edge.o = toNT(triple.o);
        edge.labels = { s: termLabel(triple.s), p: termLabel(triple.p), o: termLabel(triple.o) };
      } else if (predicate === `${TG}reasoning`) edge.reasoning = parseTerm(u.o).value;
      else if (predicate === `${TG}score`) edge.score = Number(parseTerm(u.o).value);
    }
    if (edge.labels) edges.push(edge);
  }
  return edges.sort((a, b) => a.index - b.index);
}

/** The literal values of one predicate (local name in the tg: namespace) in a step's triples. */
export function values(triples, localName) {
  return triples.filter((t) => parseTerm(t.p).value === TG + localName).map((t) => termLabel(parseTerm(t.o)));
}

const NT_ESCAPES = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";

/** A term back in canonical N-Triples, as the server writes it. */
export function toNT(term) {
  if (term.kind === "iri") return `<${term.value}>`;
  if (term.kind === "blank") return `_:${term.value}`;
  if (term.kind === "triple") return `<<( ${toNT(term.s)} ${toNT(term.p)} ${toNT(term.o)} )>>`;
  const body = Array.from(term.value, (c) => NT_ESCAPES[c]
    ?? (c.codePointAt(0) < 0x20 || c.codePointAt(0) === 0x7f ? `\\u${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}` : c)).join("");
  if (term.language) return `"${body}"@${term.language}`;
  return term.datatype && term.datatype !== XSD_STRING ? `"${body}"^^<${term.datatype}>` : `"${body}"`;
}
