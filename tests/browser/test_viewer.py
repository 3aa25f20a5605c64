"""The trace viewer in a real browser: live steps, stored traces, evidence, hostile text, keyboard, login."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import expect

from provgraph.agent.react import NO_LLM_MESSAGE

from tests.browser.conftest import (
    AGENT_ANSWER,
    HOSTILE_NAME,
    HOSTILE_TEXT,
    RETRACTED_NAME,
    SCRIPTED_ANSWER,
    Viewer,
    Watch,
    graph_labels,
    new_page,
    shoot,
)

pytestmark = pytest.mark.browser
HOSTILE_DOC = f"urn:doc:{HOSTILE_NAME}"
NEWCOMER_FILES = [("first-notes.txt", "Ada Lovelace wrote the first program.\n"),
                  ("second-notes.txt", "Charles Babbage designed the Analytical Engine.\n")]


def doc_path(iri: str) -> str:
    return "/documents/" + quote(iri, safe="")


def record_text(viewer: Viewer, record: str) -> str:
    response = viewer.api.get(f"/collections/{viewer.collection}/records/{quote(record, safe='')}")
    response.raise_for_status()
    text: str = response.json()["text"]
    return text


def stored_trace(viewer: Viewer, sid: str) -> dict[str, Any]:
    response = viewer.api.get(f"/collections/{viewer.collection}/traces/{sid}", params={"provenance": "true"})
    response.raise_for_status()
    trace: dict[str, Any] = response.json()
    return trace


def test_the_answer_comes_first_with_the_steps_folded_below_and_streamed_live(page: Any, viewer: Viewer) -> None:
    gate = viewer.llm.hold()  # the scripted LLM keeps the answer until the test has looked
    page.goto(viewer.page_url("/"))
    page.fill("#question", "Who discovered polonium?")
    page.check("input[name=mode][value=graph-rag]")
    page.click("#ask")
    summary = page.locator("#steps-summary")
    # folded, yet each step arrives as it is written: the focus is the last before the held answer
    expect(summary).to_have_attribute("data-latest", "focus")
    assert page.locator("#steps-box").get_attribute("open") is None
    assert page.locator("#final").count() == 0
    assert page.locator("#steps").get_attribute("data-state") == "running"
    steps = page.locator("#steps > li").evaluate_all("items => items.map(li => li.dataset.step)")
    assert steps == ["question", "ranking", "exploration", "focus"]  # graph-rag's steps, in the order written
    expect(summary).to_have_text(f"Steps ({len(steps)}) · latest: focus")
    summary.click()
    focus = page.locator("#steps > li.step-focus")
    expect(focus).to_be_visible()
    # the scripted reasons differ only by a number: one kind, written once, named on each edge
    expect(focus.locator("dl.reason-kinds dd")).to_have_text(["scripted: names polonium (…)"])
    expect(focus.locator("td.reason").first).to_have_text("A")
    shoot(viewer, page, "ask-live")

    gate.set()
    expect(page.locator("#final .answer-text")).to_have_text("".join(SCRIPTED_ANSWER))
    expect(page.locator("#steps")).to_have_attribute("data-state", "done")  # the stream closes after the answer
    order = page.evaluate("document.querySelector('#answer').compareDocumentPosition(document.querySelector('#steps-box'))")
    assert order & 4, "the answer stands above the steps"  # DOCUMENT_POSITION_FOLLOWING
    assert page.locator("#steps > li.step-synthesis").count() == 0
    page.click("#final a.cite")
    expect(page.locator("#source-panel mark.evidence")).to_have_count(1)
    expect(page.locator("#source-panel h2")).to_have_text("Source [1]")
    shoot(viewer, page, "ask")

    page.fill("#question", "Where was the Radium Institute?")
    gate = viewer.llm.hold()
    page.click("#ask")  # a new question: nothing of the previous answer's sources stays in the panel
    expect(page.locator("#source-panel")).to_have_text("SourceChoose an edge or a citation to see the text behind it.")
    assert page.locator("#answer").text_content() == ""
    gate.set()
    expect(page.locator("#final .answer-text")).to_have_text("".join(SCRIPTED_ANSWER))


def test_no_llm_reasons_are_written_once_per_kind_not_per_edge(page: Any, viewer: Viewer) -> None:
    sid = viewer.ask("graph-rag", "Who discovered polonium?", llm="none")["session_id"]
    edges = stored_trace(viewer, sid)["focus"]["edges"]
    assert len(edges) > 3 and all("(no LLM configured)" in e["reasoning"] for e in edges)
    page.goto(viewer.page_url(f"/traces/{sid}"))
    focus = page.locator(".step-focus")
    expect(focus.locator("tbody tr")).to_have_count(len(edges))
    assert focus.text_content().count("(no LLM configured)") == 1
    kinds = focus.locator("td.reason").all_text_contents()
    assert set(kinds) <= set("ABCDEFGH") and len(kinds) == len(edges)


def test_the_top_bar_fits_a_narrow_window(browser: Any, viewer: Viewer, watch: Watch) -> None:
    sid = viewer.ask("graph-rag", "Who discovered polonium?", llm="none")["session_id"]
    narrow = new_page(browser, viewer, watch, logged_in=True, width=420)
    try:
        for path in ["/", "/traces", f"/traces/{sid}", "/documents", doc_path("urn:doc:polonium_and_radium.md"),
                     "/explore", "/explore/" + quote("urn:provgraph:entity:marie%20curie", safe=""), "/conversations",
                     "/communities"]:
            narrow.goto(viewer.page_url(path))
            expect(narrow.locator("#logout")).to_be_visible()
            narrow.wait_for_load_state("networkidle")  # the page's content drawn, not only the bar
            expect(narrow.locator("main h1")).to_be_visible()
            expect(narrow.locator("#user")).to_have_text("User default")  # the token's user, in the bar too
            widths = narrow.evaluate("[document.documentElement.scrollWidth, document.getElementById('topbar').scrollWidth,"
                                     " document.getElementById('topbar').clientWidth]")
            assert widths[0] <= 420 and widths[1] <= widths[2], (path, widths)
            box = narrow.locator("#logout").bounding_box()
            assert box is not None and box["x"] + box["width"] <= 420
        shoot(viewer, narrow, "ask-narrow")
    finally:
        narrow.context.close()


def test_error_pages_speak_to_a_browser_user_not_a_cli_user(page: Any, viewer: Viewer) -> None:
    cases = {"/traces/no-such-trace": "Trace no-such-trace is not in this collection.",
             "/documents/" + quote("urn:doc:missing.txt", safe=""): "Document urn:doc:missing.txt is not in this collection.",
             "/explore/" + quote("urn:provgraph:entity:nobody", safe=""): "Entity urn:provgraph:entity:nobody is not in this collection."}
    for path, message in cases.items():
        page.goto(viewer.page_url(path))
        expect(page.locator("main .notice.error")).to_have_text(message)
        assert "provgraph " not in page.locator("main").text_content()
    other = viewer.api.post("/collections", json={"name": "empty-one"})
    assert other.status_code == 201
    page.goto(viewer.url + "/traces?collection=nope")  # an unknown collection falls back to one that exists
    expect(page.locator("main h1")).to_have_text(f"Traces · {viewer.collection}")
    page.goto(viewer.url + "/login")
    assert "provgraph " not in page.locator("main").text_content()


def test_a_failing_llm_is_told_in_a_browser_users_words(page: Any, viewer: Viewer) -> None:
    viewer.llm.refuse = True
    try:
        page.goto(viewer.page_url("/"))
        page.fill("#question", "Who discovered polonium?")
        page.click("#ask")  # GraphRAG answers without its LLM, and says so
        expect(page.locator("#final .answer-text")).to_contain_text("polonium")
        refused = r"openai provider at \S+, model fake-model: HTTP 401: Incorrect API key provided\. \(a setting of this server"
        expect(page.locator("#final .warnings .notice.warn")).to_have_text([
            re.compile(f"^edge selection fell back to similarity: the LLM's edge selection failed: {refused}"),
            re.compile(f"^synthesis fell back to an extractive answer: the LLM's answer failed: {refused}")])
        expect(page.locator("#run-status")).to_have_text("Done, with 2 warnings: see under the answer.")
        page.fill("#question", "Who discovered polonium?")
        page.check("input[name=mode][value=agent]")  # the agent cannot answer without its LLM
        page.click("#ask")
        status = page.locator("#run-status .notice.error")
        # the cause as the server says it; its advice (check PROVGRAPH_LLM_API_KEY) is for whoever runs it
        expect(status).to_have_text(re.compile(
            r"^ModelError: openai provider at \S+, model fake-model: HTTP 401: Incorrect API key provided\."
            r" \(a setting of this server: whoever runs it can change it\)$"))
    finally:
        viewer.llm.refuse = False
    advice = {  # the server's messages, as a browser user reads them
        "collection x does not exist (create it with: provgraph collections create)": "collection x does not exist",
        NO_LLM_MESSAGE: "the agent needs an LLM (a setting of this server: whoever runs it can change it)",
        "index broken: move it aside and run: provgraph check --repair": "The server refused the request.",
        "no LLM (set PROVGRAPH_LLM_GGUF_PATH)": "no LLM (a setting of this server: whoever runs it can change it)",
    }
    script = "async (ms) => { const d = await import('/static/js/dom.js'); return ms.map((m) => d.problem(new Error(m))); }"
    assert page.evaluate(script, list(advice)) == list(advice.values())


def test_a_new_user_without_collections_is_sent_to_upload_not_to_the_cli(
        browser: Any, viewer: Viewer, watch: Watch) -> None:
    from provgraph.api.tokens import TokenStore

    _, token = TokenStore(viewer.home).create("newcomer")
    tab = new_page(browser, viewer, watch, logged_in=False)
    try:
        tab.context.add_init_script(f"sessionStorage.setItem('provgraph.token', {token!r})")
        tab.goto(viewer.url + "/")
        expect(tab.locator("main h1")).to_have_text("No collection yet")
        # the token trap: which user this token is, and whose the collections loaded from the command line are
        expect(tab.locator("#user")).to_have_text("User newcomer")
        expect(tab.locator("#who")).to_have_text(
            "You are signed in as user newcomer, who has no documents yet. Upload some to ask questions about them.")
        expect(tab.locator("main p.muted")).to_contain_text("belong to user “default” unless another user was named")
        assert "provgraph " not in tab.locator("main").text_content()
        tab.click("main a >> text=Upload some")
        expect(tab.locator("main h1")).to_have_text("Documents · default")
        expect(tab.locator("#document-list")).to_have_text("No documents yet: add some above.")
        expect(tab.locator("#user")).to_have_text("User newcomer")
        files = [{"name": name, "mimeType": "text/plain", "buffer": text.encode()} for name, text in NEWCOMER_FILES]
        tab.set_input_files("#files", files=files)  # "choose files", several at once
        expect(tab.locator("article.job").first).to_have_attribute("data-status", "done")
        expect(tab.locator("table.documents tbody tr")).to_have_count(len(files))
        # loaded for the token's user, not into user default's collections
        uploaded = {f"urn:doc:{n}" for n, _ in NEWCOMER_FILES}
        mine = httpx.get(f"{viewer.url}/api/v1/collections/default/documents",
                         headers={"Authorization": f"Bearer {token}"}).json()
        assert {d["id"] for d in mine} == uploaded
        for c in viewer.api.get("/collections").json():
            assert c["user"] == "default"
            response = viewer.api.get(f"/collections/{c['collection']}/documents")
            assert response.status_code == 404 or not {d["id"] for d in response.json()} & uploaded, c
    finally:
        tab.context.close()


def test_times_and_kind_names_read_the_same_on_every_page(page: Any, viewer: Viewer) -> None:
    sid = viewer.ask("document-rag", "Where was the Radium Institute?", llm="none")["session_id"]
    started = stored_trace(viewer, sid)["question"]["started"]
    shown = started[:10] + " " + started[11:19] + " UTC"
    page.goto(viewer.page_url("/traces"))
    row = page.locator("table.traces tbody tr", has=page.locator(f"td.mono:text-is('{sid}')"))
    expect(row.locator("td").nth(1)).to_have_text("Document RAG")
    expect(row.locator("td").nth(2)).to_have_text(shown)
    page.goto(viewer.page_url(f"/traces/{sid}"))
    expect(page.locator("main > .with-panel p.muted").first).to_have_text(f"Document RAG · {shown} · {sid}")
    expect(page.locator(".step-question .step-body p")).to_have_text(f"Document RAG · {shown}")
    page.goto(viewer.page_url("/documents"))
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    # the table is filled by a fetch after the page loads: wait for its first row before reading them all
    expect(page.locator("table.documents tbody tr td:nth-child(6)").first).to_have_text(stamp)
    loaded = page.locator("table.documents tbody tr td:nth-child(6)").all_text_contents()
    assert loaded and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", t) for t in loaded)


def test_graph_labels_are_readable_and_do_not_overlap_at_the_default_zoom(page: Any, viewer: Viewer) -> None:
    sid = viewer.ask("graph-rag", "What did Marie Curie discover?", llm="none")["session_id"]
    page.goto(viewer.page_url(f"/traces/{sid}"))
    expect(page.locator("#graph canvas").first).to_be_attached()
    got = graph_labels(page, "graph")
    assert got["nodes"] > 10 and got["labelled"] >= 5
    shoot(viewer, page, "trace")


def test_document_rag_lists_the_retrieved_chunks_each_opening_its_text(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/"))
    page.fill("#question", "Where was the Radium Institute?")
    page.check("input[name=mode][value=document-rag]")
    page.click("#ask")
    expect(page.locator("#final .answer-text")).to_have_text("".join(SCRIPTED_ANSWER))
    sid = page.locator("#final a >> text=/^[0-9a-f-]{36}$/").text_content()
    retrieved = [c["source"]["chunk"] for c in stored_trace(viewer, sid)["exploration"]["chunks"] if c["source"]]
    assert len(retrieved) > 1
    page.click("#steps-summary")
    chunks = page.locator("#steps > li.step-exploration ul.sources button")
    expect(chunks).to_have_count(len(retrieved))  # once the stored trace is read back, in retrieval order
    shown = page.locator("#source-panel blockquote")
    for i, chunk in enumerate(retrieved):  # each listed chunk opens its own text, whatever the ranking
        chunks.nth(i).click()
        expect(shown).to_have_attribute("data-chunk", chunk)
        assert shown.text_content() == record_text(viewer, chunk)
    shoot(viewer, page, "ask-document-rag")


def ranked_passages_open_their_text(page: Any, viewer: Viewer, card: Any, passages: list[dict[str, Any]]) -> None:
    """The ranking card lists ``passages`` in rank order, each with its rank, each opening its own chunk's text."""
    buttons = card.locator("ul.sources button")
    expect(buttons).to_have_count(len(passages))
    shown = page.locator("#source-panel blockquote")
    for i, p in enumerate(passages):
        expect(card.locator("ul.sources .marker").nth(i)).to_contain_text(f"#{p['rank']}")
        buttons.nth(i).click()
        expect(shown).to_have_attribute("data-chunk", p["source"]["chunk"])
        assert shown.text_content() == record_text(viewer, p["source"]["chunk"])


