"""How long ``dupguard server`` takes to re-lint an agent file after an edit, warm.

    python bench/lsp_bench.py [--edits 40] [--warmup 5] [--lines 300]

The file is a FastAPI agent service of about ``--lines`` lines (written by this script into a
temporary project: tools, a shared agent and memory, routes, a retry loop, helpers), so that it
passes the prefilter, is parsed and analysed, and has findings. A real server process is
started with pygls' ``LanguageClient`` over stdio, with the debounce set to 0 (the
``debounce`` initialization option) so that what is measured is the lint, not the wait for
typing to stop. The file is opened, ``--warmup`` edits are made (the first lint imports
libcst and the rules, and builds the project index), then each of ``--edits`` edits changes
one string literal in a route, sent as an editor sends it (an incremental
``textDocument/didChange``), and the time from sending it to receiving the
``publishDiagnostics`` for that version is recorded: the round trip an editor sees, with the
JSON-RPC framing, the buffer update and the publishing included.

The server's CPU time over the timed edits (user + system, from ``/proc/<pid>/stat``) is
reported too, divided by the number of edits: on a shared machine the wall-clock figures
include the time the server waited for a core, the CPU figure does not.

Second figure, in process: ``dupguard.editor.Engine.lint`` on the same edited texts (the
server's analysis without the protocol), wall and CPU time.

The acceptance bound (issue 17): ≤ 50 ms, warm. Results are kept by hand in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HEAD = '''\
"""A support service: one agent per request, tools over the order database."""

import asyncio
import json
import logging
from dataclasses import dataclass

from agents import Agent, Runner, function_tool
from fastapi import FastAPI, HTTPException
from langchain.memory import ConversationBufferMemory
from pydantic import BaseModel

log = logging.getLogger(__name__)
app = FastAPI()
memory = ConversationBufferMemory(memory_key="history")


class Question(BaseModel):
    user: str
    text: str


@dataclass
class Order:
    id: str
    total: float
    status: str = "open"


ORDERS: dict[str, Order] = {}

'''

TOOL = '''
@function_tool
def tool_{n}(order_id: str) -> str:
    """Look up order field {n}."""
    order = ORDERS.get(order_id)
    if order is None:
        return "no such order"
    return json.dumps({{"id": order.id, "field": {n}, "status": order.status}})

'''

ROUTE = """
@app.post("/ask/{n}")
async def ask_{n}(question: Question):
    if not question.text:
        raise HTTPException(status_code=400, detail="empty question {n}")
    result = await Runner.run(support, question.text)
    log.info("answered %s", "route {n}")
    return {{"answer": result.final_output, "route": {n}}}

"""

TAIL = """
support = Agent(name="support", tools=[{tools}, tool_0])


async def answer_with_retries(text: str):
    for attempt in range(3):
        try:
            return await Runner.run(support, text)
        except Exception:
            await asyncio.sleep(2**attempt)
    raise RuntimeError("gave up")


@app.post("/retry")
async def retry(question: Question):
    return {{"answer": (await answer_with_retries(question.text)).final_output}}
"""


def agent_file(lines: int) -> str:
    """An agent service of about ``lines`` lines."""
    parts = [HEAD]
    n = 0
    while sum(p.count("\n") for p in parts) < lines - 20:
        parts.append(TOOL.format(n=n) if n % 2 == 0 else ROUTE.format(n=n))
        n += 1
    tools = ", ".join(f"tool_{i}" for i in range(0, n, 2))
    parts.append(TAIL.format(tools=tools))
    return "".join(parts)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def round_trips(
    root: Path, text: str, edits: int, warmup: int
) -> tuple[list[float], list[str], int, float | None]:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient
    from pygls.uris import from_fs_path

    client = LanguageClient("dupguard-bench", "1")
    published: dict[int, list] = {}
    arrived: dict[int, float] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            arrived[params.version] = time.perf_counter()
            published[params.version] = list(params.diagnostics)

    await client.start_io(sys.executable, "-m", "dupguard", "server", cwd=str(root))
    uri = from_fs_path(str(root / "service.py"))
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=from_fs_path(str(root)),
            initialization_options={"debounce": 0},
        )
    )
    client.initialized(types.InitializedParams())

    async def until(version: int) -> None:
        deadline = time.monotonic() + 120
        while version not in arrived:
            if time.monotonic() > deadline:
                raise SystemExit(f"no diagnostics for version {version}")
            await asyncio.sleep(0.0005)

    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
    await until(1)
    lines = text.split("\n")
    targets = [i for i, line in enumerate(lines) if 'log.info("answered %s", "route ' in line]
    times = []
    texts = []
    pid = client._server.pid if client._server is not None else None
    cpu_start = None
    for version in range(2, 2 + warmup + edits):
        if version == 2 + warmup and pid is not None and Path(f"/proc/{pid}/stat").exists():
            cpu_start = cpu_seconds(pid)
        row = targets[version % len(targets)]
        line = lines[row]
        start = line.index('"route ') + 1
        end = line.index('"', start)
        new = f"route {version}"
        lines[row] = line[:start] + new + line[end:]
        texts.append("\n".join(lines))
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(row, start), types.Position(row, end)), text=new
        )
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
        )
        await until(version)
        if version >= 2 + warmup:
            times.append((arrived[version] - sent) * 1000)
    findings = len(published[max(published)])
    cpu = (cpu_seconds(pid) - cpu_start) * 1000 / edits if cpu_start is not None and pid is not None else None
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times, texts, findings, cpu


def in_process(root: Path, warm: str, texts: list[str]) -> tuple[list[float], list[float]]:
    from dupguard.editor import Engine

    engine = Engine([root])
    path = root / "service.py"
    engine.lint(path, warm)
    wall, cpu = [], []
    for text in texts:
        start, start_cpu = time.perf_counter(), time.process_time()
        engine.lint(path, text)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return wall, cpu


def summary(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (
        f"{name}: median {statistics.median(ordered):.1f} ms, p90 {p90:.1f} ms, "
        f"min {ordered[0]:.1f} ms, max {ordered[-1]:.1f} ms ({len(ordered)} edits)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--lines", type=int, default=300)
    args = parser.parse_args()
    text = agent_file(args.lines)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "service.py").write_text(text)
        times, texts, findings, cpu = asyncio.run(round_trips(root, text, args.edits, args.warmup))
        local, local_cpu = in_process(root, text, texts[args.warmup :])
    print(f"file: {text.count(chr(10))} lines, {len(text)} characters, {findings} findings after the last edit")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(summary("didChange → publishDiagnostics (server process, stdio), wall", times))
    if cpu is not None:
        print(f"server CPU per edit (user + system, mean over {args.edits} edits): {cpu:.1f} ms")
    print(summary("Engine.lint (in process), wall", local))
    print(summary("Engine.lint (in process), CPU", local_cpu))
    median = statistics.median(times)
    print(f"bound 50 ms: {'met' if median <= 50 else 'NOT met'} (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
