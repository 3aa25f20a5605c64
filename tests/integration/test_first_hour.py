"""The first hour (issue 30): what a new user meets in the README and the CLI, each through a real process.

Every command here runs as ``provgraph`` does from a shell: a fresh Python process, its stdout, stderr and
exit code, with the environment the test gives it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from provgraph import Provgraph
from provgraph.config import Settings
from tests.corpus_fixture import CORPUS
from tests.fakes.openai_server import FakeOpenAIServer, Recorded, Reply, error
from tests.server.live import free_port, live_server

ROOT = Path(__file__).resolve().parents[2]
README_QUESTION = "What did Marie Curie discover?"
MAIN = "from provgraph.cli.app import main; main()"


@dataclass
class Ran:
    code: int
    out: str
    err: str


def cli(*args: str, columns: int | None = None, env: dict[str, str] | None = None) -> Ran:
    """``provgraph ARGS`` in a new process, with this test's PROVGRAPH_* environment."""
    environ = {**os.environ, **(env or {})}
    if columns is not None:
        environ["COLUMNS"] = str(columns)
    done = subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True, env=environ,
                          timeout=600, cwd=ROOT)
    return Ran(done.returncode, done.stdout, done.stderr)


def answer_line(out: str) -> str:
    return out.strip().split("\n\n")[0]


# ---------------------------------------------------------------- the README's example question


