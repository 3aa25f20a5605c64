"""Configuration: one typed ``Settings``, built once at the edge (CLI, API, runtime).

Sources, strongest first: explicit arguments, ``PROVGRAPH_*`` environment variables,
``provgraph.toml`` in the data directory, defaults. The TOML file may group keys in tables:
``[llm] base_url = "…"`` is the same as the top-level key ``llm_base_url``; ``[llm] provider``
sets ``llm``.
Each default is written once, here; CLI flags take their defaults from these fields.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

from provgraph.errors import ConfigError

__all__ = ["Settings", "default_home", "load_settings", "CONFIG_FILE"]

CONFIG_FILE = "provgraph.toml"


def default_home() -> Path:
    """The data directory: ``$PROVGRAPH_HOME`` or ``~/.provgraph``."""
    env = os.environ.get("PROVGRAPH_HOME")
    return Path(env).expanduser() if env else Path.home() / ".provgraph"


class _TomlSource(PydanticBaseSettingsSource):
    """Reads ``provgraph.toml`` from the data directory, flattening one level of tables."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self._path = path

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        if not self._path.is_file():
            return {}
        try:
            raw = tomllib.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {self._path}: {exc}") from exc
        flat: dict[str, Any] = {}
        for key, value in raw.items():
            if isinstance(value, dict):
                flat.update({f"{key}_{k}": v for k, v in value.items()})
                if key == "llm" and "provider" in value:  # a table named llm cannot also be the key llm
                    flat["llm"] = flat.pop("llm_provider")
            else:
                flat[key] = value
        return flat


class Settings(BaseSettings):
    """Every setting of provgraph, with its default."""

    model_config = SettingsConfigDict(env_prefix="PROVGRAPH_", extra="ignore", frozen=True)

    home: Path = Field(default_factory=default_home, description="data directory")
    user: str = Field("default", description="user owning collections")
    collection: str = Field("default", description="collection to work in")
    store_url: str | None = Field(None, description="quad store: postgresql://… (unset: the embedded store)")
    replica_url: str | None = Field(None, description="SPARQL replica of a PostgreSQL collection: an Oxigraph server's "
                                    "http://… (unset: sparql refuses there)")
    blob_url: str | None = Field(None, description="documents' bytes: s3://bucket/prefix, with the usual AWS_* endpoint "
                                 "and credential settings (unset: inside the store)")
    queue_url: str | None = Field(None, description="extraction jobs: nats://… (unset: load extracts in process)")
    queue_ack_wait: float = Field(600.0, gt=0, description="seconds a worker may take on a job before it is redelivered")
    queue_max_deliver: int = Field(5, ge=1, description="deliveries of a job before it is dead-lettered")

    llm: Literal["auto", "none", "openai", "local"] = Field(
        "auto",
        description="LLM provider; auto = openai when llm_base_url or llm_model is set, "
        "else local when llm_gguf_path is set, else none",
    )
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_gguf_path: Path | None = None
    llm_timeout: float = 120.0
    llm_max_retries: int = 3
    llm_concurrency: int = 4
    llm_threads: int | None = None
    llm_max_tokens: int = Field(1024, ge=16, description="most output tokens of one LLM call (a schema may ask fewer)")
    question_deadline: float = Field(
        45.0, gt=0, description="seconds a question may spend on LLM steps before falling back to no-LLM ones"
    )

    embedder: str = Field("model2vec", description="model2vec | sentence-transformers | openai")
    embedder_model: str | None = None
    embedder_base_url: str | None = None
    embedder_api_key: SecretStr | None = None
    embedder_batch_size: int = 256

    max_file_mb: float = Field(64, description="largest file load accepts, in MiB")
    chunk_size: int = 2000
    chunk_overlap: int = 100

    entity_base: str = Field("urn:provgraph:entity:", description="base IRI of extracted entities")
    extractors: str = "definitions,relationships"
    extract_concurrency: int = 4

    entity_limit: int = 50
    triple_limit: int = 30
    max_subgraph_size: int = 150
    max_path_length: int = 2
    edge_score_limit: int = 30
    edge_limit: int = 25
    min_similarity: float = Field(0.3, description="no-LLM edge selection: least question-edge similarity")
    doc_limit: int = 5
    max_iterations: int = 10
    agent_deadline: float = Field(
        300.0, gt=0, description="seconds an agent question may run; then it answers with its last tool result"
    )
    traces: bool = Field(True, description="write query traces to urn:graph:retrieval (--no-trace: off per request)")
    conversation_turns: int = Field(6, ge=0, le=100, description="earlier turns a conversation's rewrite reads at most")
    conversation_tokens: int = Field(2000, ge=0, le=100_000,
                                     description="tokens (estimated) of history a conversation's rewrite reads at most")

    mcp_servers: list[dict[str, Any]] = Field(default_factory=list, description="MCP servers for the agent")
    agent_tools: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per tool name: its group and applicable-states (docs/configuration.md)")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        given = getattr(init_settings, "init_kwargs", {}).get("home")
        home = Path(given).expanduser() if given else default_home()
        return (init_settings, env_settings, _TomlSource(settings_cls, home / CONFIG_FILE))

    @property
    def llm_provider(self) -> Literal["none", "openai", "local"]:
        """The provider in effect once ``auto`` is resolved."""
        if self.llm != "auto":
            return self.llm
        if self.llm_base_url or self.llm_model:
            return "openai"
        if self.llm_gguf_path is not None:
            return "local"
        return "none"

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data, secrets masked (keys, URL passwords, MCP server env)."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = "****" if value.get_secret_value() else ""
            elif isinstance(value, Path):
                value = str(value)
            elif isinstance(value, str):
                value = _URL_PASSWORD.sub(r"\1****@", value)
            elif name == "mcp_servers":
                value = [_mask_server(s) for s in value]
            out[name] = value
        out["llm_provider"] = self.llm_provider
        return out


_URL_PASSWORD = re.compile(r"(://[^/@:\s]*:)[^/@\s]*@")


def _mask_server(server: dict[str, Any]) -> dict[str, Any]:
    """An MCP server entry with its environment values and URL credentials masked."""
    shown = dict(server)
    if isinstance(shown.get("env"), dict):
        shown["env"] = {k: "****" for k in shown["env"]}
    if isinstance(shown.get("headers"), dict):
        shown["headers"] = {k: "****" for k in shown["headers"]}
    if isinstance(shown.get("url"), str):
        shown["url"] = _URL_PASSWORD.sub(r"\1****@", shown["url"])
    return shown


def load_settings(**overrides: Any) -> Settings:
    """Build the settings once; ``None`` overrides are ignored. Raises :class:`ConfigError`."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid configuration: {problems}") from exc
    except SettingsError as exc:  # a complex value (a list) that is not JSON, e.g. PROVGRAPH_MCP_SERVERS
        field = re.search(r'field "(\w+)"', str(exc))
        name = field.group(1) if field else "a setting"
        raise ConfigError(
            f"invalid configuration: {name}: not valid JSON (PROVGRAPH_{name.upper()} must be a JSON list, "
            f"e.g. '[]')"
        ) from exc
