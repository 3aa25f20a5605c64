"""Turning what a user names (files, globs, folders) into the files to load."""

from __future__ import annotations

import glob
from pathlib import Path

from provgraph.errors import InputError, NotFound, ProvgraphError
from provgraph.ingest.decoders import SUFFIXES

__all__ = ["expand_paths", "paths_error"]

_MISSING = (": no such file", ": no file matches")


def expand_paths(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Files from paths, globs and folders (recursively, supported types only); plus one error per bad path."""
    files: list[Path] = []
    errors: list[str] = []
    for raw in paths:
        literal = Path(raw).exists() or not glob.has_magic(raw)  # "notes [draft].txt" is a name, not a pattern
        matches = [raw] if literal else sorted(glob.glob(raw, recursive=True))
        if not matches:
            errors.append(f"{raw}: no file matches")
        for m in matches:
            p = Path(m)
            if p.is_dir():
                found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES)
                if not found:
                    errors.append(f"{p}: folder has no supported files ({', '.join(sorted(SUFFIXES))})")
                files += found
            elif p.exists():
                files.append(p)
            else:
                errors.append(f"{p}: no such file")
    return list(dict.fromkeys(files)), errors


def paths_error(errors: list[str]) -> ProvgraphError:
    """The error of paths that gave nothing to load: NotFound when each names nothing, else InputError."""
    kind = NotFound if errors and all(e.endswith(_MISSING) for e in errors) else InputError
    return kind("; ".join(errors) if errors else "nothing to load")
