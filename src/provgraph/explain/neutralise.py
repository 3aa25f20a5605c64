"""The one neutraliser for text bound for a terminal: nothing from a document, an LLM or the store may
drive the terminal. C0/C1 controls (so every ANSI/CSI/OSC escape sequence), DEL and bidirectional
overrides/isolates are shown visibly as ``\\u001b``, ``\\u202e``…; newlines and tabs stay."""

from __future__ import annotations

import re

__all__ = ["neutralise", "escape_json"]

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f{_BIDI}]")  # json.dumps escapes C0 itself


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def neutralise(text: str) -> str:
    """``text`` safe to print: control and bidi-override characters as visible ``\\uXXXX`` (``\\r\\n`` kept)."""
    return _UNSAFE.sub(_visible, text)


def escape_json(serialised: str) -> str:
    """JSON text with DEL, C1 and bidi characters written as ``\\uXXXX`` escapes (still the same JSON value)."""
    return _UNSAFE_IN_JSON.sub(_visible, serialised)
