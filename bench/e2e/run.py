"""End-to-end: a real framework behind uvicorn, under load, before and after ``dupguard fix``.

For each framework app in ``apps/`` (``<framework>_before.py``): the ``before`` app as written, and
the ``fixed`` app that ``dupguard fix --unsafe-fixes`` makes from it in this run (never edited by
hand), each served by uvicorn with 1 and 4 workers, with the runtime store on SQLite and on Redis,
driven by ``load.py`` against the scripted model of ``fake_openai.py``. Prints one table row per
(framework, app, workers, store): min/median/max over ``--runs``.

    python bench/e2e/run.py                    # the full matrix, 3 runs each
    python bench/e2e/run.py --quick            # one framework, one configuration, fewer requests

See README.md beside this file. Everything listens on 127.0.0.1 and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from load import Load, run_load, score

COLUMNS = ("duplicate_refunds", "cross_user_refunds", "leaks", "kept_pct", "failed_requests", "rps")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, process: subprocess.Popen, timeout: float = 60.0, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = log.read_text(errors="replace")[-4000:] if log is not None and log.exists() else ""
            raise RuntimeError(f"server exited with {process.returncode}: {said}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port} after {timeout} s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def python_for(framework: str, args: argparse.Namespace) -> str:
    """The interpreter that has the framework (LlamaIndex's OpenAI client needs ``openai<3``, the
    Agents SDK ``openai>=3``: they cannot share one environment)."""
    return getattr(args, f"python_{framework}", None) or sys.executable


def make_fixed(before: Path, workdir: Path, python: str) -> tuple[Path, str]:
    """Copy the app and run ``dupguard fix --unsafe-fixes`` on it; returns (file, what
    ``dupguard check`` still reports on it: empty when nothing)."""
    fixed_dir = workdir / "fixed"
    fixed_dir.mkdir(parents=True, exist_ok=True)
    target = fixed_dir / "app.py"
    shutil.copyfile(before, target)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    subprocess.run(
        [python, "-m", "dupguard", "fix", "--unsafe-fixes", "--isolated", str(target)],
        cwd=fixed_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    check = subprocess.run(
        [python, "-m", "dupguard", "check", "--isolated", "--no-cache", "--output-format", "concise", str(target)],
        cwd=fixed_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    return target, (check.stdout.strip() if check.returncode else "")


def serve_and_load(
    app_file: Path,
    python: str,
    workers: int,
    store: str,
    fake_url: str,
    load: Load,
    workdir: Path,
    first_on_path: tuple[Path, ...] = (),
) -> dict[str, float]:
    """Serve ``app_file`` under uvicorn (``workers`` processes, ``DUPGUARD_STORE=store``), drive
    ``load`` against it and score the run. The server's stderr goes to ``server-<port>.log`` in
    ``workdir`` (a pipe nobody reads would block a server that logs much). ``first_on_path``
    come before everything on the server's ``PYTHONPATH`` (overhead.py's plain stand-ins)."""
    port = free_port()
    shop_db = workdir / f"shop-{port}.db"
    log = workdir / f"server-{port}.log"
    store = fresh_store(store, workdir)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([*map(str, first_on_path), str(app_file.parent), str(HERE), str(ROOT / "src")]),
        "FAKE_OPENAI_URL": fake_url,
        "SHOP_DB": str(shop_db),
        "SESSION_DB": str(workdir / f"sessions-{port}.db"),
        "DUPGUARD_STORE": store,
    }
    with open(log, "w") as errors:
        server = subprocess.Popen(
            [
                python,
                "-m",
                "uvicorn",
                f"{app_file.stem}:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--log-level",
                "warning",
            ],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        wait_port(port, server, log=log)
        cpu_before = server_cpu(server.pid)
        outcome, secrets = asyncio.run(run_load(f"http://127.0.0.1:{port}", load))
        cpu_after = server_cpu(server.pid)
    finally:
        stop(server)
    result = score(str(shop_db), outcome, secrets)
    if cpu_before is not None and cpu_after is not None and outcome.sent:
        result["server_cpu_ms"] = 1000 * (cpu_after - cpu_before) / outcome.sent
    return result


def server_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) used so far by process ``pid`` and its descendants (the
    uvicorn workers), from ``/proc``; ``None`` where there is no ``/proc`` (not Linux).

    The server's CPU per request measures what the app costs even on a machine busy with other
    work, where requests per second mostly measure how much of the CPU the server was given."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    stats: dict[int, tuple[int, float]] = {}  # pid -> (parent, cpu seconds)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        # after the command: state, ppid, …, utime (14th field of the line) and stime (15th)
        stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    if pid not in stats:
        return None
    total, frontier = 0.0, [pid]
    while frontier:
        current = frontier.pop()
        total += stats[current][1]
        frontier.extend(child for child, (parent, _cpu) in stats.items() if parent == current)
    return total


def fresh_store(url: str, workdir: Path) -> str:
    """An empty store for one run: the load's request ids are the same in every run, so records
    left by an earlier run would replay its tool calls and hide this run's duplicates. SQLite: a
    file in the run's directory; Redis: the database emptied first."""
    if url.startswith("sqlite:///"):
        return f"sqlite:///{workdir / 'dupguard-store.db'}"
    if url.startswith("redis://"):
        import redis

        client = redis.Redis.from_url(url)
        try:
            client.flushdb()
        finally:
            client.close()
    return url


