"""Browser tests: Debian's Chromium, driven by Playwright, against a real ``provgraph serve`` process.

One server per test module on a free loopback port, over a data directory holding the sample corpus
and a hostile document, with tokens enabled; its LLM is a scripted OpenAI-compatible server
(tests/fakes) whose answer can be held back, so a test sees what arrives before it.
Screenshots go to ``$VIEWER_SCREENSHOTS`` (``make screenshots`` sets docs/screenshots), else to
a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.corpus_fixture import COLLECTION
from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply, chat, chat_stream

CHROMIUM = Path(os.environ.get("VIEWER_CHROMIUM", "/usr/bin/chromium"))  # another path: tests of this rule
IN_CI = os.environ.get("CI", "").lower() == "true"
if not CHROMIUM.exists():  # .ci/run installs it; a developer machine may not have it yet
    if IN_CI:  # CI must run them: every browser test fails instead of skipping (tests/services.py does the same)
        pytest.fail("CI must run the browser tests: Debian's chromium is not installed (apt-get install chromium)",
                    pytrace=False)
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)
if IN_CI:
    import playwright.sync_api as sync_api
else:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")

sync_api.expect.set_options(timeout=30_000)  # a shared 2-core machine can be slow; nothing here is timed
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
HOSTILE_NAME = "hostile.txt"
HOSTILE_TEXT = (
    'Mallory <img src=x onerror="window.__pwned=1;alert(1)"> notes\n\n'
    "Mallory Widgets is a company that makes widgets.\n"
    '<script>window.__pwned = 2; alert("script")</script> Mallory Widgets sells widgets in Paris.\n'
    "Mallory Widgets hired Bob in 2020. \U0001F600 Bob founded the <b>widget</b> lab & the <i>gadget</i> lab.\n"
)
RETRACTED_NAME = "comet.txt"  # removed by the stale-trace test
RETRACTED_TEXT = "Edmond Halley predicted the return of the comet.\nHalley's Comet returns every 76 years.\n"
SCRIPTED_ANSWER = ["Marie Curie discovered ", "polonium and radium ", "[1]."]
AGENT_ANSWER = "Marie Curie discovered polonium."
# what the scripted extraction LLM finds in uploaded texts: (subject, predicate, object, the sentence stating it)
KNOWN_FACTS = [
    ("Zebulon Pike", "explored", "Colorado", "Zebulon Pike explored Colorado in 1806."),
    ("Pikes Peak", "named after", "Zebulon Pike", "Pikes Peak was named after Zebulon Pike."),
    ("Zebulon Pike", "met", "Osage chiefs", "On the way Zebulon Pike met the Osage chiefs."),
    ("William Clark", "mapped", "Missouri River", "William Clark mapped the Missouri River in 1805."),
]
FLAKY_WORD = "Missouri"  # a chunk naming it fails extraction while ScriptedLlm.flaky is set


@dataclass
class ScriptedLlm:
    """The fake LLM's script: selects listed edges, streams a fixed answer, can hold the answer back."""

    server: FakeOpenAIServer
    gate: threading.Event | None = None
    keyword: str = "polonium"  # edge selection picks the edges naming it
    flaky: bool = False  # extraction of a chunk naming FLAKY_WORD answers garbage
    answer: Any = None  # a function (synthesis prompt) -> answer pieces, else SCRIPTED_ANSWER
    extraction_gate: threading.Event | None = None  # relationships of a chunk naming FLAKY_WORD wait for it
    refuse: bool = False  # every chat request is refused as a wrong API key is (HTTP 401)

    def hold_extraction(self) -> threading.Event:
        """Hold the relationship extraction of chunks naming FLAKY_WORD until the returned event is set."""
        self.extraction_gate = threading.Event()
        return self.extraction_gate

    def hold(self) -> threading.Event:
        """Hold the next answers back until the returned event is set."""
        self.gate = threading.Event()
        return self.gate

    def release(self) -> None:
        for gate in (self.gate, self.extraction_gate):
            if gate is not None:
                gate.set()
        self.gate = self.extraction_gate = None

    def respond(self, request: Recorded) -> Reply | None:
        body = request.body if isinstance(request.body, dict) else {}
        if not request.path.endswith("/chat/completions"):
            return None
        if self.refuse:
            return Reply(status=401, body={"error": {"message": "Incorrect API key provided.",
                                                     "type": "invalid_request_error", "code": "invalid_api_key"}})
        messages = body.get("messages", [])
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        if body.get("stream"):
            reply = chat_stream(self.answer(prompt) if self.answer else SCRIPTED_ANSWER)
            reply.gate = self.gate
            return reply
        if "You are a research agent" in prompt:
            return chat(json.dumps(self._agent_step(messages)))
        if prompt.startswith("You extract relationships"):
            reply = chat("the model wandered off and wrote no JSON") if self.flaky and FLAKY_WORD in prompt else chat(
                json.dumps({"relationships": [
                    {"subject": s, "predicate": p, "object": o, "object_is_literal": False, "quote": q}
                    for s, p, o, q in KNOWN_FACTS if q in prompt]}))
            if FLAKY_WORD in prompt:
                reply.gate = self.extraction_gate
            return reply
        if prompt.startswith("You extract definitions"):
            return chat(json.dumps({"definitions": []}))
        if prompt.startswith("Rate how much this community report helps"):  # global-rag's map: finding 1 of each
            return chat(json.dumps({"score": 80, "answer": "This community is one theme.", "findings": [1]}))
        ids = re.findall(r"^([0-9a-f]{8}): (.*)$", prompt, flags=re.M)
        if ids:
            named = [i for i, line in ids if self.keyword in line.lower()]
            wanted = named + [i for i, _ in ids if i not in named]  # those naming the keyword first
            lines = [json.dumps({"id": i, "reasoning": f"scripted: names polonium ({n + 1})"})
                     for n, i in enumerate(wanted[:3])]
            return chat("\n".join(lines))
        return chat(json.dumps({"concepts": ["Marie Curie", "polonium"]}))

    @staticmethod
    def _agent_step(messages: list[dict[str, Any]]) -> dict[str, Any]:
        """First a knowledge-query, then the final answer."""
        if not any(str(m.get("content", "")).startswith("Observation") for m in messages):
            return {"thought": "The graph should know who found polonium.", "action": "knowledge-query",
                    "arguments": {"question": "Who discovered polonium?"}, "final_answer": None}
        return {"thought": "The observation answers it.", "action": None, "arguments": None,
                "final_answer": AGENT_ANSWER}


