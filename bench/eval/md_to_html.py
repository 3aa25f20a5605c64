"""Wrap a Markdown-ish text file in minimal HTML, mechanically (used once to make the sets' .html documents).

Blocks are separated by blank lines; a one-line block under 100 characters without end punctuation becomes
``<h2>``, every other block ``<p>``; the text is HTML-escaped and otherwise unchanged.

    python bench/eval/md_to_html.py SOURCE.md "Title" > OUT.html
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path


def to_html(text: str, title: str) -> str:
    """The HTML page for ``text``."""
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">", f"<title>{html.escape(title)}</title>",
           "</head><body>", f"<h1>{html.escape(title)}</h1>"]
    for block in re.split(r"\n\s*\n", text.strip()):
        block = block.strip()
        if not block:
            continue
        heading = "\n" not in block and len(block) < 100 and block[-1] not in ".!?:;,)]\""
        tag = "h2" if heading else "p"
        out.append(f"<{tag}>{html.escape(block, quote=False)}</{tag}>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(to_html(Path(sys.argv[1]).read_text(encoding="utf-8"), sys.argv[2]))
