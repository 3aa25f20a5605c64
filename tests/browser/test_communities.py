"""The community view in a real browser: the list, one community's members and report, each finding's cited
facts opening their source sentences in the source panel, hostile text shown as text, a removal's stale mark."""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import RETRACTED_NAME, SCRIPTED_ANSWER, Viewer, shoot

pytestmark = pytest.mark.browser


def prepare_home(rt: Any) -> None:
    """The viewer fixture's hook: communities and extractive reports over the corpus and the two extra documents."""
    from provgraph.communities.build import build

    asyncio.run(build(rt.store, rt.librarian, llm=None))


def rows(viewer: Viewer) -> list[dict[str, Any]]:
    response = viewer.api.get(f"/collections/{viewer.collection}/communities")
    response.raise_for_status()
    found: list[dict[str, Any]] = response.json()
    return found


def detail(viewer: Viewer, iri: str) -> dict[str, Any]:
    response = viewer.api.get(f"/collections/{viewer.collection}/communities/{quote(iri, safe='')}")
    response.raise_for_status()
    found: dict[str, Any] = response.json()
    return found


def naming(viewer: Viewer, word: str) -> dict[str, Any]:
    """The community whose members name ``word``, read through the API."""
    for row in rows(viewer):
        one = detail(viewer, row["id"])
        if any(word in m["label"] for m in one["members"]):
            return one
    raise AssertionError(f"no community has a member naming {word!r}")


def line(labels: list[str]) -> str:
    """A fact as the page writes it: an IRI standing in for a label shows its last segment (dom.js pretty)."""
    return "(" + ", ".join(re.split(r"[/#]", t)[-1] if re.fullmatch(r"https?://\S+", t) else t for t in labels) + ")"


def test_the_list_links_each_community_and_a_finding_opens_its_facts_sentences(page: Any, viewer: Viewer) -> None:
    listed = rows(viewer)
    assert len(listed) > 5 and {r["level"] for r in listed} == {0, 1}
    page.goto(viewer.page_url("/communities"))
    table = page.locator("table.communities tbody tr")
    expect(table).to_have_count(len(listed))
    expect(table.locator("td:nth-child(2)")).to_have_text([r["title"] for r in listed])
    expect(page.locator("nav a.current")).to_have_text("Communities")
    shoot(viewer, page, "communities")

    largest = listed[0]
    table.first.locator("td").first.locator("a").click()
    expect(page.locator("main h1")).to_have_text(largest["title"])
    expect(page.locator("nav a.current")).to_have_text("Communities")  # a community's page is in the section
    one = detail(viewer, largest["id"])
    report = one["report"]
    expect(page.locator("#community-head")).to_have_text(
        f"{one['label']} · level 0 · {one['entities']} entities · {one['facts']} facts")
    expect(page.locator("section.report p.summary")).to_have_text(report["summary"])
    expect(page.locator("p.central a")).to_have_text([e["label"] for e in report["central_entities"]])
    findings = page.locator("ol.findings > li.finding")
    expect(findings.locator("p.finding-text")).to_have_text([f["text"] for f in report["findings"]])
    assert one["children"], "the top community is split below"
    expect(page.locator("p.related a")).to_have_count(len(one["children"]))
    expect(page.locator("ul.member-entities a")).to_have_count(len(one["members"]))
    expect(page.locator("ul.member-facts li")).to_have_count(len(one["member_facts"]))

    # every cited fact of the first finding opens the sentence its first source records, marked in its chunk
    first = report["findings"][0]
    buttons = findings.first.locator("button.fact-button")
    expect(buttons).to_have_text([line(f["labels"]) for f in first["facts"]])
    for i, fact in enumerate(first["facts"]):
        assert fact["stored"] and fact["sources"], fact
        buttons.nth(i).click()
        panel = page.locator("#source-panel")
        expect(panel.locator("p.edge-line")).to_have_text(line(fact["labels"]))
        evidence = fact["sources"][0]["evidence"]
        expect(panel.locator("mark.evidence")).to_have_text(evidence["text"])
        assert panel.locator("mark.evidence").get_attribute("data-offset") == str(evidence["offset"])
        expect(panel.locator("dd a").first).to_have_text(fact["sources"][0]["title"])
        more = len(fact["sources"]) - 1
        expect(panel.locator("ul.sources li")).to_have_count(more)
    shoot(viewer, page, "community")

    page.locator("p.related a").first.click()  # down to a sub-community and back up through its parent link
    expect(page.locator("#community-head")).to_contain_text("level 1")
    page.locator("p.related a", has_text=one["label"]).click()
    expect(page.locator("main h1")).to_have_text(largest["title"])


def stored(viewer: Viewer, sid: str) -> dict[str, Any]:
    response = viewer.api.get(f"/collections/{viewer.collection}/traces/{sid}", params={"provenance": "true"})
    response.raise_for_status()
    trace: dict[str, Any] = response.json()
    return trace


