"""``provgraph config show`` (the command lives in cli/config_cmd.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from provgraph.cli import common, config_cmd


def invoke(*args: str) -> tuple[int, str]:
    app = typer.Typer(cls=common.ProvgraphGroup, add_completion=False)

    @app.callback()
    def _root(ctx: typer.Context) -> None:
        ctx.obj = common.Globals()

    config_cmd.register(app)
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_json_shows_effective_settings_with_secrets_masked(
    monkeypatch: pytest.MonkeyPatch, clean_environ: Path
) -> None:
    monkeypatch.setenv("PROVGRAPH_LLM_API_KEY", "sk-very-secret")
    monkeypatch.setenv("PROVGRAPH_LLM_MODEL", "qwen2.5")
    monkeypatch.setenv("PROVGRAPH_EMBEDDER_BATCH_SIZE", "64")
    code, out = invoke("config", "show", "--format", "json")
    assert code == 0
    values = json.loads(out)
    assert values["llm_api_key"] == "****" and "sk-very-secret" not in out
    assert values["llm_model"] == "qwen2.5" and values["llm_provider"] == "openai"
    assert values["embedder_batch_size"] == 64
    assert values["home"] == str(clean_environ)


def test_table_names_each_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_EMBEDDER_API_KEY", "sk-embed")
    monkeypatch.setenv("COLUMNS", "200")
    code, out = invoke("config", "show")
    assert code == 0
    assert "sk-embed" not in out
    for line in ("embedder_api_key", "****", "PROVGRAPH_EMBEDDER_API_KEY", "llm_provider", "none"):
        assert line in out


def test_invalid_settings_exit_with_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVGRAPH_LLM_TIMEOUT", "soon")
    app_code, _ = invoke("config", "show")
    assert app_code == 2


def test_configuration_page_documents_every_setting() -> None:
    from provgraph.config import Settings

    page = (Path(__file__).resolve().parents[3] / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in Settings.model_fields if f"`PROVGRAPH_{name.upper()}`" not in page]
    assert missing == []
