// Conversations: the list, and one conversation as a thread of turns, each with its answer, citations and trace.

import { api } from "../api.js";
import { h, link, notice, problem, setContent, sourceLabel, when } from "../dom.js";
import { traceLink } from "../steps.js";

const KIND = { "graph-rag": "GraphRAG", "document-rag": "Document RAG", agent: "Agent" };

export async function conversationsPage(main, { collection, arg }) {
  if (arg !== undefined) return threadPage(main, collection, arg);
  setContent(main, h("h1", {}, `Conversations · ${collection}`), notice("Loading conversations…"));
  let rows;
  try {
    rows = await api.conversations(collection);
  } catch (err) {
    setContent(main, h("h1", {}, "Conversations"), notice(problem(err), "error"));
    return;
  }
  if (!rows.length) {
    setContent(main, h("h1", {}, `Conversations · ${collection}`),
      notice("No conversations yet: ask with a conversation ID (graph-rag --conversation ID, or `conversation` in the API)."));
    return;
  }
  setContent(main, h("h1", {}, `Conversations · ${collection}`),
    h("table", { class: "traces", id: "conversations" },
      h("thead", {}, h("tr", {}, ["Conversation", "Turns", "Started", "Last question"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map((c) => h("tr", {},
        h("td", {}, link(`/conversations/${encodeURIComponent(c.conversation)}`, c.conversation, { collection })),
        h("td", {}, String(c.turns)), h("td", {}, when(c.started)), h("td", {}, c.last_question))))));
}

function turnView(t, collection) {
  const rewritten = t.query !== t.asked
    ? h("p", { class: "muted rewrite" }, `Answered as: ${t.query}`,
      t.rewrite.entities.length ? ` (with ${t.rewrite.entities.join(", ")} from turn ${t.turn - 1})` : ` (${t.rewrite.method})`)
    : null;
  const cites = t.citations.length
    ? h("ol", { class: "citations" }, t.citations.map((c) => h("li", {},
      h("span", { class: "marker" }, c.marker), " ",
      c.source ? `${sourceLabel(c.source)}, chars ${c.source.offset}–${c.source.offset + c.source.length}` : "(source no longer stored)")))
    : null;
  return h("article", { class: "turn card", id: `turn-${t.turn}` },
    h("h2", {}, `Turn ${t.turn}`),
    h("p", { class: "muted" }, `${KIND[t.type] || t.type} · ${when(t.started)}`),
    h("p", { class: "question" }, h("strong", {}, "Q: "), t.asked),
    rewritten,
    h("p", { class: "answer" }, h("strong", {}, "A: "), t.answer || "(no answer stored)"),
    cites,
    h("p", {}, traceLink(t.session_id, collection, "Trace of this turn ›")));
}

async function threadPage(main, collection, id) {
  setContent(main, notice("Loading the conversation…"));
  let thread;
  try {
    thread = await api.conversation(collection, id);
  } catch (err) {
    setContent(main, h("h1", {}, "Conversation"), notice(problem(err, `Conversation ${id}`), "error"),
      h("p", {}, link("/conversations", "All conversations", { collection })));
    return;
  }
  setContent(main,
    h("p", { class: "crumbs" }, link("/conversations", "Conversations", { collection }), " / ", thread.conversation),
    h("h1", {}, `Conversation ${thread.conversation}`),
    h("p", { class: "muted" }, `${thread.turns.length} turn(s)`),
    h("div", { class: "thread", id: "thread" }, thread.turns.map((t) => turnView(t, collection))));
}
