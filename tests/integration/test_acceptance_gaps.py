"""Acceptance and bad-input items of issues 2–8 that no other test could fail.

Each test names its issue. Tests once marked ``xfail(strict=True)`` pinned bugs since fixed
here: they start passing (and so fail as XPASS) once the bug is fixed — then drop the marker.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from provgraph.config import load_settings
from provgraph.extract.entities import FactBuilder
from provgraph.rdf.ids import document_iri
from provgraph.retrieval.edge_select import edge_id
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.fakes.openai_server import FakeOpenAIServer, by_kind
from tests.unit.retrieval.graph_world import populate

TWO_DOCS = {
    "curie.txt": "Marie Curie discovered polonium in Paris. Pierre Curie worked with Marie Curie.",
    "radium.txt": "Marie Curie discovered polonium in Paris.\n\nRadium glows faintly in the dark.",
}
HOSTILE_Q = 'Who is "Marie" Curie? } ; DROP ALL ; { <urn:x> \'q\' \\ 😀\nsecond line'
UNREACHABLE_LLM = {"PROVGRAPH_LLM_BASE_URL": "http://127.0.0.1:9/v1", "PROVGRAPH_LLM_MODEL": "m"}


def _write(folder: Path, files: dict[str, str]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        out.append(folder / name)
    return out


def _count(collection: str, g: object = None) -> int:
    with Runtime(load_settings(collection=collection), create=False) as rt:
        return rt.store.count(g=g)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def _small_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("small-home")
    files = _write(tmp_path_factory.mktemp("small-files"), TWO_DOCS)
    mp = pytest.MonkeyPatch()
    mp.setenv("PROVGRAPH_HOME", str(home))
    try:
        assert run("load", *map(str, files), "-C", "small").code == 0
    finally:
        mp.undo()
    return home


@pytest.fixture
def small(_small_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A private copy of collection ``small`` (TWO_DOCS, no-LLM extraction); returns its name."""
    home = tmp_path / "small-copy"
    shutil.copytree(_small_home, home)
    monkeypatch.setenv("PROVGRAPH_HOME", str(home))
    return "small"


# ---------------------------------------------------------------- issue 2: store and its CLI


def _import(tmp_path: Path, collection: str, nq: str) -> None:
    f = tmp_path / f"{collection}.nq"
    f.write_text(nq, encoding="utf-8")
    assert run("import", str(f), "-C", collection).code == 0


@pytest.mark.parametrize("update", ["DROP ALL", "DELETE WHERE { ?s ?p ?o }", "INSERT DATA { <urn:x> <urn:y> <urn:z> }",
                                    "CLEAR GRAPH <urn:graph:source>"])
def test_issue2_sparql_command_runs_no_updates(tmp_path: Path, update: str) -> None:
    _import(tmp_path, "c", '<urn:a> <urn:b> "v" .\n<urn:a> <urn:b> "w" <urn:graph:source> .\n')
    r = run("sparql", update, "-C", "c")
    assert r.code == 2 and r.err == ("error: collection default/c: SPARQL is read-only here: this is an update "
                                     "(INSERT, DELETE, LOAD, CLEAR…), not a query; change data with provgraph load, "
                                     "documents remove or import\n")
    assert sorted(run("export", "-C", "c").out.splitlines()) == [
        '<urn:a> <urn:b> "v" .', '<urn:a> <urn:b> "w" <urn:graph:source> .']


SERVICE = "{ SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"  # refused before any parser or connection


@pytest.mark.parametrize("query,fmt", [(f"SELECT * WHERE {SERVICE}", "table"), (f"SELECT * WHERE {SERVICE}", "json"),
                                       (f"SELECT * WHERE {SERVICE}", "csv"),
                                       (f"CONSTRUCT {{ ?s ?p ?o }} WHERE {SERVICE}", "table"), (f"ASK {SERVICE}", "table")])
def test_issue2_a_refused_sparql_query_is_one_line_naming_the_collection(tmp_path: Path, query: str, fmt: str) -> None:
    _import(tmp_path, "c", '<urn:a> <urn:b> "v" .\n')
    r = run("sparql", query, "-C", "c", "--format", fmt)
    assert r.code == 2 and r.out == ""
    assert r.err.startswith("error: collection default/c: ") and "SERVICE is refused" in r.err
    assert r.err.count("\n") == 1


