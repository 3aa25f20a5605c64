"""What every CLI command shares: global options, settings, error → exit code mapping."""

from __future__ import annotations

import errno
import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import typer
from typer.core import TyperGroup
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from provgraph.explain.neutralise import escape_json, neutralise
from provgraph.errors import (
    ConfigError,
    IndexError_,
    InputError,
    ModelError,
    NotFound,
    ProvgraphError,
    QueryError,
    StoreError,
)

if TYPE_CHECKING:  # imported where used: `provgraph --help` loads neither settings nor the store
    from provgraph.config import Settings
    from provgraph.layout import CollectionRef
    from provgraph.runtime import Runtime

__all__ = ["echo", "cell", "json_text", "Globals", "settings_from", "open_runtime", "drop", "not_served", "query_timeout", "query_caps", "timeout_message", "Host", "hosted", "on_server", "listing_user", "run_app", "exit_code_for", "stdout", "stderr", "ProvgraphGroup", "USER_OPTION", "COLLECTION_OPTION", "LLM_OPTION", "NO_TRACE_OPTION", "CONVERSATION_OPTION", "traces_override"]



class _SafeConsole(Console):
    """A Rich console whose every printed segment of text goes through :func:`neutralise`."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Any:
        for segment in super().render(renderable, options):
            yield segment if segment.control else Segment(neutralise(segment.text), segment.style, segment.control)


stdout = _SafeConsole()
stderr = _SafeConsole(stderr=True)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print plain text (stdout, or stderr with ``err``), neutralised: every CLI line goes through here."""
    typer.echo(neutralise(text), err=err, nl=nl)


def cell(value: object, style: str = "") -> Text:
    """A table cell or tree label from data: neutralised, never read as Rich markup."""
    return Text(neutralise(str(value)), style)


def json_text(value: Any, **options: Any) -> str:
    """``value`` as JSON with every control, C1 and bidi character escaped (``\\uXXXX``)."""
    return escape_json(json.dumps(value, ensure_ascii=False, **options))

USER_OPTION = typer.Option(None, "-U", "--user", help="User owning the collection (default: default).")
COLLECTION_OPTION = typer.Option(None, "-C", "--collection", help="Collection (default: default).")
LLM_OPTION = typer.Option(None, "--llm", help="auto, none (the no-LLM mode), openai or local (default: auto).")
NO_TRACE_OPTION = typer.Option(False, "--no-trace", help="Write no trace for this request (setting: traces).")
CONVERSATION_OPTION = typer.Option(
    None, "--conversation", metavar="ID",
    help="Ask as the next turn of conversation ID (started when new; pronouns resolved with its history).")


def traces_override(no_trace: bool) -> bool | None:
    """The ``traces`` setting a ``--no-trace`` flag asks for (None: leave it to the settings)."""
    return False if no_trace else None


@dataclass
class Globals:
    """Options given before the command name."""

    home: str | None = None
    url: str | None = None
    token: str | None = None


class Host(Protocol):
    """What runs commands for a server (``provgraph serve``): its data directory, the caller's user,
    and its open collections. Commands then act as that user on the server's open stores."""

    home: str
    user: str
    write: bool
    timeout_s: float  # the longest a query may run (the server's --timeout)

    def use(self, settings: Settings, *, create: bool, write: bool) -> AbstractContextManager[Runtime]: ...

    def drop(self, ref: CollectionRef) -> None: ...


_hosted = threading.local()


@contextmanager
def hosted(host: Host) -> Iterator[None]:
    """Run commands in this thread for ``host`` (the server's remote mode)."""
    _hosted.host = host
    try:
        yield
    finally:
        _hosted.host = None


def _host() -> Host | None:
    return getattr(_hosted, "host", None)


def on_server() -> bool:
    """Whether this command runs for a server (``provgraph serve``) rather than on its own stores."""
    return _host() is not None


def query_timeout() -> float | None:
    """The seconds a query may run: the server's limit when run for one, else None (no limit)."""
    host = _host()
    return None if host is None else host.timeout_s


def query_caps() -> tuple[int | None, int | None]:
    """The rows and bytes a query's results may have: the server's caps when run for one, else none."""
    caps: tuple[int | None, int | None] = getattr(_host(), "result_caps", (None, None))
    return caps


