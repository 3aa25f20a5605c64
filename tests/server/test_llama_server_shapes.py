"""provgraph against the reply shapes recorded from llama.cpp's ``llama-server`` (build b1-0c1e570).

An extraction's output budget follows its chunk.
Measured: SmolLM2-135M on llama.cpp's ``llama-server`` answered the relationships call for a
257-character chunk with 1024 tokens (``finish_reason: "length"``, 58 s of generation under load)
because the schema allows 60 items and only the general cap bounded the call.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from provgraph.extract.base import ChunkInput
from provgraph.extract.llm_extractors import relationships_extractor
from provgraph.models.base import user
from provgraph.models.openai_compat import OpenAIChatModel
from provgraph.rdf.terms import Iri
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.server

SHORT = ("The Radium Institute was a research centre for radioactivity in Paris. The University of Paris "
         "and the Pasteur Institute founded it together in 1909. Marie Curie directed the Curie laboratory, "
         "which studied the physics and chemistry of radioactive elements.\n")
ITEM = {"subject": "The University of Paris", "predicate": "founded", "object": "The Radium Institute",
        "object_is_literal": False, "quote": "The University of Paris and the Pasteur Institute founded it"}


def cut_off_reply(completion_tokens: int) -> Reply:
    """``llama-server``'s reply when generation stops at ``max_tokens``: the JSON is cut mid-item."""
    content = '{"relationships":[' + json.dumps(ITEM) + ', {"subject": "The Radium Institute", "predicate": "was'
    return Reply(body={
        "choices": [{"finish_reason": "length", "index": 0, "message": {"role": "assistant", "content": content}}],
        "created": 1796087009, "model": "SmolLM2-135M-Instruct.Q4_1.gguf", "system_fingerprint": "b1-0c1e570",
        "object": "chat.completion", "id": "chatcmpl-R7PQ1H2v9Wrgb7bRgQ302nKzwLKOdg5V",
        "usage": {"completion_tokens": completion_tokens, "prompt_tokens": 384,
                  "total_tokens": 384 + completion_tokens, "prompt_tokens_details": {"cached_tokens": 0}},
        "timings": {"cache_n": 0, "prompt_n": 384, "predicted_n": completion_tokens},
    })


@pytest.mark.parametrize(("text", "expected"), [(SHORT, 128 + len(SHORT)), ("word " * 400, 1024)])
def test_an_extraction_asks_for_tokens_in_proportion_to_its_chunk_and_keeps_complete_items(
        text: str, expected: int) -> None:
    with FakeOpenAIServer(default=cut_off_reply(expected)) as server:
        llm = OpenAIChatModel(model="smollm2", base_url=server.base_url, timeout=5, max_tokens=1024)
        extractor = relationships_extractor(llm, entity_base="urn:e:")
        extraction = asyncio.run(extractor.extract(ChunkInput(Iri("urn:chunk:1"), text, Iri("urn:doc:d"))))
        (request,) = server.chat_requests()
    assert request.body["max_tokens"] == expected
    assert request.body["response_format"]["type"] == "json_schema"
    assert len(extraction.facts) == 1  # the complete item before the cut
    assert (extraction.llm.input_tokens, extraction.llm.output_tokens) == (384, expected)


def test_a_llama_server_stream_yields_its_text_and_the_usage_of_its_last_chunk() -> None:
    base = {"created": 1796087009, "id": "chatcmpl-djQ6N0RHivVuQBvUQnfeKElS6SXECXGa", "model": "smollm2",
            "system_fingerprint": "b1-0c1e570", "object": "chat.completion.chunk"}
    events = [{**base, "choices": [{"finish_reason": None, "index": 0,
                                    "delta": {"role": "assistant", "content": None}}]}]
    events += [{**base, "choices": [{"finish_reason": None, "index": 0, "delta": {"content": p}}]}
               for p in ("A", "w", "esome", "!")]
    events.append({**base, "choices": [{"finish_reason": "length", "index": 0, "delta": {}}]})
    events.append({**base, "choices": [], "usage": {"completion_tokens": 8, "prompt_tokens": 32, "total_tokens": 40,
                                                     "prompt_tokens_details": {"cached_tokens": 24}},
                   "timings": {"cache_n": 24, "prompt_n": 8, "predicted_n": 8}})

    async def run(url: str) -> tuple[list[str], object]:
        stream = OpenAIChatModel(model="smollm2", base_url=url, timeout=5).stream([user("Say hi")], max_tokens=8)
        pieces = [p async for p in stream]
        return pieces, stream.usage

    with FakeOpenAIServer(default=Reply(events=events)) as server:
        pieces, usage = asyncio.run(run(server.base_url))
        (request,) = server.chat_requests()
    assert request.body["stream_options"] == {"include_usage": True}
    assert pieces == ["A", "w", "esome", "!"]
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (32, 8, False)