@pytest.mark.parametrize("target", ["missing-dir/out.nq", "a-dir"])
def test_issue2_export_to_an_unwritable_path_is_one_line(tmp_path: Path, target: str) -> None:
    _import(tmp_path, "c", '<urn:a> <urn:b> "v" .\n')
    (tmp_path / "a-dir").mkdir()
    out = tmp_path / target
    r = run("export", "-C", "c", "-o", str(out))
    assert r.code == 2 and r.err.startswith(f"error: {out}: ") and r.err.count("\n") == 1


def test_issue2_import_of_a_directory_says_so(tmp_path: Path) -> None:
    d = tmp_path / "backup.nq"
    d.mkdir()
    r = run("import", str(d), "-C", "c")
    assert r.code == 2 and r.err.startswith(f"error: {d}: ") and "directory" in r.err


MARKUP = "A [/b] B [b]x[/b] [link](u)"  # Rich markup: '[/b]' raises MarkupError, '[b]…' / '[link]' are eaten


def test_issue2_sparql_table_prints_bracketed_literals_verbatim(tmp_path: Path) -> None:
    _import(tmp_path, "c", f'<urn:a> <http://www.w3.org/2000/01/rdf-schema#label> "{MARKUP}" .\n')
    r = run("sparql", "SELECT ?l WHERE { ?s rdfs:label ?l }", "-C", "c")
    assert r.code == 0 and MARKUP in r.out


def test_issue2_collections_isolate_vectors_and_traces_too(small: str) -> None:
    """Same collection name, another user: nothing of ``default/small`` is visible (RAG included)."""
    assert run("graph-rag", "-q", "Who discovered polonium?", "-C", small, "-U", "bob").code == 3
    assert run("collections", "create", small, "-U", "bob").code == 0
    r = run("graph-rag", "-q", "Who discovered polonium?", "-C", small, "-U", "bob")
    assert (r.code, r.out) == (0, "Nothing relevant found: the knowledge graph holds nothing relevant to this question.\n")
    r = run("document-rag", "-q", "Who discovered polonium?", "-C", small, "-U", "bob")
    assert (r.code, r.out) == (0, "No passage in this collection matches the question.\n")
    assert json.loads(run("traces", "list", "-C", small, "--format", "json").out) == []  # bob's traces stay bob's
    assert len(json.loads(run("traces", "list", "-C", small, "-U", "bob", "--format", "json").out)) == 2


# ---------------------------------------------------------------- issue 3: ingestion bad input


def _pdf(path: Path, pages: list[str], password: str | None = None) -> Path:
    from pypdf import PdfReader, PdfWriter
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    for text in pages:
        if text:
            c.drawString(72, 720, text)
        c.showPage()
    c.save()
    data = buf.getvalue()
    if password is not None:
        writer = PdfWriter()
        for page in PdfReader(io.BytesIO(data)).pages:
            writer.add_page(page)
        writer.encrypt(password)
        out = io.BytesIO()
        writer.write(out)
        data = out.getvalue()
    path.write_bytes(data)
    return path


def _nothing_for(name: str, collection: str = "default") -> bool:
    iri = document_iri(name)
    with Runtime(load_settings(collection=collection)) as rt:
        return not rt.librarian.exists(iri.value) and rt.store.count(iri) == 0 and rt.store.count(None, None, iri) == 0


def test_issue3_encrypted_and_textless_pdfs_fail_alone_through_load(tmp_path: Path) -> None:
    locked = _pdf(tmp_path / "locked.pdf", ["Marie Curie discovered polonium."], password="secret")
    scan = _pdf(tmp_path / "scan.pdf", ["", ""])
    good = _write(tmp_path, {"good.txt": "Marie Curie discovered radium."})[0]
    r = run("load", str(locked), str(scan), str(good), "--format", "json")
    assert r.code == 1 and "Traceback" not in r.err
    errors = [line for line in r.err.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {locked}: the PDF is encrypted (password protected); save a decrypted copy first",
        f"error: {scan}: no extractable text on any of its 2 page(s) (a scanned PDF? run OCR first)",
    ]
    assert [d["document"] for d in json.loads(r.out)["documents"]] == ["urn:doc:good.txt"]
    assert _nothing_for("locked.pdf") and _nothing_for("scan.pdf")