@dataclass
class Viewer:
    """The running server: its URL, a valid token, the data directory, the scripted LLM."""

    url: str
    token: str
    home: Path
    llm: ScriptedLlm
    shots: Path
    collection: str = COLLECTION
    api: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.api = httpx.Client(base_url=self.url + "/api/v1", headers={"Authorization": f"Bearer {self.token}"},
                                timeout=60)

    def page_url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.url}{path}{sep}collection={self.collection}"

    def ask(self, kind: str, question: str, **options: Any) -> dict[str, Any]:
        """Ask through the API without streaming; the final message."""
        response = self.api.post(f"/{kind}", json={"collection": self.collection, "question": question, **options})
        response.raise_for_status()
        final: dict[str, Any] = response.json()["final"]
        return final


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise RuntimeError(f"provgraph serve exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/api/v1/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"provgraph serve did not answer: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def viewer(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           _corpus_home: Path) -> Iterator[Viewer]:
    """A real ``provgraph serve`` over the corpus plus the hostile document, tokens enabled. A test module's
    ``prepare_home(runtime)``, if it has one, runs on the data directory before the server starts."""
    from provgraph.api.tokens import TokenStore
    from provgraph.config import load_settings
    from provgraph.runtime import Runtime

    root = tmp_path_factory.mktemp("viewer")
    home = root / "home"
    shutil.copytree(_corpus_home, home)  # the session's loaded corpus, built once for every test
    (root / HOSTILE_NAME).write_text(HOSTILE_TEXT, encoding="utf-8")
    (root / RETRACTED_NAME).write_text(RETRACTED_TEXT, encoding="utf-8")
    with Runtime(load_settings(home=str(home), collection=COLLECTION, llm="none")) as rt:
        import asyncio

        chunks = [c for name in (HOSTILE_NAME, RETRACTED_NAME) for c in rt.loader().load_file(root / name).chunks]
        asyncio.run(rt.extraction().run(chunks))
        prepare = getattr(request.module, "prepare_home", None)
        if prepare is not None:
            prepare(rt)
    _, token = TokenStore(home).create("default")
    shots = Path(os.environ.get("VIEWER_SCREENSHOTS") or root / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    with FakeOpenAIServer() as fake:
        llm = ScriptedLlm(fake)
        fake.script = llm.respond
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
        env.update(PROVGRAPH_HOME=str(home), PROVGRAPH_LLM_BASE_URL=fake.base_url, PROVGRAPH_LLM_MODEL="fake-model",
                   PROVGRAPH_LLM_MAX_RETRIES="0")
        log = root / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(Path(sys.executable).with_name("provgraph")), "serve", "--host", "127.0.0.1", "--port", str(port)],
                env=env, stdout=out, stderr=subprocess.STDOUT,
            )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_ready(url, proc, log)
            viewer = Viewer(url, token, home, llm, shots)
            yield viewer
            viewer.api.close()
        finally:
            llm.release()
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def browser(viewer: Viewer) -> Iterator[Any]:
    """Chromium for one test module: Playwright's sync API keeps an event loop running in this
    thread while it is open, so it must close before other tests call ``asyncio.run``."""
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class Watch:
    """What the page did that it must not: dialogs, uncaught errors, CSP violations."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)


@pytest.fixture
def watch() -> Watch:
    return Watch()


def new_page(browser: Any, viewer: Viewer, watch: Watch, *, logged_in: bool, width: int = 1300) -> Any:
    """A browser tab (holding the token when ``logged_in``) that records dialogs, page errors and CSP violations."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    if logged_in:
        context.add_init_script(f"sessionStorage.setItem('provgraph.token', {json.dumps(viewer.token)})")
    page = context.new_page()
    page.set_default_timeout(30_000)

    def on_dialog(dialog: Any) -> None:
        watch.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda exc: watch.errors.append(str(exc)))
    page.on("console", lambda msg: watch.csp.append(msg.text)
            if msg.type == "error" and "Content Security Policy" in msg.text else None)
    return page