@contextlib.contextmanager
def fake_model(
    workdir: Path,
    *,
    error_rate: float = 0.05,
    stall_rate: float = 0.01,
    stall: float = 8.0,
    min_latency: float = 0.05,
    max_latency: float = 0.3,
    after_tool_error_rate: float = 0.0,
    seed: int = 1,
) -> Iterator[str]:
    """The scripted model (``fake_openai.py``) on a free port; yields its base URL."""
    port = free_port()
    log = workdir / "fake-model.log"
    with open(log, "w") as errors:
        fake = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "fake_openai.py"),
                "--port",
                str(port),
                "--seed",
                str(seed),
                "--error-rate",
                str(error_rate),
                "--stall-rate",
                str(stall_rate),
                "--stall",
                str(stall),
                "--min-latency",
                str(min_latency),
                "--max-latency",
                str(max_latency),
                "--after-tool-error-rate",
                str(after_tool_error_rate),
            ],
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        wait_port(port, fake, log=log)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(fake)


def stores(kinds: list[str], workdir: Path) -> tuple[dict[str, str], list[subprocess.Popen]]:
    out, processes = {}, []
    for kind in kinds:
        if kind == "sqlite":
            out[kind] = f"sqlite:///{workdir / 'dupguard-store.db'}"
        elif kind == "redis":
            port = free_port()
            redis = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
            )
            wait_port(port, redis)
            processes.append(redis)
            out[kind] = f"redis://127.0.0.1:{port}/0"
    return out, processes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default="openai_agents,llamaindex")
    parser.add_argument("--workers", default="1,4")
    parser.add_argument("--stores", default="sqlite,redis")
    parser.add_argument("--apps", default="before,fixed")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--requests", type=int, default=5, help="requests per user")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--error-rate", type=float, default=0.05)
    parser.add_argument("--stall-rate", type=float, default=0.01)
    parser.add_argument("--min-latency", type=float, default=0.05)
    parser.add_argument("--max-latency", type=float, default=0.3)
    parser.add_argument(
        "--after-tool-error-rate", type=float, default=0.0, help="extra model 500s right after a tool result"
    )
    parser.add_argument("--python-llamaindex", help="interpreter with llama-index-core and llama-index-llms-openai")
    parser.add_argument("--python-openai_agents", help="interpreter with openai-agents")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--quick", action="store_true", help="openai_agents, fixed and before, 1 worker, sqlite, 1 run")
    args = parser.parse_args(argv)
    if args.quick:
        args.frameworks, args.workers, args.stores, args.runs = "openai_agents", "1", "sqlite", 1
        args.users, args.requests = 8, 4
    load = Load(users=args.users, requests_per_user=args.requests, concurrency=args.concurrency)
    rows = []
    with tempfile.TemporaryDirectory(prefix="dupguard-e2e-") as tmp:
        workdir = Path(tmp)
        store_urls, store_processes = stores(args.stores.split(","), workdir)
        try:
            with fake_model(
                workdir,
                error_rate=args.error_rate,
                stall_rate=args.stall_rate,
                min_latency=args.min_latency,
                max_latency=args.max_latency,
                after_tool_error_rate=args.after_tool_error_rate,
            ) as fake_url:
                for framework in args.frameworks.split(","):
                    rows += run_framework(framework, args, load, store_urls, fake_url, workdir)
        finally:
            for process in store_processes:
                stop(process)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


def run_framework(
    framework: str, args: argparse.Namespace, load: Load, store_urls: dict[str, str], fake_url: str, workdir: Path
) -> list[dict]:
    """The rows of one framework: its ``before`` app and the ``fixed`` one made in this run."""
    python = python_for(framework, args)
    before = HERE / "apps" / f"{framework}_before.py"
    fixed, remaining = make_fixed(before, workdir / framework, python)
    if remaining:
        print(f"# {framework}: `dupguard check` on the fixed app:\n#   " + remaining.replace("\n", "\n#   "))
    rows = []
    for app_name in args.apps.split(","):
        app_file = before if app_name == "before" else fixed
        for workers in map(int, args.workers.split(",")):
            for store, url in store_urls.items():
                runs = []
                for _ in range(args.runs):
                    run_dir = Path(tempfile.mkdtemp(dir=workdir))
                    runs.append(serve_and_load(app_file, python, workers, url, fake_url, load, run_dir))
                row = {"framework": framework, "app": app_name, "workers": workers, "store": store}
                for column in COLUMNS:
                    values = [r[column] for r in runs]
                    row[column] = (min(values), statistics.median(values), max(values))
                rows.append(row)
                print(format_row(row), flush=True)
    return rows


def format_row(row: dict) -> str:
    def cell(values: tuple) -> str:
        low, mid, high = values
        return f"{mid:g}" if low == high else f"{mid:g} ({low:g}–{high:g})"

    head = f"| {row['framework']} | {row['app']} | {row['workers']} | {row['store']} |"
    return head + "".join(f" {cell(row[c])} |" for c in COLUMNS)


if __name__ == "__main__":
    sys.exit(main())
