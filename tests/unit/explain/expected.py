"""The exact ``traces show`` text of the scenario's traces (shared by the unit and CLI tests)."""

from __future__ import annotations

from tests.unit.explain.scenario import SID_A, SID_D, SID_G, SID_S

GRAPH_RAG_WITH_PROVENANCE = f"""\
  [question] urn:trustgraph:question:{SID_G}
    Query: Who discovered polonium, and what was the new element named after?
    Time: 2026-03-13 11:00:00 UTC
  [grounding] urn:trustgraph:prov:grounding:{SID_G}
    Concepts: discovery, polonium
    Tokens: 50 in, 8 out (scripted)
  [exploration] urn:trustgraph:prov:exploration:{SID_G}
    Edges explored: 12
    Entities: Marie Curie, Pierre Curie, polonium
  [focus] urn:trustgraph:prov:focus:{SID_G}
    Focused on 3 edge(s)
      Edge: (Marie Curie, discovered, polonium)
        Reason: States who discovered polonium.
        Score: 0.83
        Source: Chunk 1 → Lab Journal (chars 0–66)
          Text: "Lab journal, 1898: Marie Curie discovered polonium in pitchblende."
        Source: Chunk 1 → Page 2 → Radioactivity Notes (chars 0–70)
          Text: "In 1898 Marie Curie discovered polonium, which she named after Poland."
      Edge: (polonium, named after, Poland)
        Reason: Gives the origin of the name.
        Score: 0.71
        Source: Chunk 1 → Page 2 → Radioactivity Notes (chars 0–70)
          Text: "In 1898 Marie Curie discovered polonium, which she named after Poland."
      Edge: (polonium, discovered in, 1898)
        Reason: Dates the discovery.
        Source: none recorded
    Tokens: 220 in, 40 out (scripted)
  [synthesis] urn:trustgraph:prov:synthesis:{SID_G}
    Tokens: 300 in, 25 out (scripted)

Marie Curie discovered polonium in 1898 and named it after Poland, her native country.
"""

DOC_RAG = f"""\
  [question] urn:trustgraph:docrag:{SID_D}
    Query: What does the lab journal record?
    Time: 2026-03-13 12:00:00 UTC
  [exploration] urn:trustgraph:docrag:{SID_D}/exploration
    Chunks retrieved: 2
      Chunk 1 → Lab Journal (chars 0–66)
      Chunk 1 → Page 2 → Radioactivity Notes (chars 0–70)
  [synthesis] urn:trustgraph:docrag:{SID_D}/synthesis
    Cited 1 chunk(s)
      Chunk 1 → Lab Journal (chars 0–66)
    Tokens: 220 in, 40 out (scripted)

The journal records that Marie Curie discovered polonium in pitchblende [1].
"""

AGENT = f"""\
  [question] urn:trustgraph:agent:{SID_A}
    Query: When was polonium discovered, and by whom?
    Time: 2026-03-13 13:00:00 UTC
  [analysis 1] urn:trustgraph:agent:{SID_A}/i1
    Thought: I should ask the knowledge graph.
    Action: knowledge-query
    Arguments: {{"question": "Who discovered polonium?"}}
    Observation: Marie Curie discovered polonium.
    Tokens: 220 in, 40 out (scripted)
    Sub-trace (GraphRAG):
      [question] urn:trustgraph:question:{SID_S}
        Query: Who discovered polonium?
        Time: 2026-03-13 13:00:01 UTC
        Informed by: urn:trustgraph:agent:{SID_A}
      [exploration] urn:trustgraph:prov:exploration:{SID_S}
        Edges explored: 12
        Entities: Marie Curie, Pierre Curie, polonium
      [focus] urn:trustgraph:prov:focus:{SID_S}
        Focused on 1 edge(s)
          Edge: (Marie Curie, discovered, polonium)
            Reason: Names the discoverer.
            Score: 0.90
        Tokens: 220 in, 40 out (scripted)
      [synthesis] urn:trustgraph:prov:synthesis:{SID_S}
        Tokens: 300 in, 25 out (scripted)
        Answer: Marie Curie discovered polonium.
  [analysis 2] [error] urn:trustgraph:agent:{SID_A}/i2
    Thought: I need the year; let me compute it.
    Action: calculator
    Arguments: {{"expression": "1900 - 2"}}
    Observation: error: unknown tool 'calculator'
  [analysis 3] urn:trustgraph:agent:{SID_A}/i3
    Thought: The journal gives the year.
             It says 1898.
    Action: text-completion
    Arguments: {{"prompt": "year?"}}
    Observation: 1898
  [conclusion] urn:trustgraph:agent:{SID_A}/final
    Termination: final-answer

Marie Curie discovered polonium in 1898.
"""