@pytest.fixture
def page(browser: Any, viewer: Viewer, watch: Watch) -> Iterator[Any]:
    """A fresh browser tab holding the token; fails the test on any dialog, page error or CSP violation."""
    tab = new_page(browser, viewer, watch, logged_in=True)
    yield tab
    tab.context.close()
    assert (watch.dialogs, watch.errors, watch.csp) == ([], [], [])


@pytest.fixture
def anonymous_page(browser: Any, viewer: Viewer, watch: Watch) -> Iterator[Any]:
    """A fresh browser tab without a token."""
    tab = new_page(browser, viewer, watch, logged_in=False)
    yield tab
    tab.context.close()
    assert (watch.dialogs, watch.errors, watch.csp) == ([], [], [])


def shoot(viewer: Viewer, page: Any, name: str) -> Path:
    """Write a full-page screenshot ``name.png``."""
    path = viewer.shots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


GRAPH_LABELS = """async (id) => {
  const g = await import('/static/js/graph.js');
  const cy = g.graphOf(document.getElementById(id));
  const boxes = [];
  let smallest = Infinity;
  cy.nodes().forEach((n) => {
    const b = g.labelBox(n);
    if (!b) return;
    boxes.push([n.data('label'), b]);
    smallest = Math.min(smallest, parseFloat(n.style('font-size')) * cy.zoom());
  });
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, b] = [boxes[i][1], boxes[j][1]];
    if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) overlaps.push([boxes[i][0], boxes[j][0]]);
  }
  const edgeLabels = cy.edges().filter((e) => e.style('label')).length;
  return { nodes: cy.nodes().length, labelled: boxes.length, smallest_px: smallest, overlaps, edgeLabels };
}"""


def graph_labels(page: Any, container: str) -> dict[str, Any]:
    """The graph drawn in element ``container`` once drawn: node count, labels shown, their smallest size on
    screen and any two that overlap; fails unless the labels are readable (11.5 px and up) and apart."""
    page.wait_for_function(
        "async (id) => (await import('/static/js/graph.js')).graphOf(document.getElementById(id)) !== null", arg=container)
    got: dict[str, Any] = page.evaluate(GRAPH_LABELS, container)
    assert got["smallest_px"] >= 11.5, got
    assert got["overlaps"] == [], got
    return got


__all__ = ["Viewer", "Watch", "shoot", "HOSTILE_NAME", "HOSTILE_TEXT", "RETRACTED_NAME", "SCRIPTED_ANSWER",
           "AGENT_ANSWER", "KNOWN_FACTS", "FLAKY_WORD", "new_page", "graph_labels"]
