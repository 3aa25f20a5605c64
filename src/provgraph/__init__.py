"""provgraph: explainable knowledge-graph RAG in RDF 1.2 and PROV-O.

Every fact traces to the text it came from, and every answer to the facts it used.
``Provgraph`` is the Python API (see :mod:`provgraph.session`); ``provgraph`` is the CLI.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if "numpy" not in sys.modules:
    # provgraph's matrix products are small (a question against a few thousand vectors): OpenBLAS's
    # helper threads gain nothing on them and spin after each one, doubling a query's CPU time.
    # A value the user set is kept; once numpy is loaded the variable is no longer read.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
__all__ = ["__version__", "Provgraph", "Answer", "Client", "AsyncClient"]

if TYPE_CHECKING:
    from provgraph.client import AsyncClient, Client
    from provgraph.session import Answer, Provgraph


def __getattr__(name: str) -> Any:
    # lazy, so `import provgraph.rdf` does not load the whole stack
    if name in ("Provgraph", "Answer"):
        from provgraph import session

        return getattr(session, name)
    if name in ("Client", "AsyncClient"):
        from provgraph import client

        return getattr(client, name)
    raise AttributeError(f"module 'provgraph' has no attribute {name!r}")
