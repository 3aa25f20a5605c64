"""An independent citation checker for answers (deliberately not the product's sentence splitter)."""

from __future__ import annotations

import re

_CITED = re.compile(r"[^\[\]]+?((?:\s?\[\d+\])+)[.!?](?:\s+|$)")


def citations_per_sentence(answer: str) -> list[set[str]]:
    """The markers of each sentence; fails unless the WHOLE answer is sentences ending ``… [n].``."""
    found, pos = [], 0
    while pos < len(answer):
        match = _CITED.match(answer, pos)
        assert match is not None, f"uncited text at {pos}: {answer[pos:pos + 80]!r}"
        found.append(set(re.findall(r"\[\d+\]", match.group(1))))
        pos = match.end()
    assert found, "empty answer"
    return found