def test_the_ranking_step_lists_its_best_passages_each_opening_its_text(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/"))
    page.fill("#question", "Who discovered polonium?")
    page.check("input[name=mode][value=graph-rag]")
    page.click("#ask")
    expect(page.locator("#final[data-citations]")).to_have_count(1)  # the stored trace is read back
    sid = page.locator("#final a >> text=/^[0-9a-f-]{36}$/").text_content()
    ranked = stored_trace(viewer, sid)["ranking"]["passages"]
    passages = [p for p in ranked if p["source"]]
    assert 1 < len(passages) <= len(ranked) <= 5  # the ranking step records the five best
    page.click("#steps-summary")
    ranking = page.locator("#steps > li.step-ranking")
    expect(ranking.locator("h3")).to_have_text(f"Ranked {len(ranked)} passages")
    ranked_passages_open_their_text(page, viewer, ranking, passages)
    shoot(viewer, page, "ask-ranking")

    page.goto(viewer.page_url(f"/traces/{sid}"))
    ranked_passages_open_their_text(page, viewer, page.locator("ol.steps > li.step-ranking"), passages)


def test_agent_iterations_show_their_sub_traces_live_and_stored(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/"))
    page.fill("#question", "Who discovered polonium?")
    page.check("input[name=mode][value=agent]")
    page.click("#ask")
    expect(page.locator("#final .answer-text")).to_have_text(AGENT_ANSWER)
    page.click("#steps-summary")
    iteration = page.locator("#steps > li.step-analysis").first
    expect(iteration).to_contain_text("Action: knowledge-query")
    nested = iteration.locator("ol.subtrace > li").evaluate_all("items => items.map(li => li.dataset.step)")
    assert nested == ["question", "ranking", "exploration", "focus", "synthesis"]  # the knowledge-query's GraphRAG
    expect(iteration.locator(".observation")).to_have_text(f"Observation: {''.join(SCRIPTED_ANSWER)}")
    shoot(viewer, page, "ask-agent")

    page.click("#final a >> text=/^[0-9a-f-]{36}$/")
    stored = page.locator("ol.steps > li.step-analysis").first
    expect(stored.locator("details.subtrace")).to_contain_text("GraphRAG sub-trace")
    expect(page.locator("li.step-conclusion .answer-text")).to_have_text(AGENT_ANSWER)
    shoot(viewer, page, "trace-agent")


def test_clicking_an_edge_highlights_the_text_at_its_recorded_offsets(page: Any, viewer: Viewer) -> None:
    sid = viewer.ask("graph-rag", "Who discovered polonium?", llm="none")["session_id"]
    trace = stored_trace(viewer, sid)
    edge = next(e for e in trace["focus"]["edges"] if e["sources"])
    source = edge["sources"][0]
    text = record_text(viewer, source["chunk"])
    evidence = source.get("evidence")
    expected = text[evidence["offset"]:evidence["offset"] + evidence["length"]] if evidence else text

    page.goto(viewer.page_url(f"/traces/{sid}"))
    page.click(f".step-focus tr[data-edge='{edge['index']}'] .edge-button")
    mark = page.locator("#source-panel mark.evidence")
    expect(mark).to_have_count(1)
    assert mark.text_content() == expected
    assert page.locator("#source-panel blockquote").text_content() == text
    link = page.locator("#source-panel dd a")
    expect(link).to_have_attribute("href", f"{doc_path(source['document'])}?collection={viewer.collection}")
    expect(page.locator("#graph canvas").first).to_be_attached()


def test_offsets_are_code_points_as_the_store_counts_them(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/traces"))
    text = "a\U0001F600b <c> d"
    got = page.evaluate("async ([t]) => (await import('/static/js/source.js')).splitAt(t, 2, 5)", [text])
    assert got == [text[:2], text[2:7], text[7:]]


def test_links_and_login_redirects_stay_on_the_site(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/traces"))
    hrefs = ["/traces", "#cite-1", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "https://evil.example/",
             "/\t/evil.example/", "/\n/evil.example/", "/\r\n/evil.example/", "/a/\\/evil.example"]
    script = "async (hs) => { const d = await import('/static/js/dom.js'); return hs.map(d.safeHref); }"
    got = page.evaluate(script, hrefs)
    assert got == ["/traces", "#cite-1", "#", "#", "#", "#", "#", "#", "#", "#"]


def test_a_hostile_document_renders_as_inert_text(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url(doc_path(HOSTILE_DOC)))
    page.click("li.chunk > button.chunk-button >> nth=0")
    panel = page.locator("#source-panel blockquote")
    expect(panel).to_be_visible()
    shown = panel.text_content()
    assert shown == record_text(viewer, page.locator("#source-panel blockquote").get_attribute("data-chunk"))
    assert '<img src=x onerror="window.__pwned=1;alert(1)">' in shown
    assert '<script>window.__pwned = 2; alert("script")</script>' in shown
    assert shown in HOSTILE_TEXT
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main img, main script, main b, main i").count() == 0
    shoot(viewer, page, "hostile-document")

    sid = viewer.ask("document-rag", "What does Mallory Widgets sell?", llm="none")["session_id"]
    page.goto(viewer.page_url(f"/traces/{sid}"))
    answer = page.locator(".step-synthesis .answer-text")
    # the extractive answer quotes the document's sentences (the markup sentence itself is not picked since
    # answers prefer whole prose sentences); the page built from the hostile document still runs nothing
    expect(answer).to_contain_text("Mallory Widgets")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main img, main script, main b, main i").count() == 0


def test_a_stale_trace_shows_what_was_retracted(page: Any, viewer: Viewer) -> None:
    sid = viewer.ask("graph-rag", "Who predicted the return of the comet?", llm="none")["session_id"]
    assert stored_trace(viewer, sid)["stale"] is False
    document = f"urn:doc:{RETRACTED_NAME}"
    response = viewer.api.delete(f"/collections/{viewer.collection}/documents/{quote(document, safe='')}")
    response.raise_for_status()
    trace = stored_trace(viewer, sid)
    assert trace["stale"] is True
    gone = [e for e in trace["focus"]["edges"] if e.get("retracted")]

    page.goto(viewer.page_url(f"/traces/{sid}"))
    banner = page.locator(".banner.stale")
    expect(banner).to_contain_text("Stale trace.")
    expect(banner.locator("li").first).to_contain_text(document)
    assert page.locator(".step-focus tr.retracted").count() == len(gone) > 0
    shoot(viewer, page, "trace-stale")


def test_trace_list_searches_by_question_and_date(page: Any, viewer: Viewer) -> None:
    viewer.ask("document-rag", "Where was the Radium Institute?", llm="none")
    viewer.ask("graph-rag", "Who discovered polonium?", llm="none")
    page.goto(viewer.page_url("/traces"))
    rows = page.locator("table.traces tbody tr")
    expect(rows.first).to_be_visible()
    shoot(viewer, page, "traces")
    page.fill("#search", "radium INSTITUTE")
    page.click("form.filters button[type=submit]")
    questions = rows.locator("td:first-child a").all_text_contents()
    assert questions and all("Radium Institute" in q for q in questions)
    page.fill("#search", "")
    page.fill("#to", "2000-01-01")
    page.click("form.filters button[type=submit]")
    expect(page.locator("#trace-results")).to_have_text("No trace matches.")


def test_a_conversation_reads_as_a_thread_with_each_turns_trace(page: Any, viewer: Viewer) -> None:
    questions = ["Who discovered polonium?", "Where was she born?", "Which laboratory did she direct?"]
    sids = [viewer.ask("graph-rag", q, llm="none", conversation="thread-1")["session_id"] for q in questions]
    page.goto(viewer.page_url("/conversations"))
    expect(page.locator("#conversations a", has_text="thread-1")).to_be_visible()
    page.click("#conversations a:text('thread-1')")
    turns = page.locator("#thread article.turn")
    expect(turns).to_have_count(3)
    for n, question in enumerate(questions):
        expect(turns.nth(n).locator("p.question")).to_have_text(f"Q: {question}")
        expect(turns.nth(n).locator("ol.citations li").first).to_contain_text("[1]")
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"  # as on every other page
    expect(turns.nth(0).locator("p.muted").first).to_have_text(re.compile(f"^GraphRAG · {stamp}$"))
    expect(turns.nth(1).locator("p.rewrite")).to_have_text(
        "Answered as: Where was Marie Curie born? (with Marie Curie from turn 1)")
    expect(turns.nth(1).locator("p.answer")).to_contain_text("Warsaw")
    shoot(viewer, page, "conversation")
    turns.nth(2).locator("a", has_text="Trace of this turn").click()
    expect(page).to_have_url(re.compile(f"/traces/{sids[2]}"))
    expect(page.locator("main h1")).to_have_text("Which laboratory did Marie Curie direct?")


def test_document_view_shows_the_provenance_tree(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url("/documents"))
    page.click("table.documents a >> text=Ernest Rutherford and the nature of radiation")
    expect(page.locator("h1")).to_have_text("Ernest Rutherford and the nature of radiation")
    parts = page.locator("ul.tree > li.part summary").all_text_contents()
    assert [p.split(" characters")[0] for p in parts] == ["Page 1", "Page 2", "Page 3", "Page 4"]
    assert page.locator("ul.tree li.chunk ul.edges-list li").count() > 0
    page.click("ul.tree li.chunk > button.chunk-button >> nth=1")
    expect(page.locator("#source-panel h2")).to_have_text("Page 2 · chunk 1")
    expect(page.locator("#source-panel dd").nth(1)).to_contain_text("Page 2")
    shoot(viewer, page, "document")


def test_every_chunk_of_a_sectioned_document_has_its_own_name(page: Any, viewer: Viewer) -> None:
    tree = viewer.api.get(f"/collections/{viewer.collection}/provenance/polonium_and_radium.md").json()
    assert len(tree["parts"]) > 2 and {c["index"] for p in tree["parts"] for c in p["chunks"]} == {1}  # per section
    page.goto(viewer.page_url(doc_path("urn:doc:polonium_and_radium.md")))
    buttons = page.locator("ul.tree li.chunk > button.chunk-button")
    expect(buttons).to_have_count(sum(len(p["chunks"]) for p in tree["parts"]))
    names = buttons.all_text_contents()
    assert len(set(names)) == len(names), names
    assert names[0] == f"“{tree['parts'][0]['label']}” · chunk 1"


def test_a_document_view_edge_opens_the_sentence_it_was_extracted_from(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.page_url(doc_path("urn:doc:polonium_and_radium.md")))
    chunk = page.locator("ul.tree li.chunk").nth(1)
    edge = chunk.locator("ul.edges-list button.edge-button").first
    label = edge.text_content()
    edge.click()
    expect(page.locator("#source-panel h2")).to_have_text("Source of the edge")
    expect(page.locator("#source-panel .edge-line")).to_have_text(label)
    mark = page.locator("#source-panel mark.evidence")
    expect(mark).to_have_count(1)
    assert "whole" not in (mark.get_attribute("class") or "")  # a sentence, not the whole chunk
    text = record_text(viewer, page.locator("#source-panel blockquote").get_attribute("data-chunk"))
    offset, length = int(mark.get_attribute("data-offset")), int(mark.get_attribute("data-length"))
    assert mark.text_content() == text[offset:offset + length] and 0 < length < len(text)


def test_login_keeps_the_token_for_the_tab_only(anonymous_page: Any, viewer: Viewer) -> None:
    page = anonymous_page
    page.goto(viewer.page_url("/traces"))
    page.wait_for_url("**/login?next=*")
    page.fill("#token", "pgt_not-a-token")
    page.click("form.login button[type=submit]")
    expect(page.locator("form.login .notice.error")).to_have_text("That token is not valid.")
    shoot(viewer, page, "login")
    page.fill("#token", viewer.token)
    page.click("form.login button[type=submit]")
    expect(page.locator("h1")).to_have_text(f"Traces · {viewer.collection}")
    for hostile in ("/\\evil.example/x", "/\t/evil.example/"):
        page.evaluate("sessionStorage.clear()")
        page.goto(viewer.url + "/login?next=" + quote(hostile, safe=""))  # /%09/evil.example/: a tab browsers drop
        page.fill("#token", viewer.token)
        page.click("form.login button[type=submit]")
        page.wait_for_url(viewer.url + "/")
    assert page.evaluate("sessionStorage.getItem('provgraph.token')") == viewer.token
    assert page.evaluate("localStorage.length") == 0
    page.click("#logout")
    page.wait_for_url("**/login")
    assert page.evaluate("sessionStorage.getItem('provgraph.token')") is None


FOCUSABLE = """() => {
  const els = [...document.querySelectorAll(
    'a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), select, textarea, summary')]
    .filter((e) => e.getClientRects().length > 0);
  const groups = new Map();
  let n = 0;
  for (const e of els) {
    const key = e.type === 'radio' ? `radio:${e.name}` : null;  // Tab enters a radio group once
    if (key && groups.has(key)) { e.dataset.kb = groups.get(key); continue; }
    e.dataset.kb = String(n);
    if (key) groups.set(key, String(n));
    n += 1;
  }
  return n;
}"""


@pytest.mark.parametrize("page_name", ["login", "ask", "traces", "trace", "documents", "document", "explore",
                                       "conversations"])
def test_tab_reaches_every_control(page: Any, viewer: Viewer, page_name: str) -> None:
    paths = {"login": "/login", "ask": "/", "traces": "/traces", "documents": "/documents", "conversations": "/conversations",
             "document": doc_path(HOSTILE_DOC), "explore": "/explore?q=Marie%20Curie"}
    if page_name == "trace":
        paths["trace"] = f"/traces/{viewer.ask('graph-rag', 'Who discovered polonium?', llm='none')['session_id']}"
    page.goto(viewer.page_url(paths[page_name]))
    page.wait_for_load_state("networkidle")
    expect(page.locator("main h1")).to_be_visible()
    count = page.evaluate(FOCUSABLE)
    assert count >= 2
    reached: set[str] = set()
    for _ in range(2 * count + 5):
        page.keyboard.press("Tab")
        kb = page.evaluate("document.activeElement ? (document.activeElement.dataset.kb ?? null) : null")
        if kb is not None:
            reached.add(kb)
        if len(reached) == count:
            break
    assert reached == {str(i) for i in range(count)}


def test_pages_and_assets_carry_a_csp_without_inline_scripts(viewer: Viewer) -> None:
    for path in ["/", "/login", "/traces/some-id", "/documents/urn%3Adoc%3Ax", "/static/js/main.js", "/static/app.css"]:
        response = httpx.get(viewer.url + path)
        assert response.status_code == 200, path
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert httpx.get(viewer.url + "/static/js/main.js").headers["content-type"].startswith("text/javascript")


def test_the_csp_stops_a_script_injected_into_the_page(page: Any, viewer: Viewer, watch: Watch) -> None:
    page.goto(viewer.page_url("/traces"))
    expect(page.locator("main h1")).to_be_visible()
    inject = ("() => { const s = document.createElement('script');"
              " s.textContent = 'window.__inline = 1'; document.body.append(s); }")
    with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        page.evaluate(inject)
    assert page.evaluate("window.__inline") is None
    assert watch.csp
    watch.csp.clear()  # the one violation this test provoked


def test_the_api_page_works_offline_under_its_csp(page: Any, viewer: Viewer) -> None:
    elsewhere: list[str] = []

    def only_this_server(route: Any) -> None:
        if route.request.url.startswith(viewer.url + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(viewer.url + "/api/v1/docs")
    expect(page.locator(".opblock").first).to_be_visible()
    assert page.locator(".opblock").count() >= 25
    page.locator(".opblock-summary").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    assert elsewhere == []  # the page fixture fails the test on any CSP violation or page error