def test_issue3_a_folder_named_like_a_file_is_searched_as_a_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.mkdir()
    full = tmp_path / "notes.md"
    _write(full, {"inner.md": "Marie Curie lived in Paris."})
    r = run("load", str(empty), str(full), "--format", "json")
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"error: {empty}: folder has no supported files (.htm, .html, .markdown, .md, .pdf, .text, .txt)")
    assert [d["document"] for d in json.loads(r.out)["documents"]] == ["urn:doc:inner.md"]


def test_issue3_a_file_name_with_brackets_loads(tmp_path: Path) -> None:
    f = _write(tmp_path, {"notes [draft].txt": "Marie Curie discovered polonium."})[0]
    r = run("load", str(f), "--format", "json")
    assert r.code == 0, r.err
    assert [d["document"] for d in json.loads(r.out)["documents"]] == ["urn:doc:notes%20%5Bdraft%5D.txt"]


def test_issue3_same_file_name_in_two_subfolders_is_not_silently_lost(tmp_path: Path) -> None:
    _write(tmp_path / "in" / "a", {"notes.txt": "Marie Curie discovered polonium."})
    _write(tmp_path / "in" / "b", {"notes.txt": "Ernest Rutherford named alpha rays."})
    r = run("load", str(tmp_path / "in"), "--format", "json")
    docs = json.loads(run("documents", "list", "--format", "json").out)
    kept_both = len(docs) == 2
    refused_second = r.code == 1 and any(str(tmp_path / "in" / "b" / "notes.txt") in line
                                         for line in r.err.splitlines() if line.startswith("error: "))
    assert kept_both or refused_second


def test_issue3_documents_show_of_an_unknown_document_names_the_collection(small: str) -> None:
    r = run("documents", "show", "nope", "-C", small)
    assert (r.code, r.err) == (3, f"error: document urn:doc:nope is not in collection default/{small}\n")


@pytest.mark.parametrize("doc_id", ["", "   "])
def test_issue3_blank_document_id_is_refused(tmp_path: Path, doc_id: str) -> None:
    f = _write(tmp_path, {"a.txt": "Marie Curie discovered polonium."})[0]
    r = run("load", str(f), "--id", doc_id)
    assert r.code == 2 and r.err.startswith("error: ")


def test_issue3_concurrency_zero_is_refused(tmp_path: Path) -> None:
    f = _write(tmp_path, {"a.txt": "Marie Curie discovered polonium."})[0]
    r = run("load", str(f), "--concurrency", "0")
    assert r.code == 2


def test_issue3_provenance_prints_the_documented_tree_exactly(tmp_path: Path) -> None:
    f = _write(tmp_path, {"tree.md": "# Curie notes\n\nMarie Curie discovered polonium in 1898.\n\n## Radium\n\n"
                                     "Pierre Curie worked with Marie Curie.\n"})[0]
    assert run("load", str(f)).code == 0
    data = json.loads(run("provenance", "tree.md", "--format", "json").out)
    c1, c2 = (p["chunks"][0]["chunk"] for p in data["parts"])
    assert run("provenance", "tree.md").out == (
        "Curie notes (urn:doc:tree.md, text/markdown)\n"
        "├── Section: Curie notes (chars 0–57)\n"
        f"│   └── Chunk 1 (chars 0–55, {c1})\n"
        "│       └── (Marie Curie, discovered, polonium)\n"
        "└── Section: Radium (chars 57–106)\n"
        f"    └── Chunk 1 (chars 0–48, {c2})\n"
        "        └── (Pierre Curie, worked with, Marie Curie)\n"
    )


