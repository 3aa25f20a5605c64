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

async function postJson(path, body) {
  const response = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: headers({ Accept: "application/json", "Content-Type": "application/json" }),
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

const seg = encodeURIComponent;

export const api = {
  collections: () => getJson("/collections"),
  documents: (collection) => getJson(`/collections/${seg(collection)}/documents`),
  provenance: (collection, doc) => getJson(`/collections/${seg(collection)}/provenance/${seg(doc)}`),
  record: (collection, id) => getJson(`/collections/${seg(collection)}/records/${seg(id)}`),
  traces: (collection) => getJson(`/collections/${seg(collection)}/traces`, { all: "true" }),
  trace: (collection, sid) => getJson(`/collections/${seg(collection)}/traces/${seg(sid)}`, { provenance: "true" }),
  sparql: (collection, query) => postJson(`/collections/${seg(collection)}/sparql`, { query }),

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
