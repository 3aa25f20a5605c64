"""Settings precedence through the real command line: flags > env > provgraph.toml > defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provgraph.config import CONFIG_FILE, load_settings
from provgraph.runtime import Runtime
from tests.cli_runner import run
from tests.unit.retrieval.graph_world import populate

TOML = """\
chunk_size = 1500
max_subgraph_size = 4

[llm]
model = "toml-model"
concurrency = 2
timeout = 30
"""


def shown(*args: str) -> dict[str, object]:
    r = run(*args, "config", "show", "--format", "json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_provgraph_toml_is_read_tables_included(clean_environ: Path) -> None:
    clean_environ.mkdir(parents=True, exist_ok=True)
    (clean_environ / CONFIG_FILE).write_text(TOML, encoding="utf-8")
    values = shown()
    assert (values["chunk_size"], values["max_subgraph_size"]) == (1500, 4)
    assert (values["llm_model"], values["llm_concurrency"], values["llm_timeout"]) == ("toml-model", 2, 30.0)
    assert values["llm_provider"] == "openai"  # auto resolves from the file's model
    assert values["chunk_overlap"] == 100  # untouched keys keep their defaults


def test_env_beats_the_file_and_the_file_beats_defaults(clean_environ: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environ.mkdir(parents=True, exist_ok=True)
    (clean_environ / CONFIG_FILE).write_text(TOML, encoding="utf-8")
    monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "env-model")
    monkeypatch.setenv("PROVGRAPH_CHUNK_SIZE", "900")
    values = shown()
    assert (values["llm_model"], values["chunk_size"]) == ("env-model", 900)
    assert (values["llm_concurrency"], values["max_subgraph_size"]) == (2, 4)


def test_llm_provider_in_the_llm_table_and_flags_beat_it(clean_environ: Path) -> None:
    clean_environ.mkdir(parents=True, exist_ok=True)
    (clean_environ / CONFIG_FILE).write_text('[llm]\nprovider = "none"\nmodel = "m"\n', encoding="utf-8")
    assert shown()["llm_provider"] == "none"
    assert load_settings(llm="openai").llm_provider == "openai"  # an explicit argument (a flag) wins


def test_flag_beats_env_beats_file_on_a_real_command(
    clean_environ: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with Runtime(load_settings(collection="w", llm="none")) as rt:
        populate(rt.store, rt.librarian, rt.entity_index, tmp_path)
    (clean_environ / CONFIG_FILE).write_text(TOML, encoding="utf-8")

    def explored(*flags: str) -> str:
        r = run("graph-rag", "-q", "Who discovered polonium?", "-C", "w", "-x", "--llm", "none", *flags)
        assert r.code == 0, r.err
        return next(line for line in r.err.splitlines() if "Edges explored" in line).strip()

    assert explored() == "Edges explored: 4"  # file
    monkeypatch.setenv("PROVGRAPH_MAX_SUBGRAPH_SIZE", "3")
    assert explored() == "Edges explored: 3"  # env over file
    assert explored("--max-subgraph-size", "5") == "Edges explored: 5"  # flag over env


def test_llm_none_flag_beats_an_llm_table_pointing_at_a_dead_endpoint(
    clean_environ: Path, tmp_path: Path
) -> None:
    with Runtime(load_settings(collection="w", llm="none")) as rt:
        populate(rt.store, rt.librarian, rt.entity_index, tmp_path)
    dead = '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nmax_retries = 0\ntimeout = 2\n'
    (clean_environ / CONFIG_FILE).write_text(dead, encoding="utf-8")
    r = run("graph-rag", "-q", "Who discovered polonium?", "-C", "w")  # the file's LLM is used, and fails
    assert "warning: edge selection fell back to similarity" in r.err and "127.0.0.1:9" in r.err
    r = run("graph-rag", "-q", "Who discovered polonium?", "-C", "w", "--llm", "none")
    assert r.code == 0 and "[1]" in r.out and "127.0.0.1:9" not in r.err


def test_home_flag_beats_provgraph_home(clean_environ: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    other.mkdir()
    (other / CONFIG_FILE).write_text("chunk_size = 777\n", encoding="utf-8")
    values = shown("--home", str(other))
    assert (values["home"], values["chunk_size"]) == (str(other), 777)  # its provgraph.toml too
    assert run("--home", str(other), "collections", "create", "c1").code == 0
    listed = run("--home", str(other), "collections", "list", "--format", "json").out
    assert json.loads(listed) == [{"user": "default", "collection": "c1"}]
    assert json.loads(run("collections", "list", "--format", "json").out) == []  # PROVGRAPH_HOME untouched


@pytest.mark.parametrize(
    ("env", "value", "detail"),
    [
        ("PROVGRAPH_LLM_TIMEOUT", "soon", "llm_timeout: Input should be a valid number, unable to parse string as a number"),
        ("PROVGRAPH_LLM", "gpt", "llm: Input should be 'auto', 'none', 'openai' or 'local'"),
    ],
)
def test_invalid_configuration_is_one_documented_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, detail: str
) -> None:
    monkeypatch.setenv(env, value)
    for args in (("config", "show"), ("collections", "list")):
        r = run(*args)
        assert (r.code, r.out, r.err) == (2, "", f"error: invalid configuration: {detail}\n")


def test_invalid_value_in_the_file_names_the_setting(clean_environ: Path) -> None:
    clean_environ.mkdir(parents=True, exist_ok=True)
    (clean_environ / CONFIG_FILE).write_text("[llm]\nconcurrency = \"many\"\n", encoding="utf-8")
    r = run("config", "show")
    assert r.code == 2
    assert r.err.startswith("error: invalid configuration: llm_concurrency: ") and r.err.count("\n") == 1
