"""The community view in a real browser: the list, one community's members and report, each finding's cited
facts opening their source sentences in the source panel, hostile text shown as text, a removal's stale mark."""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import RETRACTED_NAME, Viewer, shoot

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