@pytest.mark.parametrize("command", [("provenance", "m.md"), ("documents", "list"), ("documents", "show", "m.md")])
def test_issue3_bracketed_titles_print_verbatim(tmp_path: Path, command: tuple[str, ...]) -> None:
    title = "A [/b] B [b]x[/b]"
    f = _write(tmp_path, {"m.md": f"# {title}\n\nMarie Curie discovered polonium in 1898.\n"})[0]
    assert run("load", str(f)).code == 0
    r = run(*command)
    assert r.code == 0 and "A [/b] B" in r.out and "[b]x[/b]" in r.out  # a table may wrap the title


def test_issue3_removing_a_document_keeps_facts_another_document_supports(small: str) -> None:
    q = ("SELECT (COUNT(?sg) AS ?n) WHERE { GRAPH <urn:graph:source> { ?sg tg:contains <<( "
         "<urn:provgraph:entity:marie%20curie> <urn:provgraph:entity:rel/discovered> "
         "<urn:provgraph:entity:polonium> )>> } }")
    fact = ("ASK { <urn:provgraph:entity:marie%20curie> <urn:provgraph:entity:rel/discovered> "
            "<urn:provgraph:entity:polonium> }")
    assert run("sparql", q, "-C", small, "--format", "csv").out.splitlines() == ["n", "2"]
    assert run("documents", "remove", "curie.txt", "-C", small).code == 0
    assert run("sparql", q, "-C", small, "--format", "csv").out.splitlines() == ["n", "1"]
    assert run("sparql", fact, "-C", small).out == "true\n"
    assert run("documents", "remove", "radium.txt", "-C", small).code == 0
    assert run("sparql", fact, "-C", small).out == "false\n"
    assert _count(small, None) == 0  # no fact or label outlives its last supporting document


# ---------------------------------------------------------------- issue 4: configuration


def test_issue4_config_show_masks_mcp_server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_MCP_SERVERS", json.dumps(
        [{"name": "gh", "command": ["gh-mcp"], "env": {"GITHUB_TOKEN": "ghp_topsecret"}}]))
    r = run("config", "show", "--format", "json")
    assert r.code == 0 and "ghp_topsecret" not in r.out


def test_issue4_config_show_masks_credentials_in_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_LLM_BASE_URL", "http://user:hunter2@llm.local:8000/v1")
    r = run("config", "show", "--format", "json")
    assert r.code == 0 and "hunter2" not in r.out and "llm.local:8000/v1" in r.out


# ---------------------------------------------------------------- issue 5: extraction


def test_issue5_entity_iris_normalise_case_whitespace_and_nfc() -> None:
    fb = FactBuilder("urn:provgraph:entity:")
    nfc = unicodedata.normalize("NFC", "Irène Joliot-Curie")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    iri = fb.entity(nfc)
    assert fb.entity(nfd) == fb.entity(f"  {nfc.upper()}\t") == fb.entity("irène   joliot-curie") == iri
    assert iri.value == "urn:provgraph:entity:irène%20joliot-curie"
    assert fb.labels[iri] == nfc  # the first label seen, in NFC


def test_issue5_cooccurrence_reads_decomposed_accents(tmp_path: Path) -> None:
    text = unicodedata.normalize("NFD", "Irène Joliot-Curie married Frédéric Joliot in Paris.")
    f = _write(tmp_path, {"nfd.txt": text})[0]
    assert run("load", str(f)).code == 0
    rows = json.loads(run("sparql", "SELECT ?l WHERE { ?s rdfs:label ?l }", "--format", "json").out)
    labels = {b["l"]["value"] for b in rows["results"]["bindings"]}
    assert {"Irène Joliot-Curie", "Frédéric Joliot"} <= labels
    assert not labels & {"Ire", "ne", "Fre", "ric"}


