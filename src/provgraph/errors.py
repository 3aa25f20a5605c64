"""The one exception tree of provgraph.

    ProvgraphError
    ├── ConfigError            bad or missing configuration
    ├── InputError             bad user input: files, arguments, labels
    │   └── DecodeError        a document could not be decoded
    ├── NotFound               a document, collection, trace… does not exist
    ├── StoreError             the quad store failed
    │   ├── StoreUnavailable   the store cannot be opened (locked, missing)  [Retryable]
    │   └── QueryError         a SPARQL query or a data file is malformed
    ├── IndexError_            the vector index failed (dimension mismatch…)
    └── ModelError             an LLM or embedder failed
        ├── ModelUnavailable   no model configured, or endpoint unreachable  [Retryable]
        └── MalformedOutput    the model answered, but not in the asked shape

Messages name the thing and the fix. ``cli/`` maps these to exit codes in one place.
"""

from __future__ import annotations

__all__ = [
    "NO_SPACE_ADVICE",
    "out_of_space",
    "failure_advice",
    "require_at_least_one",
    "ProvgraphError",
    "Retryable",
    "ConfigError",
    "InputError",
    "DecodeError",
    "NotFound",
    "StoreError",
    "StoreUnavailable",
    "QueryError",
    "IndexError_",
    "ModelError",
    "ModelUnavailable",
    "MalformedOutput",
]


class ProvgraphError(Exception):
    """Root of every error provgraph raises on purpose."""


class Retryable:
    """Mixin: marks a failure that may succeed when tried again."""


class ConfigError(ProvgraphError):
    """Raised when configuration is missing, contradictory or invalid."""


class InputError(ProvgraphError):
    """Raised when user input (a file, an argument, a label) cannot be used."""


class DecodeError(InputError):
    """Raised when a document's bytes cannot be decoded into text."""


class NotFound(ProvgraphError):
    """Raised when a named document, collection, trace or record does not exist."""


class StoreError(ProvgraphError):
    """Raised when the quad store fails; the message names the collection and the cause."""


class StoreUnavailable(StoreError, Retryable):
    """Raised when the store cannot be opened (locked by another process, unreadable)."""


class QueryError(StoreError):
    """Raised when a SPARQL query or an RDF file is malformed; the message has the position."""


class IndexError_(ProvgraphError):  # noqa: N801 - avoid shadowing the builtin IndexError
    """Raised when the vector index fails, e.g. on a dimension or model mismatch."""


class ModelError(ProvgraphError):
    """Raised when an LLM or an embedder fails; the message names provider, model and cause."""


class ModelUnavailable(ModelError, Retryable):
    """Raised when no model is configured, or its endpoint cannot be reached."""


class MalformedOutput(ModelError):
    """Raised when a model answered but not in the requested shape; keeps the raw text."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


NO_SPACE_ADVICE = "the disk is full: free some space, then run the command again"


def out_of_space(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full: RocksDB's, SQLite's and the OS's wordings."""
    text = str(exc).lower()
    return getattr(exc, "errno", None) in (28, 122) or any(
        words in text for words in ("no space left", "disk is full", "disk quota exceeded", "out of space"))


def failure_advice(exc: BaseException, otherwise: str) -> str:
    """What to do about a store that cannot be opened or read: free space when the disk is full (a backup
    would not help and restoring one needs space too), else ``otherwise``."""
    return NO_SPACE_ADVICE if out_of_space(exc) else otherwise


def require_at_least_one(what: str, params: object, names: tuple[str, ...]) -> None:
    """InputError naming the first of ``params``' fields ``names`` under 1 (``what max-size must be at least 1``).

    >>> from types import SimpleNamespace
    >>> require_at_least_one("community", SimpleNamespace(max_size=0), ("max_size",))
    Traceback (most recent call last):
    ...
    provgraph.errors.InputError: community max-size must be at least 1, got 0
    """
    for name in names:
        if getattr(params, name) < 1:
            raise InputError(f"{what} {name.replace('_', '-')} must be at least 1, got {getattr(params, name)}")
