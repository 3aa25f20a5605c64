// The knowledge graph's communities: a list by level, and one community with its members, its report's
// findings and each finding's cited facts, whose source sentences open in the source panel.

import { api } from "../api.js";
import { h, link, notice, pretty, problem, setContent } from "../dom.js";
import { showEdge, sourcePanel } from "../source.js";

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const communityPath = (id) => `/communities/${encodeURIComponent(id)}`;
const entityPath = (iri) => `/explore/${encodeURIComponent(iri)}`;
const factLine = (labels) => `(${labels.map(pretty).join(", ")})`;

export async function communitiesPage(main, { collection, arg }) {
  if (arg) return communityPage(main, collection, arg);
  setContent(main, h("h1", {}, `Communities · ${collection}`), notice("Loading the communities…"));
  let rows;
  try {
    rows = await api.communities(collection);
  } catch (err) {
    setContent(main, h("h1", {}, `Communities · ${collection}`), notice(problem(err), "error"));
    return;
  }
  const names = new Map(rows.map((r) => [r.id, r.label]));
  setContent(main, h("h1", {}, `Communities · ${collection}`),
    rows.length
      ? [h("p", { class: "muted" }, `${plural(rows.length, "community", "communities")} on `
        + `${plural(new Set(rows.map((r) => r.level)).size, "level")}; a level's communities split the one above.`),
      h("table", { class: "communities" },
        h("thead", {}, h("tr", {}, ["Community", "Report", "Level", "Part of", "Entities", "Facts"].map((c, i) =>
          h("th", { scope: "col", class: i >= 4 ? "num" : null }, c)))),
        h("tbody", {}, rows.map((r) => h("tr", { dataset: { community: r.id } },
          h("td", {}, link(communityPath(r.id), r.label, { collection }),
            r.stale ? h("span", { class: "tag warn" }, "stale") : null),
          h("td", {}, r.title ?? h("span", { class: "muted" }, "no report yet")),
          h("td", { class: "num" }, String(r.level)),
          h("td", {}, r.parent ? link(communityPath(r.parent), names.get(r.parent) || r.parent, { collection }) : "–"),
          h("td", { class: "num" }, String(r.entities)),
          h("td", { class: "num" }, String(r.facts))))))]
      : notice("No communities in this collection yet: they are found when its communities are built."));
}

async function communityPage(main, collection, ref) {
  setContent(main, notice("Loading the community…"));
  let c;
  let rows;
  try {
    [c, rows] = await Promise.all([api.community(collection, ref), api.communities(collection).catch(() => [])]);
  } catch (err) {
    setContent(main, h("h1", {}, "Community"), notice(problem(err, `Community ${ref}`), "error"),
      h("p", {}, link("/communities", "All communities", { collection })));
    return;
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  const near = (id) => link(communityPath(id), byId.get(id)?.label || id, { collection }, { title: byId.get(id)?.title || null });
  const panel = sourcePanel("Choose a cited fact to see the sentences that state it.");
  const report = c.report;
  document.title = `${c.label} · Communities · provgraph`;
  setContent(main, h("div", { class: "with-panel" },
    h("section", { class: "primary" },
      h("p", { class: "crumbs" }, link("/communities", "Communities", { collection }), " / ", c.label),
      h("h1", {}, report?.title || c.label),
      h("p", { class: "muted", id: "community-head" },
        `${c.label} · level ${c.level} · ${plural(c.entities, "entity", "entities")} · ${plural(c.facts, "fact")}`),
      c.parent || c.children.length
        ? h("p", { class: "related" }, c.parent ? ["Part of ", near(c.parent), c.children.length ? ". " : ""] : null,
          c.children.length ? ["Split into ", c.children.map((id, i) => [i ? ", " : "", near(id)])] : null)
        : null,
      report ? reportSection(report, collection, panel) : notice("No report yet: it is written when the communities are built."),
      membersSection(c, collection)),
    panel));
}

function reportSection(report, collection, panel) {
  return h("section", { class: "report", "aria-labelledby": "report-heading" },
    h("h2", { id: "report-heading" }, "Report"),
    report.stale
      ? h("div", { class: "banner stale", role: "alert" }, h("strong", {}, "Stale report. "),
        "Facts of this community changed since it was written; it is rewritten at the next build.")
      : null,
    h("p", { class: "summary" }, report.summary),
    h("p", { class: "muted" }, report.model ? `Written by ${report.model} from the member facts.`
      : "Extractive: the most central entities and the most representative cited sentences (no LLM)."),
    report.central_entities.length
      ? h("p", { class: "central" }, "Most central: ", report.central_entities.map((e, i) =>
        [i ? ", " : "", link(entityPath(e.entity), e.label, { collection })]))
      : null,
    h("h3", {}, `Findings (${report.findings.length})`),
    h("ol", { class: "findings" }, report.findings.map((f) => h("li", { class: "finding", dataset: { rank: String(f.rank) } },
      h("p", { class: "finding-text" }, f.text),
      h("ul", { class: "cited-facts", "aria-label": "Facts this finding cites" }, f.facts.map((fact) => citedFact(fact, collection, panel)))))));
}

function citedFact(fact, collection, panel) {
  const [s, p, o] = fact.labels.map(pretty);
  const edge = { labels: { s, p, o }, sources: fact.sources };
  const count = fact.sources.length;
  return h("li", { class: "cited-fact" },
    h("button", { type: "button", class: "link-button fact-button", onclick: () => showEdge(panel, collection, edge, { retracted: !fact.stored }) },
      factLine(fact.labels)),
    h("span", { class: "muted" }, ` ${count ? plural(count, "source sentence") : "no source"}`),
    fact.stored ? null : h("span", { class: "tag warn" }, "no longer stored"));
}

function membersSection(c, collection) {
  const more = (shown, total) => (total > shown ? ` (the first ${shown} of ${total})` : ` (${total})`);
  return h("section", { class: "members", "aria-labelledby": "members-heading" },
    h("h2", { id: "members-heading" }, "Members"),
    h("h3", {}, `Entities${more(c.members.length, c.entities)}`),
    h("ul", { class: "member-entities" }, c.members.map((m) => h("li", {}, link(entityPath(m.entity), m.label, { collection })))),
    h("h3", {}, `Facts${more(c.member_facts.length, c.facts)}`),
    h("ul", { class: "member-facts" }, c.member_facts.map((f) => h("li", {}, factLine(f.labels)))));
}