@pytest.mark.parametrize("mode", ["graph-rag", "document-rag"])
def test_the_readme_question_is_answered_with_polonium_and_radium(corpus_settings: Settings, mode: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    placeholder = (ROOT / "src/provgraph/api/static/js/pages/ask.js").read_text(encoding="utf-8")
    assert README_QUESTION in readme and f'placeholder: "{README_QUESTION}"' in placeholder
    r = cli(mode, "-q", README_QUESTION, "-C", "corpus")
    assert r.code == 0, r.err
    answer = answer_line(r.out)
    assert "Polonium is a radioactive element that Marie Curie and Pierre Curie discovered in 1898" in answer
    assert "Radium is a radioactive element that Marie Curie and Pierre Curie discovered in December 1898" in answer
    assert answer.startswith(("Polonium is", "Radium is")), answer  # what she discovered first, not Becquerel's prize


def test_document_rag_numbers_its_markers_in_order_of_first_appearance(corpus_settings: Settings) -> None:
    r = cli("document-rag", "-q", README_QUESTION, "-C", "corpus")
    assert r.code == 0, r.err
    markers = list(dict.fromkeys(re.findall(r"\[(\d+)\]", answer_line(r.out))))
    assert markers == [str(n) for n in range(1, len(markers) + 1)] and len(markers) >= 2
    listed = [line.split("]")[0] + "]" for line in r.out.strip().split("\n\n")[1].splitlines()]
    assert listed == [f"[{n}]" for n in markers]
    final = json.loads(cli("document-rag", "-q", README_QUESTION, "-C", "corpus", "--format", "json")
                       .out.splitlines()[-1])
    trace = json.loads(cli("traces", "show", final["session_id"], "-C", "corpus", "--format", "json").out)
    cited = {c["marker"]: c["chunks"] for c in trace["citations"]}  # the stored trace: each marker's chunk
    assert cited == {s["marker"]: [s["chunk"]] for s in final["sources"]}


def test_the_python_api_lists_each_source_once(corpus_settings: Settings) -> None:
    with Provgraph(collection="corpus", home=str(corpus_settings.home), llm="none") as pg:
        for answer in (pg.graph_rag(README_QUESTION), pg.document_rag(README_QUESTION)):
            keys = [(s.marker, s.chunk) for s in answer.sources]
            assert keys and len(keys) == len(set(keys))
            assert [s.marker for s in answer.sources] == sorted((s.marker for s in answer.sources),
                                                                key=lambda m: int(str(m)[1:-1]))
            assert set(re.findall(r"\[\d+\]", answer.text)) == {s.marker for s in answer.sources}


def test_traces_show_with_provenance_lists_each_source_and_sentence_once(corpus_settings: Settings) -> None:
    final = json.loads(cli("graph-rag", "-q", README_QUESTION, "-C", "corpus", "--format", "json").out.splitlines()[-1])
    r = cli("traces", "show", final["session_id"], "--show-provenance", "-C", "corpus")
    assert r.code == 0, r.err
    edges = r.out.split("Edge: ")[1:]
    assert edges
    for edge in edges:
        lines = [line.strip() for line in edge.splitlines()]
        pairs = [(a, b) for a, b in zip(lines, lines[1:]) if a.startswith("Source: ") and b.startswith("Sentence: ")]
        assert len(pairs) == len(set(pairs)), edge


def test_the_provenance_tree_names_predicates_as_the_explain_steps_do(corpus_settings: Settings) -> None:
    r = cli("provenance", "radium_institute.txt", "-C", "corpus")
    assert r.code == 0, r.err
    assert "http://" not in r.out and "https://" not in r.out
    assert "(Frédéric Joliot, definition, a French physicist" in r.out


@pytest.mark.parametrize("mode", ["graph-rag", "document-rag"])
def test_no_trace_returns_no_session_id(corpus_settings: Settings, mode: str) -> None:
    before = json.loads(cli("traces", "list", "-C", "corpus", "--format", "json").out)
    final = json.loads(cli(mode, "-q", README_QUESTION, "-C", "corpus", "--no-trace", "--format", "json")
                       .out.splitlines()[-1])
    assert final["message_type"] == "final" and final["answer"] and final["session_id"] is None
    assert json.loads(cli("traces", "list", "-C", "corpus", "--format", "json").out) == before


# ---------------------------------------------------------------- exit codes and one-line errors


def test_sparql_errors_exit_2_on_one_readable_line(corpus_settings: Settings) -> None:
    bad = cli("sparql", "SELEC ?x", "-C", "corpus")
    assert (bad.code, bad.err) == (2, "error: collection default/corpus: invalid SPARQL: error at 1:9: expected one "
                                      "of DESCRIBE, [_]\n")
    update = cli("sparql", "DELETE WHERE { ?s ?p ?o }", "-C", "corpus")
    assert update.code == 2 and "SPARQL is read-only here: this is an update" in update.err
    assert update.err.count("\n") == 1
    prefix = cli("sparql", "SELECT ?x WHERE { ?x foo:bar ?y }", "-C", "corpus")
    assert (prefix.code, prefix.err) == (2, "error: collection default/corpus: invalid SPARQL: error at 1:29: unknown "
                                            "prefix 'foo:' (predefined: prov: rdf: rdfs: xsd: dc: skos: owl: tg:; "
                                            "declare it with PREFIX foo: <…>)\n")
    assert cli("sparql", "ASK { ?s ?p ?o }", "-C", "corpus").out == "true\n"  # nothing was changed


def _collections() -> list[dict[str, str]]:
    return list(json.loads(cli("collections", "list", "--format", "json").out))


def test_a_missing_file_exits_3_and_a_failed_load_creates_no_collection(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    r = cli("load", str(missing), str(tmp_path / "gone.md"), "-C", "fresh")
    assert (r.code, r.err) == (3, f"error: {missing}: no such file; {tmp_path / 'gone.md'}: no such file\n")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot really a PDF")
    r = cli("load", str(broken), "-C", "fresh")
    assert r.code == 1 and r.err.startswith(f"error: {broken}: corrupt or unreadable PDF") and r.err.count("\n") == 1
    assert _collections() == []
    for command in (["import", str(tmp_path / "missing.nq"), "-C", "fresh"],
                    ["restore", str(tmp_path / "missing.tar"), "-C", "fresh"]):
        r = cli(*command)
        assert r.code == 3 and r.err.startswith(f"error: {tmp_path / 'missing.'}") and r.err.count("\n") == 1
    assert _collections() == []


def test_what_pypdf_says_about_a_damaged_pdf_is_a_warning_of_its_document(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.pdf"  # junk before the header: pypdf reads it, and logs why it had to search
    damaged.write_bytes(b"junk\n" + (CORPUS / "rutherford_radiation.pdf").read_bytes())
    r = cli("load", str(damaged), "-C", "pdf")
    assert r.code == 0, r.err
    lines = r.err.splitlines()
    assert lines and all(line.startswith("warning: urn:doc:damaged.pdf: pypdf: ") for line in lines), r.err
    assert "warning: urn:doc:damaged.pdf: pypdf: invalid pdf header: b'junk\\n'" in lines


def test_config_probe_of_a_closed_port_is_one_model_error_line(tmp_path: Path) -> None:
    port = free_port()  # nothing listens on it
    r = cli("config", "show", "--probe", env={"PROVGRAPH_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1",
                                              "PROVGRAPH_LLM_MODEL": "m", "PROVGRAPH_LLM_MAX_RETRIES": "5"})
    assert (r.code, r.out) == (5, "")
    assert r.err == (f"error: openai provider at http://127.0.0.1:{port}/v1, model m: connection refused (nothing "
                     "listens there: is the server running, is the URL right?)\n")


def test_config_probe_reports_no_mode_it_did_not_measure(llm_server: FakeOpenAIServer) -> None:
    def refuse(recorded: Recorded) -> Reply:
        return error(400, "this model answers no JSON")

    llm_server.script = refuse
    r = cli("config", "show", "--probe", columns=200)
    assert r.code == 0, r.err
    rows = {cells[0]: cells[1] for line in r.out.splitlines()
            if (cells := [c.strip() for c in line.split("│")[1:-1]]) and len(cells) == 3}
    assert rows["probe_structured_output"] == "-" and rows["probe_json_ok"] == "False"
    assert not [name for name in rows if name.endswith("_error")] and "answers no JSON" not in r.out
    assert [line for line in r.err.splitlines() if "this model answers no JSON" in line][0].startswith("warning: json: ")
    shown = json.loads(cli("config", "show", "--probe", "--format", "json").out)
    assert shown["probe_structured_output"] is None and "answers no JSON" in shown["probe_json_error"]


# ---------------------------------------------------------------- smaller things


def test_head_of_the_viewer_page_is_answered(tmp_path: Path) -> None:
    home = tmp_path / "served"
    home.mkdir()
    with live_server(home) as server:
        head = httpx.head(server.url + "/")
        docs = httpx.head(server.url + "/api/v1/docs")
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/html") and head.content == b""
    assert docs.status_code == 200


def test_version() -> None:
    from importlib.metadata import version

    r = cli("--version")
    assert (r.code, r.out, r.err) == (0, f"provgraph {version('provgraph')}\n", "")


@pytest.mark.parametrize("command", [["graph-rag"], ["serve"], ["load"], ["document-rag"], ["traces", "show"]])
def test_help_keeps_every_option_name_whole_at_80_columns(command: list[str]) -> None:
    import typer

    from provgraph.cli.app import app

    group = typer.main.get_command(app)
    cmd = group.get_command(typer.Context(group), command[0])
    for name in command[1:]:
        cmd = cmd.get_command(typer.Context(cmd), name)
    r = cli(*command, "--help", columns=80)
    assert r.code == 0 and "…" not in r.out, r.out
    for param in cmd.params:
        for opt in [*param.opts, *param.secondary_opts]:
            if opt.startswith("--"):
                assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", r.out), (opt, r.out)


def test_listings_show_whole_ids_and_the_formats_they_offer(corpus_settings: Settings) -> None:
    names = sorted(p.name for p in CORPUS.iterdir() if p.name != "README.md")
    r = cli("documents", "list", "-C", "corpus", columns=80)
    assert r.code == 0
    head, *lines = r.out.splitlines()
    assert head.split() == ["Document", "Title", "Type", "Bytes", "Parts", "Loaded", "(UTC)"]
    assert max(len(line) for line in r.out.splitlines()) <= 80  # one line per document: nothing wraps
    ids = [line.split()[0] for line in lines]
    assert ids == names
    types = {line.split()[0]: line[head.index("Type"):].split()[0] for line in lines}
    assert types["polonium_and_radium.md"] == "markdown" and types["rutherford_radiation.pdf"] == "pdf"
    title = next(line for line in lines if line.startswith("polonium_and_radium.md"))[head.index("Title"):]
    assert title.startswith("Polonium") and title.split("…")[0].strip() in "Polonium and radium: the work of Marie"
    narrow = cli("documents", "list", "-C", "corpus", columns=40)  # too narrow for the ids: lines grow, ids stay
    assert [line.split()[0] for line in narrow.out.splitlines()[1:]] == names
    assert cli("documents", "show", ids[0], "-C", "corpus").code == 0  # an id other commands take
    assert cli("collections", "list", "-f", "csv").out == "user,collection\ndefault,corpus\n"


def test_an_unchanged_reload_reports_no_new_facts_and_parts_by_their_kind(corpus_settings: Settings) -> None:
    r = cli("load", str(CORPUS), "-C", "corpus", columns=120)
    assert r.code == 0, r.err
    rows = {cells[0]: cells[1:] for line in r.out.splitlines()
            if line.startswith("│ ") and (cells := [c.strip() for c in line.split("│")[1:-1]])}
    assert "Pages" not in r.out and "Parts" in r.out
    assert rows["polonium_and_radium.md"] == ["6 sections", "6", "-", "0", "unchanged"]
    assert rows["rutherford_radiation.pdf"] == ["4 pages", "4", "-", "0", "unchanged"]
    assert rows["radium_institute.txt"][0] == "-" and rows["radium_institute.txt"][2] == "-"


def test_the_api_docs_curl_example_uploads_files_that_exist() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    uploads = re.findall(r"-F files=@(\S+)", text)
    assert uploads and all((ROOT / path).is_file() for path in uploads), uploads
    removals = re.findall(r"^curl .*/removal/(\S+)", text, re.MULTILINE)
    assert removals and all((CORPUS / name).is_file() for name in removals)


def test_a_token_for_a_user_without_collections_says_who_loaded_them(corpus_settings: Settings) -> None:
    mine = cli("tokens", "create", "-U", "default")
    assert mine.code == 0 and mine.out.startswith("pgt_") and "note:" not in mine.err  # default loaded the corpus
    yours = cli("tokens", "create", "-U", "you")
    assert yours.code == 0 and yours.out.startswith("pgt_")
    [note] = [line for line in yours.err.splitlines() if line.startswith("note: ")]
    assert note.startswith("note: user you has no collections yet (collections here belong to: default); the CLI "
                           "loads as user default unless given -U")
    assert "provgraph tokens create -U default" in note
