"""Python clients of ``provgraph serve``: :class:`AsyncClient` and :class:`Client` (which drives it).

They have the methods of :class:`provgraph.Provgraph` and give the same typed results: an
:class:`~provgraph.session.Answer` with its sources and steps, and streams of the same events.

>>> from provgraph import Client                                            # doctest: +SKIP
>>> with Client("http://127.0.0.1:8400", token, collection="demo") as pg:  # doctest: +SKIP
...     answer = pg.graph_rag("Who discovered polonium?")
...     print(answer.text, [s.title for s in answer.sources])
"""

from __future__ import annotations

from provgraph.client.async_client import AsyncClient
from provgraph.client.sync_client import Client

__all__ = ["AsyncClient", "Client"]