def timeout_message(seconds: float) -> str:
    """What a query stopped at the server's limit says (over HTTP, the WebSocket and ``/cli`` alike)."""
    return f"the query took longer than the server's limit of {seconds:g} s"


def settings_from(ctx: typer.Context, **overrides: Any) -> Settings:
    """Settings for this invocation: global options and command flags over env and file.

    Run for a server, the server's data directory and the caller's user apply; another user's
    collections do not exist.
    """
    from provgraph.config import load_settings

    host = _host()
    if host is not None:
        user = overrides.pop("user", None)
        if user is not None and user != host.user:
            raise NotFound(f"collection {user}/{overrides.get('collection') or 'default'} does not exist "
                           "(create it with: provgraph collections create)")
        return load_settings(**overrides, home=host.home, user=host.user)
    root = ctx.find_root().obj
    home = root.home if isinstance(root, Globals) else None
    return load_settings(home=home, **overrides)


def listing_user(user: str | None) -> str | None:
    """The user whose collections a listing shows: the caller's own when run for a server."""
    host = _host()
    return host.user if host is not None else user


@contextmanager
def open_runtime(settings: Settings, *, create: bool = False) -> Iterator[Runtime]:
    """The collection's runtime: opened here and closed after, or lent by the server that runs the command."""
    host = _host()
    if host is not None:
        with host.use(settings, create=create, write=host.write) as rt:
            yield rt
        return
    from provgraph.layout import CollectionRef
    from provgraph.runtime import Runtime

    not_served(CollectionRef(settings.home, settings.user, settings.collection))
    if create:
        settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)  # the data directory is private
    with Runtime(settings, create=create) as rt:
        yield rt


def drop(ref: CollectionRef, settings: Settings) -> None:
    """Delete a collection (through the server when it has the collection open)."""
    host = _host()
    if host is not None:
        host.drop(ref)
    else:
        from provgraph.runtime import drop_collection

        not_served(ref)
        drop_collection(settings, ref)


def not_served(ref: CollectionRef) -> None:
    """Stop a local command on a collection whose data directory a running server holds (cli/home_lock.py)."""
    if _host() is None:
        from provgraph.cli.home_lock import refuse_if_served

        refuse_if_served(ref.home, str(ref))


def exit_code_for(exc: ProvgraphError) -> int:
    """One place mapping errors to exit codes."""
    if isinstance(exc, (InputError, ConfigError, QueryError)):  # a malformed query or data file: as the API's 400
        return 2
    if isinstance(exc, NotFound):
        return 3
    if isinstance(exc, (StoreError, IndexError_)):  # the quad store, the librarian or a vector index
        return 4
    if isinstance(exc, ModelError):
        return 5
    return 1


class ProvgraphGroup(TyperGroup):
    """Command group that turns a provgraph error into one line on stderr and its exit code."""

    def invoke(self, ctx: Any) -> Any:  # click.Context, or typer._click.Context in typer >= 0.29
        try:
            url = ctx.params.get("url")
            argv = [*ctx._protected_args, *ctx.args]
            if _host() is not None and argv and argv[0] in ("serve", "tokens", "config"):
                raise InputError(f"provgraph {argv[0]} runs on the client, not against a server")
            if url and _host() is None and argv and argv[0] not in ("serve", "tokens", "config") \
                    and "--help" not in argv:
                from provgraph.cli.remote import run_remote

                code = run_remote(self, argv, url, ctx.params.get("token"))
                raise typer.Exit(code) if code else typer.Exit(0)
            return super().invoke(ctx)
        except ProvgraphError as exc:
            # the first line, split at LF only: a name holding \v, \f or U+0085 is shown whole, escaped by echo()
            message = str(exc).strip().split("\n")[0] if str(exc).strip() else type(exc).__name__
            echo(f"error: {message}", err=True)
            raise typer.Exit(exit_code_for(exc)) from None
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            where = f" writing {exc.filename}" if exc.filename else ""
            echo(f"error: no space left on the device{where}: free some space, then run the command again "
                 "(`provgraph load` redoes interrupted documents; `provgraph check --repair` fixes the rest)", err=True)
            raise typer.Exit(4) from None


def run_app(app: typer.Typer) -> None:
    """Run the app as a console script."""
    app()