def test_issue5_entity_base_setting_mints_every_entity_and_predicate(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_ENTITY_BASE", "https://example.org/kg/")
    f = _write(tmp_path, TWO_DOCS)[0]
    assert run("load", str(f)).code == 0
    rows = json.loads(run("sparql", "SELECT ?s ?p WHERE { ?s ?p ?o }", "--format", "json").out)["results"]["bindings"]
    assert rows
    for row in rows:
        assert row["s"]["value"].startswith("https://example.org/kg/")
        assert row["p"]["value"].startswith("https://example.org/kg/rel/") or row["p"]["value"] in (
            "http://www.w3.org/2000/01/rdf-schema#label", "http://www.w3.org/2004/02/skos/core#definition")


def test_issue5_entity_and_chunk_vectors_carry_their_chunk_and_document_ids(small: str) -> None:
    with Runtime(load_settings(collection=small), create=False) as rt:
        chunks = {c.id: d.id for d in rt.librarian.list(kind="document") for c in rt.librarian.children(d.id)}
        assert len(chunks) == 2  # plain text: chunks hang under the document
        curie = "urn:provgraph:entity:marie%20curie"
        payload = rt.entity_index.get([curie])[curie]
        assert payload["entity"] == curie and payload["label"] == "Marie Curie"
        assert sorted(payload["chunks"]) == sorted(chunks)  # both chunks mention her
        stored = rt.chunk_index.get(list(chunks))
        assert {k: (v["chunk"], v["document"]) for k, v in stored.items()} == {c: (c, d) for c, d in chunks.items()}


# ---------------------------------------------------------------- issue 6: GraphRAG trace and CLI


@pytest.fixture
def world_collection(tmp_path: Path) -> str:
    with Runtime(load_settings(collection="w", llm="none")) as rt:
        populate(rt.store, rt.librarian, rt.entity_index, tmp_path)
    return "w"


def test_issue6_traces_show_reproduces_a_finished_query(world_collection: str, llm_server: FakeOpenAIServer) -> None:
    reasons = ['names the "discoverer" } ; DROP ALL ; {', "birthplace <urn:x> 😀"]
    select = "\n".join([
        json.dumps({"id": edge_id("Marie Curie", "discovered", "polonium"), "reasoning": reasons[0]}),
        json.dumps({"id": edge_id("Marie Curie", "was born in", "Warsaw"), "reasoning": reasons[1]}),
    ])
    answer = "Marie Curie discovered polonium [1] and was born in Warsaw [2]."
    llm_server.script = by_kind({"complete": select, "stream": answer})  # the real provider, over loopback
    live = run("graph-rag", "-q", "Who discovered polonium?", "-C", world_collection, "-x")
    assert live.code == 0, live.err
    sid = re.search(r"urn:trustgraph:question:([0-9a-f-]{36})", live.err).group(1)  # type: ignore[union-attr]
    streamed = [json.loads(line) for line in run("graph-rag", "-q", "Who discovered polonium?", "-C",
                                                 world_collection, "--format", "json").out.splitlines()]
    # text: the focus block read back equals the one printed live (scores aside)
    shown = run("traces", "show", sid, "-C", world_collection)
    assert shown.code == 0

    def block(text: str) -> list[str]:
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("  [focus] "))
        end = next(i for i, line in enumerate(lines) if line.startswith("  [synthesis] "))
        return [line for line in lines[start:end] if line.strip().startswith(("[focus]", "Focused", "Edge:", "Reason:"))]

    assert block(shown.out) == block(live.err)
    assert [line.strip() for line in block(live.err) if "Reason:" in line] == [f"Reason: {r}" for r in reasons]
    assert shown.out.rstrip("\n").endswith(answer)
    # json: the same edges (original terms), reasons and answer as the stream of an identical query
    sid2 = streamed[-1]["session_id"]
    data = json.loads(run("traces", "show", sid2, "-C", world_collection, "--format", "json").out)
    focus = next(e for e in streamed if e.get("step") == "focus")
    edges = [t["o"] for t in focus["explain_triples"] if t["p"] == "<https://trustgraph.ai/ns/edge>"]
    assert sorted(f"<<( {e['s']} {e['p']} {e['o']} )>>" for e in data["focus"]["edges"]) == sorted(edges)
    assert [e["reasoning"] for e in data["focus"]["edges"]] == reasons
    assert data["answer"] == streamed[-1]["answer"] == answer


def test_issue6_multi_line_title_keeps_one_source_line(tmp_path: Path) -> None:
    f = _write(tmp_path, {"a.txt": "Marie Curie discovered polonium in Paris."})[0]
    assert run("load", str(f), "--title", "Curie\nnotes").code == 0
    r = run("graph-rag", "-q", "Who discovered polonium?", "-x")
    assert r.code == 0
    assert "        Source: Chunk 1 → Curie notes" in r.err.splitlines()
    assert all(line.startswith("  ") for line in r.err.splitlines())  # SPEC §8 layout: every line indented


