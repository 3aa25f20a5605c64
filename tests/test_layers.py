"""Imports point down the layers (DEVELOPERS.md): no module imports a layer above its own."""

from __future__ import annotations

import ast
from pathlib import Path

import provgraph

ROOT = Path(provgraph.__file__).parent
LEAVES = {"errors", "config", "layout", "events", "gc_pacing", "__init__"}
RANK = {
    "rdf": 0,
    "provenance": 1,
    "store": 2, "vectors": 2, "librarian": 2, "models": 2, "queue": 2,
    "ingest": 3, "extract": 3, "retrieval": 3, "agent": 3, "communities": 3,
    "explain": 4, "integrity": 4, "conversation": 4,
    "runtime": 5, "backends": 5,
    "cli": 6, "api": 6, "session": 6, "client": 7,
}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return [m for m in found if m.startswith("provgraph.")]


def test_every_package_has_a_rank() -> None:
    for path in ROOT.iterdir():
        name = path.stem if path.suffix == ".py" else path.name
        if (path.is_dir() and not (path / "__init__.py").exists()) or (path.is_file() and path.suffix != ".py"):
            continue
        if name.startswith("_") and name != "__init__":
            continue
        assert name in RANK or name in LEAVES, f"{name} has no layer"


def test_imports_point_down() -> None:
    upward = []
    for path in ROOT.rglob("*.py"):
        module = "provgraph." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
        here = _layer(module)
        for target in _imports(path):
            there = _layer(target)
            if there in LEAVES or here == "__init__" and module == "provgraph.__init__":
                continue
            if here in LEAVES:
                if there != "rdf":
                    upward.append(f"{module} (a leaf) imports {target}")
            elif RANK[there] > RANK[here]:
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_no_module_is_too_long() -> None:
    long = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if len(p.read_text(encoding="utf-8").splitlines()) > 450]
    assert long == []
