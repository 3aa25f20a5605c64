"""The whole workflow in a real browser: upload → watch the load (a failed chunk extraction, its reason,
a retry) → ask → every citation marker opens its own sentence → remove (what it retracts, confirmed)
→ the trace is stale; and the graph explorer: search → entity → its facts' sources → expand."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import FLAKY_WORD, KNOWN_FACTS, Viewer, graph_labels, shoot

pytestmark = pytest.mark.browser
PIKE = ("pike.txt", " ".join(q for s, _, _, q in KNOWN_FACTS if "Pike" in q) + "\n")
CLARK = ("clark.md", f"# William Clark\n\n{KNOWN_FACTS[3][3]}\n")
assert FLAKY_WORD in CLARK[1] and FLAKY_WORD not in PIKE[1]
QUESTION = "What did Zebulon Pike do?"


def pike_answer(prompt: str) -> list[str]:
    """An answer quoting each Pike sentence, each followed by the marker the prompt gives its fact."""
    pieces = []
    for s, p, o, sentence in KNOWN_FACTS[:3]:
        found = re.search(rf"- {re.escape(s)} \| {re.escape(p)} \| {re.escape(o)} (\[\d+\])", prompt)
        assert found, prompt
        pieces.append(f"{sentence[:-1]} {found.group(1)}. ")
    return pieces


def drop(page: Any, selector: str, files: list[tuple[str, str]]) -> None:
    """Drop files on an element, as a user dragging them from the desktop does."""
    transfer = page.evaluate_handle(
        "(files) => { const dt = new DataTransfer();"
        " for (const [name, text] of files) dt.items.add(new File([text], name, { type: 'text/plain' }));"
        " return dt; }", files)
    page.dispatch_event(selector, "drop", {"dataTransfer": transfer})


def marks_of_each_citation(page: Any, count: int) -> list[str]:
    """Click each of the ``count`` markers of the answer in turn; the sentence the source panel marks for each."""
    shown = []
    markers = page.locator(".answer-text a.cite")
    expect(markers).to_have_count(count)
    for i in range(markers.count()):
        markers.nth(i).click()
        expect(page.locator("#source-panel .cited-line q")).to_have_count(1)
        mark = page.locator("#source-panel mark.evidence")
        expect(mark).to_have_count(1)
        expect(page.locator("#source-panel h2")).to_have_text(f"Source {markers.nth(i).text_content()}")
        shown.append(mark.text_content())
    return shown


def test_upload_watch_retry_ask_cite_remove_and_the_trace_goes_stale(page: Any, viewer: Viewer) -> None:
    viewer.llm.flaky, viewer.llm.keyword, viewer.llm.answer = True, "pike", pike_answer
    held = viewer.llm.hold_extraction()  # Clark's relationships wait: the job is seen while it runs
    page.goto(viewer.page_url("/documents"))
    drop(page, "#drop", [PIKE, CLARK])
    job = page.locator("article.job").first
    expect(job).to_have_attribute("data-status", "running")
    clark = job.locator("tr[data-file='clark.md']")
    expect(clark.locator("td.doc-status")).to_have_text("extracting")
    expect(clark.locator("td.num").first).to_have_text(re.compile(r"^[01] / 2$"))  # definitions, relationships
    assert job.locator("li.failure").count() == 0 and job.locator("button.retry").count() == 0
    held.set()  # the same page follows the job to its end, without a reload
    expect(job).to_have_attribute("data-status", "done")
    rows = job.locator("table.job-documents tbody tr")
    expect(rows).to_have_count(2)
    expect(job.locator("tr[data-file='pike.txt'] td.doc-status")).to_have_text("loaded")
    expect(job.locator("tr[data-file='clark.md'] td.doc-status")).to_have_text("partly extracted")
    failure = job.locator("li.failure")
    expect(failure).to_have_count(1)  # the relationships extraction of Clark's one chunk; definitions worked
    expect(failure).to_contain_text("(kg-extract-relationships)")
    expect(failure.locator(".reason")).to_contain_text("model output is not JSON")
    shoot(viewer, page, "documents-job")

    viewer.llm.flaky = False
    job.locator("button.retry").click()
    again = page.locator("article.job").first
    expect(again.locator("h3")).to_contain_text("Retry of a load")
    expect(again).to_have_attribute("data-status", "done")
    expect(again.locator("tr[data-file='clark.md'] td.doc-status")).to_have_text("loaded")
    assert again.locator("li.failure").count() == 0
    expect(page.locator("table.documents tr[data-document='urn:doc:pike.txt']")).to_have_count(1)

    page.goto(viewer.page_url("/"))
    page.fill("#question", QUESTION)
    page.click("#ask")
    final = page.locator("#final[data-citations]")
    expect(final).to_have_attribute("data-citations", "3")
    sentences = [q for _, _, _, q in KNOWN_FACTS[:3]]
    markers = page.locator("#final a.cite").all_text_contents()
    assert len(markers) == 3 and len(set(markers)) < 3  # one chunk cited thrice: the same marker repeats
    assert marks_of_each_citation(page, 3) == sentences  # each marker its own sentence, not its number's first
    shoot(viewer, page, "ask-citations")
    sid = page.locator("#final a >> text=/^[0-9a-f-]{36}$/").text_content()

    page.goto(viewer.page_url(f"/traces/{sid}"))
    assert marks_of_each_citation(page, 3) == sentences

    page.goto(viewer.page_url("/documents"))
    remove = page.locator("tr[data-document='urn:doc:pike.txt'] button.remove")
    dialog = page.locator("dialog#confirm-remove")
    remove.click()
    dialog.locator("#confirm-no").click()  # cancelled: nothing removed
    expect(dialog).to_be_hidden()
    assert viewer.api.get(f"/collections/{viewer.collection}/documents/pike.txt").status_code == 200
    remove.click()
    expect(dialog.locator(".stale-count")).to_contain_text("1 stored trace become stale")
    expect(dialog.locator("ul.stale-traces a")).to_have_text([QUESTION])
    expect(dialog.locator("ul.retracts")).to_contain_text("1 chunk")
    shoot(viewer, page, "documents-remove")
    dialog.locator("#confirm-yes").click()
    expect(page.locator("#documents-status")).to_contain_text("1 trace marked stale")
    expect(page.locator("tr[data-document='urn:doc:pike.txt']")).to_have_count(0)
    assert viewer.api.get(f"/collections/{viewer.collection}/documents/pike.txt").status_code == 404

    page.goto(viewer.page_url(f"/traces/{sid}"))
    expect(page.locator(".banner.stale")).to_contain_text("urn:doc:pike.txt removed at")
    assert page.locator(".step-focus tr.retracted").count() == 3
    shoot(viewer, page, "documents")


def test_the_explorer_finds_an_entity_shows_its_facts_sources_and_grows_step_by_step(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/explore"))
    page.fill("#entity-search", "polonum")  # misspelt: found by spelling
    page.press("#entity-search", "Enter")
    hit = page.locator("#entity-results li", has_text="polonium").first
    expect(hit.locator(".tag")).to_have_text("spelled alike")
    page.fill("#entity-search", "curie")  # a word of their names: found by keyword
    page.press("#entity-search", "Enter")
    named = page.locator("#entity-results li", has_text="Marie Curie").first
    expect(named.locator(".tag")).to_have_text("keyword")
    assert all("curie" in t.lower() for t in page.locator("#entity-results li button").all_text_contents()[:2])
    page.fill("#entity-search", "Marie Curie")
    page.press("#entity-search", "Enter")
    first = page.locator("#entity-results li").first
    expect(first.locator("button")).to_have_text("Marie Curie")
    expect(first.locator(".tag")).to_have_text("named")
    first.locator("button").click()

    expect(page.locator("#entity h2")).to_have_text("Marie Curie")
    assert "/explore/" in page.url
    detail = viewer.api.get(f"/collections/{viewer.collection}/entities/"
                            + quote("urn:provgraph:entity:marie%20curie", safe="")).json()
    facts = page.locator("#entity table.facts-table tbody tr")
    expect(facts).to_have_count(len(detail["facts"]))
    row = next(i for i, f in enumerate(detail["facts"]) if f["sources"] and f["sources"][0]["evidence"])
    facts.nth(row).locator("button.fact-sources").click()
    source = detail["facts"][row]["sources"][0]
    mark = page.locator("#source-panel mark.evidence")
    expect(mark).to_have_text(source["evidence"]["text"])
    expect(page.locator("#source-panel blockquote")).to_have_attribute("data-chunk", source["chunk"])
    shoot(viewer, page, "explore")

    canvas = page.locator("#explore-graph")
    before = int(canvas.get_attribute("data-entities") or 0)
    assert before > 1  # the entity and its neighbours
    assert graph_labels(page, "explore-graph")["labelled"] >= 2  # readable, apart, at the fitted zoom
    neighbour = page.locator("#entity ul.neighbours li").first
    neighbour.locator("button.expand").click()
    expect(neighbour.locator("button.expand")).to_have_text("Expanded")
    assert int(canvas.get_attribute("data-entities") or 0) > before
    graph_labels(page, "explore-graph")  # laid out again: still readable and apart
    name = neighbour.locator("button.open-entity").text_content()
    neighbour.locator("button.open-entity").click()
    expect(page.locator("#entity h2")).to_have_text(name)
    page.go_back()
    expect(page.locator("#entity h2")).to_have_text("Marie Curie")
