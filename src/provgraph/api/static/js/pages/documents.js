// The documents of a collection: upload (drop or choose several files), each load job as it runs
// (per document, with every failed chunk extraction and its reason, and a retry), and removal after
// showing what it would retract.

import { api } from "../api.js";
import { h, link, notice, problem, setContent, when } from "../dom.js";
import { traceLink } from "../steps.js";

export async function documentsPage(main, { collection }) {
  const list = h("div", { id: "document-list", "aria-live": "polite" }, notice("Loading documents…"));
  const jobs = h("div", { id: "jobs", class: "jobs", "aria-live": "polite" });
  const status = h("div", { id: "documents-status", class: "status-line", role: "status" });
  const confirm = h("dialog", { id: "confirm-remove", class: "confirm", "aria-labelledby": "confirm-title" });
  const view = { collection, list, jobs, status, confirm, watched: new Set() };
  setContent(main, h("h1", {}, `Documents · ${collection}`), uploadForm(view), status, jobs,
    h("h2", {}, "In this collection"), list, confirm);
  await Promise.all([showDocuments(view), showRecentJobs(view)]);
}

function uploadForm(view) {
  const input = h("input", { id: "files", type: "file", multiple: true, class: "file-input" });
  const zone = h("div", { id: "drop", class: "dropzone", tabindex: "0", role: "group", "aria-label": "Drop files to upload" },
    h("p", {}, "Drop files here (text, Markdown, HTML, PDF), or ",
      h("label", { for: "files", class: "file-label" }, "choose files"), "."),
    input);
  const send = (files) => { if (files.length) upload(view, [...files]); };
  input.addEventListener("change", () => { send(input.files); input.value = ""; });
  zone.addEventListener("dragover", (ev) => { ev.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (ev) => {
    ev.preventDefault();
    zone.classList.remove("over");
    send(ev.dataTransfer?.files || []);
  });
  zone.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); input.click(); } });
  return h("section", { class: "upload", "aria-label": "Upload documents" }, h("h2", {}, "Add documents"), zone);
}

async function upload(view, files) {
  setContent(view.status, notice(`Uploading ${files.length} file${files.length === 1 ? "" : "s"}…`));
  let job;
  try {
    job = await api.upload(view.collection, files);
  } catch (err) {
    setContent(view.status, notice(`The upload failed: ${problem(err)}`, "error"));
    return;
  }
  setContent(view.status, notice(`Loading ${files.map((f) => f.name).join(", ")}.`));
  watch(view, job);
}

async function showRecentJobs(view) {
  let found = [];
  try {
    found = await api.jobs(view.collection);
  } catch {
    return; // a server without the job list: nothing to show
  }
  for (const job of found.slice(0, 5).reverse()) watch(view, job);
}

/** Show a job and follow it until it ends (the server streams each change). */
async function watch(view, job) {
  if (view.watched.has(job.id)) return;
  view.watched.add(job.id);
  const box = h("article", { class: "job", dataset: { job: job.id } });
  view.jobs.prepend(box);
  renderJob(view, box, job);
  if (job.status === "done" || job.status === "failed") return;
  try {
    for await (const state of api.watchJob(job.id)) renderJob(view, box, state);
  } catch (err) {
    box.append(notice(`Lost track of the job: ${problem(err)}`, "error"));
  }
  await showDocuments(view);
}

const FINISHED = new Set(["loaded", "replaced", "unchanged", "partly extracted", "extraction failed", "failed",
  "interrupted"]);

