// The public API, and the only module that knows its paths. The token lives in sessionStorage.

import { readEvents } from "./sse.js";

const BASE = "/api/v1";
const TOKEN_KEY = "provgraph.token";
const COLLECTION_KEY = "provgraph.collection";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY) || "",
  setToken: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
  collection: () => new URLSearchParams(location.search).get("collection") || sessionStorage.getItem(COLLECTION_KEY) || "",
  setCollection: (name) => sessionStorage.setItem(COLLECTION_KEY, name),
};

function headers(extra = {}) {
  const token = session.token();
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    message = body?.error?.message || body?.detail || message;
    if (typeof message !== "string") message = JSON.stringify(message);
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, message);
}

async function getJson(path, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  const q = query.toString();
  const response = await fetch(`${BASE}${path}${q ? `?${q}` : ""}`, { headers: headers({ Accept: "application/json" }) });
  if (!response.ok) throw await failure(response);
  return response.json();
}

async function send(method, path, body = undefined) {
  const json = body !== undefined && !(body instanceof FormData);
  const response = await fetch(`${BASE}${path}`, {
    method,
    headers: headers(json ? { Accept: "application/json", "Content-Type": "application/json" } : { Accept: "application/json" }),
    body: json ? JSON.stringify(body) : body,
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

const postJson = (path, body) => send("POST", path, body);

const seg = encodeURIComponent;

export const api = {
  collections: () => getJson("/collections"),
  whoami: () => getJson("/whoami"),
  documents: (collection) => getJson(`/collections/${seg(collection)}/documents`),
  provenance: (collection, doc) => getJson(`/collections/${seg(collection)}/provenance/${seg(doc)}`),
  record: (collection, id) => getJson(`/collections/${seg(collection)}/records/${seg(id)}`),
  traces: (collection) => getJson(`/collections/${seg(collection)}/traces`, { all: "true" }),
  trace: (collection, sid) => getJson(`/collections/${seg(collection)}/traces/${seg(sid)}`, { provenance: "true" }),
  conversations: (collection) => getJson(`/collections/${seg(collection)}/conversations`),
  conversation: (collection, id) => getJson(`/collections/${seg(collection)}/conversations/${seg(id)}`),
  sparql: (collection, query) => postJson(`/collections/${seg(collection)}/sparql`, { query }),
  entities: (collection, q, limit = 20) => getJson(`/collections/${seg(collection)}/entities`, { q, limit }),
  entity: (collection, iri) => getJson(`/collections/${seg(collection)}/entities/${seg(iri)}`),
  communities: (collection) => getJson(`/collections/${seg(collection)}/communities`),
  community: (collection, id) => getJson(`/collections/${seg(collection)}/communities/${seg(id)}`),
  chunkFacts: (collection, chunk) => getJson(`/collections/${seg(collection)}/facts`, { chunk }),
  removal: (collection, doc) => getJson(`/collections/${seg(collection)}/removal/${seg(doc)}`),
  remove: (collection, doc) => send("DELETE", `/collections/${seg(collection)}/documents/${seg(doc)}`),
  jobs: (collection) => getJson("/jobs", { collection }),
  job: (id) => getJson(`/jobs/${seg(id)}`),
  retry: (id) => send("POST", `/jobs/${seg(id)}/retry`),

  /** Upload files (a File list) into a collection: the load job. */
  upload(collection, files) {
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    return send("POST", `/collections/${seg(collection)}/documents`, form);
  },

  /** A job's state at each change until it ends (the server's SSE stream). */
  async *watchJob(id, signal) {
    const response = await fetch(`${BASE}/jobs/${seg(id)}`, { headers: headers({ Accept: "text/event-stream" }), signal });
    if (!response.ok) throw await failure(response);
    yield* readEvents(response.body);
  },

  /** Ask a question; yields each stream message (as `--format json` prints them) as it arrives. */
  async *ask(kind, collection, question, signal) {
    const response = await fetch(`${BASE}/${kind}`, {
      method: "POST",
      headers: headers({ Accept: "text/event-stream", "Content-Type": "application/json" }),
      body: JSON.stringify({ collection, question }),
      signal,
    });
    if (!response.ok) throw await failure(response);
    yield* readEvents(response.body);
  },
};