# ---------------------------------------------------------------- issues 6/7: hostile questions stay data


@pytest.mark.parametrize("command", ["graph-rag", "document-rag"])
def test_issue7_hostile_question_is_stored_verbatim_and_changes_no_knowledge(small: str, command: str) -> None:
    before = _count(small, None)
    r = run(command, "-q", HOSTILE_Q, "-C", small, "-x")
    assert r.code == 0, r.err
    assert r.err.splitlines()[1] == "    Query: " + " ".join(HOSTILE_Q.split())
    listed = json.loads(run("traces", "list", "-C", small, "--format", "json").out)
    assert [row["query"] for row in listed] == [HOSTILE_Q]
    shown = json.loads(run("traces", "show", listed[0]["session_id"], "-C", small, "--format", "json").out)
    assert shown["question"]["query"] == HOSTILE_Q
    assert _count(small, None) == before


@pytest.mark.parametrize("command", ["graph-rag", "document-rag"])
def test_issue7_blank_question_is_a_usage_error_and_writes_nothing(small: str, command: str) -> None:
    r = run(command, "-q", " \n\t ", "-C", small)
    assert (r.code, r.out, r.err) == (2, "", "error: the question is empty\n")
    assert run("traces", "list", "-C", small, "--format", "json").out == "[]\n"


# ---------------------------------------------------------------- issue 8: the no-LLM mode


def test_issue8_load_with_llm_none_ignores_a_configured_llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in UNREACHABLE_LLM.items():
        monkeypatch.setenv(key, value)
    f = _write(tmp_path, TWO_DOCS)[0]
    r = run("load", str(f), "--llm", "none", "--format", "json")
    assert r.code == 0, r.err
    [doc] = json.loads(r.out)["documents"]
    assert doc["facts"] > 0 and doc["failed_chunks"] == 0
    comps = run("sparql", "SELECT DISTINCT ?l WHERE { GRAPH <urn:graph:source> { ?a prov:wasAssociatedWith ?g . "
                          "?g rdfs:label ?l } }", "--format", "csv").out.splitlines()
    assert sorted(comps[1:]) == ["chunker", "cooccurrence-extractor"]


@pytest.mark.parametrize("command", ["graph-rag", "document-rag"])
def test_issue8_queries_accept_llm_none(small: str, command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in UNREACHABLE_LLM.items():
        monkeypatch.setenv(key, value)
    r = run(command, "-q", "Who discovered polonium?", "-C", small, "--llm", "none")
    assert r.code == 0 and "[1]" in r.out


@pytest.mark.parametrize("command", ["graph-rag", "document-rag"])
def test_issue8_no_llm_trace_records_no_model_and_no_tokens(small: str, command: str) -> None:
    r = run(command, "-q", "Who discovered polonium?", "-C", small, "--format", "json")
    assert r.code == 0
    final = json.loads(r.out.splitlines()[-1])
    assert final["usage"] == {"input_tokens": 0, "output_tokens": 0, "llm_calls": 0, "models": []}
    ask = ("ASK { GRAPH <urn:graph:retrieval> { ?x ?p ?o FILTER(?p IN (tg:llmModel, tg:inToken, tg:outToken)) } }")
    assert run("sparql", ask, "-C", small).out == "false\n"
    reasons = run("sparql", "SELECT ?r WHERE { GRAPH <urn:graph:retrieval> { ?x tg:reasoning ?r } }", "-C", small,
                  "--format", "csv").out.splitlines()[1:]
    if command == "document-rag":  # Document RAG selects chunks by similarity: no edge reasons at all
        assert reasons == []
        return
    assert reasons
    plain = r"Selected by embedding similarity \d\.\d\d between the question and '.+' \(no LLM configured\)"
    boosted = (r"Selected by score (\d\.\d\d): embedding similarity -?\d\.\d\d between the question and '.+' "
               r"plus \d\.\d\d from hybrid retrieval \(.+\) \(no LLM configured\)")
    assert all(re.fullmatch(plain, line) or re.fullmatch(boosted, line) for line in reasons)
