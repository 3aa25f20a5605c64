// The viewer's entry point: the top bar, the collection chooser, and which page a path shows.

import { ApiError, api, session } from "./api.js";
import { h, link, notice, problem, setContent } from "./dom.js";
import { askPage } from "./pages/ask.js";
import { communitiesPage } from "./pages/communities.js";
import { conversationsPage } from "./pages/conversations.js";
import { documentPage } from "./pages/document.js";
import { documentsPage } from "./pages/documents.js";
import { explorePage } from "./pages/explore.js";
import { loginPage } from "./pages/login.js";
import { tracePage } from "./pages/trace.js";
import { tracesPage } from "./pages/traces.js";

const ROUTES = [
  [/^\/(?:ask)?$/, "Ask", askPage],
  [/^\/traces$/, "Traces", tracesPage],
  [/^\/traces\/(.+)$/, "Trace", tracePage],
  [/^\/conversations(?:\/(.+))?$/, "Conversations", conversationsPage],
  [/^\/documents$/, "Documents", documentsPage],
  [/^\/documents\/(.+)$/, "Document", documentPage],
  [/^\/explore(?:\/(.+))?$/, "Explore", explorePage],
  [/^\/communities$/, "Communities", communitiesPage],
  [/^\/communities\/(.+)$/, "Community", communitiesPage],
];
const NAV = [["/", "Ask"], ["/traces", "Traces"], ["/conversations", "Conversations"], ["/documents", "Documents"],
  ["/explore", "Explore"], ["/communities", "Communities"]];
const SECTION = { Trace: "Traces", Document: "Documents", Community: "Communities" }; // a page's place in the top bar

function topBar(collections, current, title, user) {
  const chooser = h("select", { id: "collection", "aria-label": "Collection" },
    collections.map((c) => h("option", { value: c, selected: c === current }, c)));
  chooser.addEventListener("change", () => {
    session.setCollection(chooser.value);
    const params = new URLSearchParams(location.search);
    params.set("collection", chooser.value);
    location.search = params.toString();
  });
  const nav = NAV.map(([path, text]) => link(path, text, { collection: current },
    { class: text === (SECTION[title] || title) ? "current" : null, "aria-current": text === title ? "page" : null }));
  return [
    h("a", { href: "#main", class: "skip" }, "Skip to content"),
    h("a", { href: "/", class: "brand" }, "provgraph"),
    h("nav", { "aria-label": "Pages" }, nav),
    h("label", { class: "chooser" }, "Collection ", chooser),
    user ? h("span", { id: "user", class: "user", title: `This token acts as user ${user}` }, "User ", h("strong", {}, user)) : null,
    h("button", { type: "button", id: "logout", onclick: () => { session.clear(); location.assign("/login"); } }, "Log out"),
  ];
}

function collectionNames(body) {
  const list = Array.isArray(body) ? body : body.collections || [];
  return list.map((c) => (typeof c === "string" ? c : c.name || c.collection));
}

async function start() {
  const bar = document.getElementById("topbar");
  const main = document.getElementById("main");
  const path = decodeURI(location.pathname).replace(/\/+$/, "") || "/";
  if (path === "/login") {
    document.title = "Log in · provgraph";
    loginPage(main);
    return;
  }
  const route = ROUTES.find(([re]) => re.test(path));
  if (!route) {
    setContent(main, h("h1", {}, "Not found"), h("p", {}, "No page here. ", link("/", "Ask a question")));
    return;
  }
  let names;
  let user = "";
  try {
    const [body, who] = await Promise.all([api.collections(), api.whoami().catch(() => null)]);
    names = collectionNames(body);
    user = who?.user || "";
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      session.clear();
      location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
      return;
    }
    setContent(main, notice(`The server did not answer: ${problem(err)}`, "error"));
    return;
  }
  let current = session.collection();
  const [re, title, page] = route;
  // the Documents page may name a collection that does not exist yet: its first upload creates it
  if (!names.includes(current)) current = title === "Documents" && current ? current : names[0] || "";
  if (!current && title === "Documents") current = "default";
  if (current) session.setCollection(current);
  document.title = `${title} · provgraph`;
  setContent(bar, topBar(names.includes(current) || !current ? names : [...names, current], current, title, user));
  if (!current) {
    setContent(main, h("h1", {}, "No collection yet"),
      h("p", { id: "who" }, user ? ["You are signed in as user ", h("strong", {}, user), ", who has no documents yet. "]
        : "This account has no documents yet. ",
      link("/documents", "Upload some", { collection: "default" }), " to ask questions about them."),
      h("p", { class: "muted" }, "Collections belong to the user who loaded them: documents loaded from the command "
        + "line belong to user “default” unless another user was named there. Their collections show here when you "
        + "log in with a token made for that user."));
    return;
  }
  const arg = path.match(re)[1];
  await page(main, { collection: current, arg: arg === undefined ? undefined : decodeURIComponent(arg) });
}

start().catch((err) => {
  setContent(document.getElementById("main"), notice(`Something went wrong: ${problem(err)}`, "error"));
});
