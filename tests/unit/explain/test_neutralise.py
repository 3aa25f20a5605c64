"""The terminal neutraliser and the JSON escaper."""

from __future__ import annotations

import json

import pytest

from provgraph.explain.neutralise import escape_json, neutralise


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;pwned\x07", "\\u001b]0;pwned\\u0007"),  # OSC: window title
        ("\x1b[2J", "\\u001b[2J"),  # CSI: clear screen
        ("\x9b31m", "\\u009b31m"),  # C1 CSI
        ("a\x7fb", "a\\u007fb"),
        ("abc\u202egnp.exe", "abc\\u202egnp.exe"),
        ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("over\rwrite", "over\\u000dwrite"),
        ("lines\r\nand\ttabs\n", "lines\r\nand\ttabs\n"),  # layout survives
        ("naïve café 👩‍🔬 日本語 שלום", "naïve café 👩‍🔬 日本語 שלום"),
    ],
)
def test_controls_and_bidi_overrides_are_shown_visibly(raw: str, shown: str) -> None:
    assert neutralise(raw) == shown


def test_json_escaping_keeps_the_value() -> None:
    value = {"t": "\x1b]0;x\x07 \x9b \u202e é"}
    text = escape_json(json.dumps(value, ensure_ascii=False))
    assert text == '{"t": "\\u001b]0;x\\u0007 \\u009b \\u202e é"}'
    assert json.loads(text) == value