function renderJob(view, box, job) {
  box.dataset.status = job.status;
  const docs = job.documents || [];
  const failures = docs.flatMap((d) => d.failures || []);
  const interrupted = docs.filter((d) => d.status === "interrupted").length;
  const retry = (job.status === "done" && failures.length) || interrupted
    ? h("button", { type: "button", class: "retry", onclick: async (ev) => {
      ev.currentTarget.disabled = true;
      try {
        watch(view, await api.retry(job.id));
      } catch (err) {
        box.append(notice(`The retry failed: ${problem(err)}`, "error"));
      }
    } }, interrupted ? `Finish ${interrupted} interrupted document${interrupted === 1 ? "" : "s"}`
      : `Retry ${failures.length} failed extraction${failures.length === 1 ? "" : "s"}`)
    : null;
  setContent(box,
    h("h3", {}, job.retry_of ? "Retry of a load" : `Load of ${job.files} file${job.files === 1 ? "" : "s"}`,
      h("span", { class: `tag job-status ${job.status}` }, job.status)),
    h("p", { class: "muted" }, `Chunk extractions ${job.chunks_done} of ${job.chunks}`),
    h("table", { class: "job-documents" },
      h("thead", {}, h("tr", {}, ["File", "Status", "Extractions", "Facts"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, docs.map((d) => h("tr", { dataset: { file: d.file, status: d.status } },
        h("td", {}, d.document && FINISHED.has(d.status) && d.status !== "failed"
          ? link(`/documents/${encodeURIComponent(d.document)}`, d.title || d.file, { collection: view.collection })
          : d.file),
        h("td", { class: "doc-status" }, d.status, d.error ? h("span", { class: "error-text" }, `: ${d.error}`) : null),
        h("td", { class: "num" }, `${d.chunks_done} / ${d.chunks}`),
        h("td", { class: "num" }, String(d.facts)))))),
    failures.length
      ? h("details", { class: "failures", open: true },
        h("summary", {}, `${failures.length} chunk extraction${failures.length === 1 ? "" : "s"} failed`),
        h("ul", {}, failures.map((f) => h("li", { class: "failure" },
          h("span", { class: "mono" }, f.chunk), ` (${f.component}): `, h("span", { class: "reason" }, f.error)))))
      : null,
    (job.errors || []).filter((e) => !e.startsWith("chunk ")).map((e) => notice(e, "error")),
    retry);
}

async function showDocuments(view) {
  let docs;
  try {
    const body = await api.documents(view.collection);
    docs = Array.isArray(body) ? body : body.documents || [];
  } catch (err) {
    if (err.status === 404) docs = []; // a new collection: the first upload creates it
    else {
      setContent(view.list, notice(problem(err), "error"));
      return;
    }
  }
  if (!docs.length) {
    setContent(view.list, notice("No documents yet: add some above."));
    return;
  }
  setContent(view.list, h("table", { class: "documents" },
    h("thead", {}, h("tr", {}, ["Title", "Document", "Type", "Bytes", "Parts", "Loaded", ""].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, docs.map((d) => h("tr", { dataset: { document: d.id } },
      h("td", {}, link(`/documents/${encodeURIComponent(d.id)}`, d.title || d.id, { collection: view.collection })),
      h("td", { class: "mono" }, d.id), h("td", {}, d.mime_type || ""),
      h("td", { class: "num" }, (d.size ?? "").toLocaleString()), h("td", { class: "num" }, String(d.parts ?? "")),
      h("td", {}, when(d.loaded)),
      h("td", {}, h("button", { type: "button", class: "remove", onclick: () => askRemove(view, d) }, "Remove…")))))));
}

/** Show what removing `doc` would retract, and remove it once confirmed. */
async function askRemove(view, doc) {
  const { confirm } = view;
  setContent(confirm, h("h2", { id: "confirm-title" }, `Remove ${doc.title || doc.id}?`), notice("Reading what it would retract…"));
  confirm.showModal();
  let p;
  try {
    p = await api.removal(view.collection, doc.id);
  } catch (err) {
    setContent(confirm, h("h2", { id: "confirm-title" }, "Remove"), notice(problem(err, `Document ${doc.id}`), "error"),
      h("button", { type: "button", onclick: () => confirm.close() }, "Close"));
    return;
  }
  const yes = h("button", { type: "button", id: "confirm-yes", class: "danger" }, "Remove");
  const no = h("button", { type: "button", id: "confirm-no", class: "secondary", onclick: () => confirm.close() }, "Cancel");
  setContent(confirm,
    h("h2", { id: "confirm-title" }, `Remove ${p.title}?`),
    h("ul", { class: "retracts" },
      h("li", {}, `the text of its ${p.chunks} chunk${p.chunks === 1 ? "" : "s"}`),
      h("li", {}, `${p.facts} fact${p.facts === 1 ? "" : "s"} no other document supports`),
      h("li", { class: "stale-count" }, `${p.traces.length} stored trace${p.traces.length === 1 ? "" : "s"} become stale`
        + (p.traces.length ? ` (${p.edges} selected edge${p.edges === 1 ? "" : "s"} lose a source)` : ""))),
    p.sample.length ? h("details", {}, h("summary", {}, "Facts that go"),
      h("ul", {}, p.sample.map((f) => h("li", {}, `(${f.join(", ")})`)), p.facts > p.sample.length ? h("li", {}, `… and ${p.facts - p.sample.length} more`) : null)) : null,
    p.traces.length ? h("details", { open: true }, h("summary", {}, "Traces that become stale"),
      h("ul", { class: "stale-traces" }, p.traces.map((t) => h("li", {}, traceLink(t.session_id, view.collection, t.query || t.session_id))))) : null,
    h("div", { class: "actions" }, yes, no));
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    try {
      const done = await api.remove(view.collection, doc.id);
      confirm.close();
      setContent(view.status, notice(`Removed ${p.title} (${done.quads} quads); ${p.traces.length} trace${p.traces.length === 1 ? "" : "s"} marked stale.`));
    } catch (err) {
      confirm.append(notice(`The removal failed: ${problem(err)}`, "error"));
    }
    await showDocuments(view);
  });
  no.focus();
}