def own_sentence(citation: dict[str, Any]) -> dict[str, Any]:
    """The source of a global citation whose sentence is its finding's (the one the panel opens first)."""
    flat = " ".join(citation["finding_text"].split())
    return next(s for f in citation["facts"] for s in f["sources"]
                if s["evidence"] and " ".join(s["evidence"]["text"].split()) == flat)


def test_a_global_question_shows_its_map_and_each_marker_opens_its_findings_sentence(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/"))
    page.fill("#question", "What are the main themes?")
    page.check("input[name=mode][value=global-rag]")
    page.click("#ask")
    expect(page.locator("#final .answer-text")).to_have_text("".join(SCRIPTED_ANSWER))  # the scripted reduce
    expect(page.locator("#final")).to_have_attribute("data-citations", "1")  # the stored trace read back
    href = page.locator("#final a[href^='/traces/']").get_attribute("href")
    sid = href.split("?")[0].removeprefix("/traces/")
    trace = stored(viewer, sid)
    assert trace["type"] == "Global" and len(trace["citations"]) == 1
    assert page.locator("#steps > li").evaluate_all("items => items.map(li => li.dataset.step)") == ["question", "map"]
    page.locator("#steps-summary").click()
    reports = page.locator("#steps li.step-map ol.map-reports > li")
    expect(reports.locator("a")).to_have_text([r["title"] for r in trace["map"]["reports"]])
    page.click("#final a.cite")
    expect(page.locator("#source-panel h2")).to_have_text("Source [1]")
    expect(page.locator("#source-panel mark.evidence")).to_have_text(own_sentence(trace["citations"][0])["evidence"]["text"])
    shoot(viewer, page, "ask-global")


def test_a_stored_global_answer_without_an_llm_walks_citation_finding_fact_sentence(page: Any, viewer: Viewer) -> None:
    final = viewer.ask("global-rag", "What are the main themes?", llm="none")
    trace = stored(viewer, final["session_id"])
    citations = trace["citations"]
    assert len(citations) >= 2 and all(f["stored"] for c in citations for f in c["facts"])
    page.goto(viewer.page_url(f"/traces/{final['session_id']}"))
    expect(page.locator("main h1")).to_have_text("What are the main themes?")
    expect(page.locator(".step-map ol.map-reports > li")).to_have_count(len(trace["map"]["reports"]))
    expect(page.locator(".step-synthesis .answer-text")).to_have_text(trace["answer"])
    expect(page.locator("ol.citations > li")).to_have_count(len(citations))
    for i, citation in enumerate(citations):
        page.locator("ol.citations > li button").nth(i).click()
        expect(page.locator("#source-panel h2")).to_have_text(f"Source {citation['marker']}")
        expect(page.locator("#source-panel mark.evidence")).to_have_text(own_sentence(citation)["evidence"]["text"])
    shoot(viewer, page, "trace-global")
    page.locator(".step-map ol.map-reports a").first.click()  # a report used leads to its community's page
    expect(page.locator("main h1")).to_have_text(trace["map"]["reports"][0]["title"])


def test_hostile_member_text_and_findings_show_as_characters(page: Any, viewer: Viewer) -> None:
    mallory = naming(viewer, "Mallory")
    texts = [f["text"] for f in mallory["report"]["findings"]]
    assert any("<script>" in t for t in texts), texts  # the scripted document's markup reached a finding
    page.goto(viewer.page_url(f"/communities/{quote(mallory['id'], safe='')}"))
    expect(page.locator("p.finding-text")).to_have_text(texts)
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("main script, main img, main b, main i").count() == 0


def test_removing_a_document_marks_its_community_stale_in_both_pages(page: Any, viewer: Viewer) -> None:
    comet = naming(viewer, "Halley")
    assert not comet["report"]["stale"]
    document = f"urn:doc:{RETRACTED_NAME}"
    response = viewer.api.delete(f"/collections/{viewer.collection}/documents/{quote(document, safe='')}")
    response.raise_for_status()
    stale = {r["id"] for r in rows(viewer) if r["stale"]}
    assert comet["id"] in stale
    page.goto(viewer.page_url("/communities"))
    row = page.locator(f"table.communities tbody tr[data-community='{comet['id']}']")
    expect(row.locator(".tag.warn")).to_have_text("stale")
    expect(page.locator("table.communities .tag.warn")).to_have_count(len(stale))
    row.locator("a").first.click()
    expect(page.locator("section.report .banner.stale")).to_contain_text("Stale report.")
    # the removed document's facts are no longer stored: the findings say so instead of opening a sentence
    expect(page.locator("li.cited-fact .tag.warn").first).to_have_text("no longer stored")
    page.locator("button.fact-button").first.click()
    expect(page.locator("#source-panel .notice.warn")).to_have_text("Its source was retracted.")


def test_an_unknown_community_says_so_in_a_browser_users_words(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/communities/" + quote("urn:provgraph:community:nobody", safe="")))
    expect(page.locator("main .notice.error")).to_have_text(
        "Community urn:provgraph:community:nobody is not in this collection.")
    assert "provgraph " not in page.locator("main").text_content()
