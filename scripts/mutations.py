"""Re-apply issue 29's twelve surviving one-line bugs, one at a time, and see which tests turn red.

Each break is applied to a fresh copy of the committed tree (``git worktree add --detach`` at HEAD, in a
temporary folder), then the tests expected to catch it run against that copy with this checkout's
interpreter (``PYTHONPATH`` puts the copy's ``src`` first, so server subprocesses import the broken code
too). A break whose text is not found exactly once is reported as such: the code moved and the break must
be written again. Usage::

    .venv/bin/python scripts/mutations.py            # all breaks
    .venv/bin/python scripts/mutations.py token-0644 loopback-any-name
    .venv/bin/python scripts/mutations.py --list
    .venv/bin/python scripts/mutations.py --baseline  # the selected tests on the unbroken copy first

Exit status 0 only when every break run turned at least one test red (and, with --baseline, the unbroken
copy was green).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Break:
    name: str
    area: str
    file: str  # under src/provgraph
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids or files, relative to the repository


BREAKS = (
    Break("job-owner-check", "isolation: an owner check dropped from a job route",
          "api/routes_jobs.py", "if job is None or job.user != user:", "if job is None:",
          ("tests/server/test_isolation.py",)),
    Break("records-server-user", "isolation: the records route opens the server's own user",
          "api/routes_records.py",
          'state_of(request).pool.use(request_settings(request, check_name("collection", collection)))',
          'state_of(request).pool.use(state_of(request).settings_for(state_of(request).settings.user, '
          'check_name("collection", collection)))',
          ("tests/server/test_isolation.py",)),
    Break("websocket-user-from-body", "isolation: the WebSocket takes the user from the request body",
          "api/socket.py", "return self.state.settings_for(self.user, collection, **overrides)",
          'return self.state.settings_for(request.get("user", "default"), collection, **overrides)',
          ("tests/server/test_isolation.py",)),
    Break("restore-member-anchor", "restore: the member check loses its anchor",
          "integrity/backup.py", r'|vectors/[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}/records\.sqlite)$")',
          r'|vectors/[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}/records\.sqlite)")',
          ("tests/integration/test_restore_hostile.py",)),
    Break("restore-no-quad-count", "restore: the quad count is not compared",
          "integrity/backup_checks.py", 'found = {"quads": quads}', 'found = {"quads": counts["quads"]}',
          ("tests/integration/test_restore_hostile.py",)),
    Break("token-0644", "security settings: the token file written 0644",
          "api/tokens.py", "os.chmod(tmp, 0o600)", "os.chmod(tmp, 0o644)",
          ("tests/unit/api/test_security_settings.py",)),
    Break("loopback-any-name", "security settings: is_loopback treats any host name as loopback",
          "api/origin.py", 'return name == "localhost" or (ip is not None and ip.is_loopback)',
          'return name == "localhost" or ip is None or ip.is_loopback',
          ("tests/unit/api/test_security_settings.py",)),
    Break("digest-equals", "security settings: token digests compared with ==",
          "api/tokens.py", "if hmac.compare_digest(known, digest):", "if known == digest:",
          ("tests/unit/api/test_security_settings.py",)),
    Break("neutralise-no-lre-rlo", "terminal neutralisation: U+202A-U+202D not neutralised",
          "explain/neutralise.py", r'_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"',
          r'_BIDI = "\u061c\u200e\u200f\u202e\u2066-\u2069"',
          ("tests/integration/test_every_control.py::test_each_code_point_is_shown_visibly",)),
    Break("repair-embeds-ids", "check --repair: embeds the record ids (chunk IRIs) instead of their texts",
          "integrity/check.py", "embedder.embed([r.text for r in part])", "embedder.embed([r.id for r in part])",
          ("tests/integration/test_repair_vectors.py",)),
    Break("sse-buffered", "streaming: the SSE route sends every message at the end",
          "api/routes_rag.py", "        async for message in messages:\n            yield b\"data: \"",
          "        for message in [m async for m in messages]:\n            yield b\"data: \"",
          ("tests/server/test_streams.py::test_a_querys_steps_and_answer_pieces_arrive_while_the_llm_is_held",)),
    Break("job-stream-final-only", "streaming: the job stream sends only its final state",
          "api/routes_jobs.py", "        if view != last:",
          '        if view != last and view["status"] in ("done", "failed"):',
          ("tests/server/test_streams.py::test_a_load_jobs_stream_sends_each_state_as_it_happens",)),
    Break("agent-stale-ignores-others", "agent traces: staleness ignores other_sub_traces",
          "explain/model.py", "return tuple(r for t in self.sub_traces for r in t.retracted)",
          "return tuple(r for a in self.analyses if a.sub_trace is not None for r in a.sub_trace.retracted)",
          ("tests/unit/explain/test_rendering.py",)),
    Break("dense-only", "answer quality: retrieval ranks by the dense index alone",
          "retrieval/hybrid.py", "lists = {LEXICAL: [(h.id, h.score) for h in keyword.result()]}",
          "lists = {LEXICAL: [(h.id, h.score) for h in keyword.result()][:0]}",
          ("tests/integration/test_quality_gate.py",)),
)


def _copy(folder: Path) -> Path:
    """A detached worktree of HEAD in ``folder``."""
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), "HEAD"], check=True)
    return tree


def _drop(tree: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def _apply(tree: Path, brk: Break) -> str | None:
    """Apply the break; an error message when its text is not found exactly once."""
    path = tree / "src" / "provgraph" / brk.file
    text = path.read_text(encoding="utf-8")
    found = text.count(brk.old)
    if found != 1:
        return f"the text to break is found {found} times in src/provgraph/{brk.file}"
    path.write_text(text.replace(brk.old, brk.new), encoding="utf-8")
    return None


def _pytest(tree: Path, tests: tuple[str, ...], tmp: Path) -> tuple[int, float, str]:
    """Run ``tests`` in ``tree`` with this interpreter; exit code, seconds, the first failure (or pytest's last line)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROVGRAPH_")}
    env.update(PYTHONPATH=f"{tree / 'src'}{os.pathsep}{tree}", TMPDIR=str(tmp), PYTHONDONTWRITEBYTECODE="1")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-rf", "-p", "no:cacheprovider",
                           "-o", "tmp_path_retention_policy=none", *tests],
                          cwd=tree, env=env, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    failed = [line for line in lines if line.startswith("FAILED ")]
    last = (failed or lines or [proc.stderr.strip()[-200:]])[0 if failed else -1]
    return proc.returncode, time.monotonic() - start, last[:160]


def _imports_the_copy(tree: Path) -> bool:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run([sys.executable, "-c", "import provgraph; print(provgraph.__file__)"], env=env,
                         capture_output=True, text=True, check=True).stdout
    return Path(out.strip()).is_relative_to(tree)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("names", nargs="*", help="breaks to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the breaks and their tests")
    parser.add_argument("--baseline", action="store_true", help="run each break's tests unbroken first")
    args = parser.parse_args(argv)
    by_name = {b.name: b for b in BREAKS}
    if args.list:
        for b in BREAKS:
            print(f"{b.name:28} {b.area}\n{'':28} src/provgraph/{b.file}; {' '.join(b.tests)}")
        return 0
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error(f"unknown break(s) {', '.join(unknown)}; see --list")
    chosen = [by_name[n] for n in args.names] if args.names else list(BREAKS)
    ok = True
    base = Path(os.environ.get("TMPDIR", "/tmp"))
    with tempfile.TemporaryDirectory(prefix="mutations-", dir=base) as tmp_dir:
        tmp = Path(tmp_dir)
        if args.baseline:
            tree = _copy(tmp)
            try:
                tests = tuple(dict.fromkeys(t for b in chosen for t in b.tests))
                code, seconds, last = _pytest(tree, tests, tmp)
                print(f"{'baseline':28} {'green' if code == 0 else 'RED':6} {seconds:6.1f} s  {last}", flush=True)
                ok = code == 0
            finally:
                _drop(tree)
        for brk in chosen:
            tree = _copy(tmp)
            try:
                if not _imports_the_copy(tree):
                    raise SystemExit("the copy's src is not what Python imports: check PYTHONPATH handling")
                problem = _apply(tree, brk)
                if problem is not None:
                    print(f"{brk.name:28} {'NOT APPLIED':6} {problem}", flush=True)
                    ok = False
                    continue
                code, seconds, last = _pytest(tree, brk.tests, tmp)
                caught = code == 1  # tests failed; other codes (errors, nothing collected) are not a catch
                print(f"{brk.name:28} {'red' if caught else 'GREEN':6} {seconds:6.1f} s  {last}", flush=True)
                ok = ok and caught
            finally:
                _drop(tree)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
