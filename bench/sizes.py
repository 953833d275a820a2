#!/usr/bin/env python3
"""Cost per line of a large agent module and per file of a large tree: is dupguard linear in both?

Why: real applications keep thousands of lines in one module (a FastAPI app with every route
in ``main.py``). A query that scans every function or binding of the file is harmless on the
rule fixtures and quadratic on such a module: 7,000 lines once took 96 s. This script
generates agent-like modules of growing size from one template (a FastAPI app with many
handlers, module-level agents and memories, retries, tool lists, callbacks, queue consumers,
model↔tool loops, a Celery task; see ``_block``), lints each in this process and prints the
CPU time per line of each phase:

* ``parse``: ``dupguard.parsing.parse_module``, the floor no LibCST linter goes below;
* ``model``: ``build_model``, the one traversal;
* ``rules``: every enabled rule, without fixes (what plain ``dupguard check`` runs), and the
  line numbers of their findings (``positions``, one pass over the module).

The time per line of model + rules must stay within 1.5x across sizes (the columns "per line
vs first" compare each size with the smallest; the last one names the rule that costs most).

Names repeat from block to block the way they do in real code (every handler has its
``agent``, ``result`` and ``messages``), so a lookup that scans every binding of a name shows
up here. Each size below 50,000 lines runs ``--reps`` times and the fastest run counts. The
time spent in Python's garbage collector is counted apart (``gc s``, and the "without gc"
columns): on a large module one full collection walks the whole tree and lands in whichever
phase happens to be running; ``--breakdown`` prints each rule's share, collector included.

A second table holds each module to the floor of bench/run.py's agent-code target: what libcst
alone takes to parse the module and walk it once with an empty ``CSTVisitor``
(``bench/loops.py cst-visit``), measured in the same run. dupguard's side is its whole cost for
the file, two ways: in this process, ``gate`` and ``lint_job`` of ``dupguard.pipeline`` (the
prefilter, the nesting check, the parse, the model, the rules, the positions, the noqa pass:
what ``check`` runs on one relevant file), against ``parse_module`` + the empty walk here; and
as the user runs it, ``python -m dupguard check --no-cache --isolated --jobs 1 --max-file-size 0``
on a directory holding only that module (``--max-file-size 0``: the 100k-line module is larger
than the 2 MB default, which would skip it), against ``bench/loops.py cst-visit`` on the same
file, each process's CPU time minus its own start-up (the same two commands on the header-only
module, ``generate(0)``). Each must stay within 1.3x of its floor on the largest module, and each
size's cost per line within 1.5x of the median over the sizes ("floor vs median": libcst's own
cost per line grows with the size too); the peak RSS of both processes is printed too. In this
process both sides end with a full collection, so that both pay for freeing what they built.

The tree case asks the same of a project (a whole public repository once took 29 minutes; a pass
over the whole project must not make a tree cost more per file as it grows): a generated tree of
up to 10,000 files (``tree_file``: mostly modules with no agent in them, some agent modules, some
route modules that import an agent from a sibling module, some correct per-request agent code,
packages with ``__init__.py``) is linted by the real command, ``python -m dupguard check --no-cache --isolated --jobs 1``, at 100,
1,000 and 10,000 files. Each size is the first files of one sequence, so the mix is the same at
every size. Time per file is the CPU time of that process minus its start-up (a run on the first
four files, one of each kind, measured in the same run), divided by the number of further files; it
must stay within 1.5x across sizes (the column "net per file vs first", and the last line: largest
over smallest). The tree lives in a temporary directory.

Usage: ``python bench/sizes.py [--lines 1000,10000,100000] [--files 100,1000,10000] [--reps N]
[--breakdown] [--no-floor] [--write DIR]`` (an empty ``--lines ''`` or ``--files ''`` skips that case;
``--no-floor`` skips the floor table;
``--write`` keeps the generated modules and trees, e.g. to profile one with ``bench/phases.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

HEADER = '''"""A generated agent application: many routes, agents, tools and workers in one module."""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from celery import Celery
from fastapi import Depends, FastAPI
from langchain_core.tools import tool
from llama_index.core.agent import ReActAgent
from llama_index.core.callbacks import CallbackManager, LlamaDebugHandler
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from langchain_core.callbacks import BaseCallbackHandler
from openai import OpenAI
from tenacity import retry, stop_after_attempt

from .graphs import support_graph
from .queueing import sqs
from .tools import DISPATCH, SCHEMAS, execute_tool_call, lookup_order, refund_order

app = FastAPI()
celery_app = Celery("app")
client = OpenAI()
callback_manager = CallbackManager([])
pool = ThreadPoolExecutor(max_workers=4)
'''

FOOTER = """

if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app)
"""


def _block(i: int) -> str:
    """One section of the app (~100 lines): findings for most rules, and their correct twins."""
    return f'''

# ----------------------------------------------------------------------------- section {i}

memory_{i} = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent_{i} = ReActAgent.from_tools(tools=[lookup_order, lookup_order], memory=memory_{i})
TOOLS_{i} = [
    FunctionTool.from_defaults(fn=lookup_order, name="lookup_{i}"),
    FunctionTool.from_defaults(fn=refund_order, name="lookup_{i}"),
]
SETTINGS_{i} = {{"configurable": {{"thread_id": "default"}}}}


@tool
def weather_{i}(city: str) -> str:
    """The weather in a city."""
    return city.upper()


def make_agent_{i}(tools: list) -> ReActAgent:
    agent = ReActAgent.from_tools(tools=tools, verbose=False)
    return agent


@app.post("/chat/{i}")
async def chat_{i}(payload: dict):
    messages = payload.get("messages", [])
    result = None
    for attempt in range(3):
        try:
            result = await agent_{i}.achat(payload["message"])
            break
        except TimeoutError:
            continue
    messages.append(result)
    messages.append(result)
    TOOLS_{i}.append(weather_{i})
    callback_manager.add_handler(LlamaDebugHandler())
    state = await support_graph.ainvoke({{"messages": messages}}, config=SETTINGS_{i})
    return {{"answer": str(result), "state": state}}


@app.get("/ask/{i}")
async def ask_{i}(question: str, agent: ReActAgent = Depends(make_agent_{i})):
    result = await agent.achat(question)
    answers = await asyncio.gather(agent_{i}.achat(question), agent_{i}.achat(question + "?"))
    return {{"answer": str(result), "more": [str(a) for a in answers]}}


@app.post("/fresh/{i}")
async def fresh_{i}(question: str):
    agent = make_agent_{i}([weather_{i}])
    messages = []
    result = await agent.achat(question)
    messages.append(result)
    return {{"answer": str(result), "messages": messages}}


def tool_loop_{i}(question: str) -> str:
    messages = [{{"role": "user", "content": question}}]
    while True:
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            fn = DISPATCH[call.function.name]
            output = fn(**json.loads(call.function.arguments))
            messages.append({{"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)}})


def bounded_loop_{i}(question: str) -> str:
    messages = [{{"role": "user", "content": question}}]
    seen = set()
    for step in range(8):
        msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            if call.id in seen:
                continue
            seen.add(call.id)
            execute_tool_call(call)
    return ""


@retry(stop=stop_after_attempt(3))
async def retried_{i}(message: str):
    return await agent_{i}.achat(message)


class Service{i}:
    def __init__(self) -> None:
        self.history = []
        self.agent = ReActAgent.from_tools(tools=[weather_{i}])

    async def handle(self, text: str):
        self.history.append(text)
        result = await self.agent.achat(text)
        return result


def consume_{i}():
    while True:
        response = sqs.receive_message(QueueUrl="jobs-{i}", MaxNumberOfMessages=1)
        for message in response.get("Messages", []):
            result = agent_{i}.chat(message["Body"])
            sqs.delete_message(QueueUrl="jobs-{i}", ReceiptHandle=message["ReceiptHandle"])


@celery_app.task(acks_late=True)
def report_{i}(region: str):
    agent = make_agent_{i}([weather_{i}])
    result = agent.chat(region)
    return str(result)


def threads_{i}(questions: list):
    return list(pool.map(agent_{i}.chat, questions))


async def execute_{i}(call):
    fn = DISPATCH[call.function.name]
    return await fn(**json.loads(call.function.arguments))


async def parallel_tools_{i}(messages: list, tool_calls: list):
    tasks = [asyncio.create_task(execute_{i}(call)) for call in tool_calls]
    for finished in asyncio.as_completed(tasks):
        result = await finished
        messages.append({{"role": "tool", "content": json.dumps(result)}})


class StreamHandler{i}(BaseCallbackHandler):
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id

    def on_llm_new_token(self, token: str, *, chunk=None, **kwargs) -> None:
        for tc in getattr(chunk, "tool_call_chunks", None) or []:
            execute_tool_call(self.session_id, tc["id"], tc["name"], tc["args"])

    def on_llm_end(self, response, **kwargs) -> None:
        for call in response.generations[0][0].message.tool_calls:
            execute_tool_call(self.session_id, call["id"], call["name"], call["args"])


debug_{i} = LlamaDebugHandler()
callback_manager.add_handler(debug_{i})
callback_manager.add_handler(debug_{i})
'''


def generate(lines: int) -> str:
    """A module of about ``lines`` lines: the header, as many blocks as fit, the footer."""
    parts = [HEADER]
    total = HEADER.count("\n") + FOOTER.count("\n")
    i = 0
    while total < lines:
        block = _block(i)
        parts.append(block)
        total += block.count("\n")
        i += 1
    parts.append(FOOTER)
    return "".join(parts)


class _GcClock:
    """CPU seconds spent in Python's garbage collector (``gc.callbacks``), to tell it apart.

    A full collection walks every object alive: on a 100k-line module (a few million libcst
    nodes) one costs about as much as building the model, and it lands in whichever phase
    happens to allocate at that moment. Python schedules full collections so that their total
    cost stays proportional to what is allocated, but their timing is lumpy; the column without
    the collector shows what the analyses themselves cost."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.total += time.process_time() - self._start


_GC: _GcClock | None = None


def measure(text: str) -> dict[str, float]:
    """CPU seconds of each phase (and of each rule) on one module, and the part of them spent in
    the garbage collector (``gc <phase>``). CPU time (``time.process_time``), so that other load
    on the machine does not count; a collection before the parse, the model and the rules, so
    that a phase does not pay for the garbage of the one before."""
    global _GC
    from dupguard.config import Settings
    from dupguard.parsing import parse_module
    from dupguard.rules import RuleContext, load
    from dupguard.semantic.builder import build_model
    from dupguard.semantic.catalog_loader import catalog_for
    from dupguard.semantic.positions import Positions

    settings = Settings()
    rules = load()
    catalog = catalog_for(settings)
    gc_clock = _GC = _GC or _GcClock()
    out: dict[str, float] = {"findings": 0.0}

    def timed(name: str, work: Callable[[], T], collect: bool = True) -> T:
        if collect:
            gc.collect()
        cpu, in_gc = time.process_time(), gc_clock.total
        value = work()
        out[name] = time.process_time() - cpu
        out[f"gc {name}"] = gc_clock.total - in_gc
        return value

    module = timed("parse", lambda: parse_module(text))
    model = timed("model", lambda: build_model(module, catalog, settings))
    ctx = RuleContext(Positions(module))  # no fix is built: rules only name theirs (``ctx.fix``)
    # the line numbers of findings: one codegen pass over the module, made by whichever rule
    # reports first; timed on its own so that the rule is not blamed for it
    timed("positions", lambda: ctx.line(module.body[0]))

    def count(code: str) -> Callable[[], int]:
        return lambda: sum(1 for _ in rules[code](model, ctx))

    for code in sorted(settings.enabled_codes()):
        out["findings"] += timed(code, count(code), collect=False)
    steps = ["positions", *sorted(settings.enabled_codes())]
    out["rules"] = sum(out[k] for k in steps)
    out["gc rules"] = sum(out[f"gc {k}"] for k in steps)
    return out


def measure_whole(text: str) -> dict[str, float]:
    """CPU seconds of dupguard's whole work on one file in this process (``whole``: ``gate`` and
    ``lint_job``, what ``check`` runs on a relevant file after reading it) and of the floor
    (``floor``: ``libcst.parse_module`` and a walk with an empty ``CSTVisitor``, as
    ``bench/loops.py cst-visit`` does), the collector on as a user's process has it. Each starts
    after a full collection and ends with one, so that both pay for freeing what they built
    (dupguard's model holds cycles: its tree goes with the next collection, not at once)."""
    import libcst as cst

    from dupguard.config import Settings
    from dupguard.pipeline import extra_modules, gate, lint_job

    settings = Settings()
    codes = settings.enabled_codes()
    out = {}
    gc.collect()
    cpu = time.process_time()
    module = cst.parse_module(text)
    module.visit(cst.CSTVisitor())
    del module
    gc.collect()
    out["floor"] = time.process_time() - cpu
    cpu = time.process_time()
    job = ("app.py", text, "utf-8", codes, None)
    findings = len(lint_job(job, settings)) if gate(text, codes, extra_modules(settings)) else 0
    gc.collect()
    out["whole"] = time.process_time() - cpu
    out["findings"] = findings
    return out


# Started between this script and the measured process: Linux gives a child the peak RSS of the
# process it was forked from as its own starting peak, so a process forked from this one (which
# holds a large module) would report this one's peak; this small one forks the measured process.
_LAUNCHER = """
import json, os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "cpu": cpu, "rss": rss}))
"""


def _process(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB) of one process, from ``wait4``: its own, not its siblings'."""
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ, NO_COLOR="1"),
    )
    if proc.returncode != 0 or json.loads(proc.stdout)["status"] != 0:
        raise RuntimeError(f"{cmd} failed: {(proc.stderr or proc.stdout)[-800:]}")
    usage = json.loads(proc.stdout)
    return usage["cpu"], usage["rss"]


def command_and_floor(directory: Path) -> dict[str, float]:
    """CPU seconds and peak RSS (MB) of the real command on the one module in ``directory``, and of
    ``bench/loops.py cst-visit`` on the same file."""
    (path,) = directory.glob("*.py")
    listing = directory.parent / f"{directory.name}.list"
    listing.write_text(f"{path}\n", encoding="utf-8")
    check = [sys.executable, "-m", "dupguard", "check", "--no-cache", "--isolated", "--jobs", "1"]
    check += ["--max-file-size", "0", "--exit-zero", "."]
    loops = [sys.executable, str(Path(__file__).with_name("loops.py")), "cst-visit", str(listing)]
    command, command_rss = _process(check, directory)
    floor, floor_rss = _process(loops, directory)
    return {"command": command, "command rss": command_rss, "floor": floor, "floor rss": floor_rss}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def floor_sizes(sizes: list[int], reps: int, write: str | None) -> None:
    """The floor table (module docstring): dupguard's whole cost on each module against libcst's
    parse and empty walk, in this process and as two processes, and each cost per line against
    the median over the sizes."""
    measure_whole(generate(300))  # warm up
    with tempfile.TemporaryDirectory(prefix="dupguard-sizes-") as tmp:
        base = Path(write) if write else Path(tmp)
        start_dir = base / "module_start"
        start_dir.mkdir(parents=True, exist_ok=True)
        (start_dir / "app.py").write_text(generate(0), encoding="utf-8")
        small_reps = max(reps, 5)
        start_runs = [command_and_floor(start_dir) for _ in range(small_reps)]
        start = {key: min(run[key] for run in start_runs) for key in ("command", "floor")}
        print(
            f"start-up (the header-only module, best of {small_reps}): dupguard check {start['command']:.3f} s CPU,"
            f" loops.py cst-visit {start['floor']:.3f} s CPU, subtracted below ('net')"
        )
        print(
            f"{'lines':>8} {'findings':>8} {'floor s':>8} {'dupguard s':>10} {'ratio':>6} {'µs/line':>8}"
            f" {'vs median':>9} {'floor vs median':>15} | {'floor net s':>11} {'check net s':>11} {'ratio':>6} {'µs/line':>8} {'vs median':>9}"
            f" {'check MB':>8} {'floor MB':>8}"
        )
        rows = []
        for size in sizes:
            text = generate(size)
            n = text.count("\n")
            directory = base / f"module_{size}"
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "app.py").write_text(text, encoding="utf-8")
            runs = reps if size < 50_000 else 1
            inner = min((measure_whole(text) for _ in range(runs)), key=lambda r: r["whole"])
            outer_runs = [command_and_floor(directory) for _ in range(runs)]
            outer = {key: min(run[key] for run in outer_runs) for key in outer_runs[0]}
            outer["command net"] = max(outer["command"] - start["command"], 1e-9)
            outer["floor net"] = max(outer["floor"] - start["floor"], 1e-9)
            rows.append((n, inner, outer))
        inner_median = _median([inner["whole"] / n for n, inner, _ in rows])
        floor_median = _median([inner["floor"] / n for n, inner, _ in rows])
        outer_median = _median([outer["command net"] / n for n, _, outer in rows])
        worst_inner = worst_outer = 0.0
        for n, inner, outer in rows:
            in_line, out_line = inner["whole"] / n, outer["command net"] / n
            worst_inner, worst_outer = (
                max(worst_inner, in_line / inner_median),
                max(worst_outer, out_line / outer_median),
            )
            print(
                f"{n:>8} {int(inner['findings']):>8} {inner['floor']:>8.2f} {inner['whole']:>10.2f}"
                f" {inner['whole'] / inner['floor']:>6.2f} {1e6 * in_line:>8.1f} {in_line / inner_median:>9.2f}"
                f" {inner['floor'] / n / floor_median:>15.2f} |"
                f" {outer['floor net']:>11.2f} {outer['command net']:>11.2f}"
                f" {outer['command net'] / outer['floor net']:>6.2f} {1e6 * out_line:>8.1f} {out_line / outer_median:>9.2f}"
                f" {outer['command rss']:>8.0f} {outer['floor rss']:>8.0f}",
                flush=True,
            )
        n, inner, outer = rows[-1]
        in_ratio, out_ratio = inner["whole"] / inner["floor"], outer["command net"] / outer["floor net"]
        for label, value, bound in (
            (f"{n}-line module, dupguard / floor in this process", in_ratio, 1.3),
            (f"{n}-line module, check / loops.py cst-visit, net CPU", out_ratio, 1.3),
            ("largest cost per line / median, in this process", worst_inner, 1.5),
            ("largest cost per line / median, check net CPU", worst_outer, 1.5),
        ):
            print(f"{label}: {value:.2f} ({'within' if value <= bound else 'NOT within'} {bound}x)")
        floor_worst = max(inner["floor"] / n / floor_median for n, inner, _ in rows)
        print(f"(the floor's own largest cost per line / median, in this process: {floor_worst:.2f})")


AGENT_MODULE = '''"""Support agent {i}: built once at import, served by the routes of a sibling module."""

from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool

from .util_{u} import normalise_{u}


def lookup_{i}(order_id: str) -> str:
    """Look an order up."""
    return normalise_{u}(order_id)


TOOLS_{i} = [FunctionTool.from_defaults(fn=lookup_{i}, name="lookup_{i}")]
memory_{i} = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent_{i} = ReActAgent.from_tools(tools=TOOLS_{i}, memory=memory_{i})
app = FastAPI()


@app.post("/chat/{i}")
async def chat_{i}(payload: dict):
    result = None
    for attempt in range(3):
        try:
            result = await agent_{i}.achat(payload["message"])
            break
        except TimeoutError:
            continue
    return {{"answer": str(result)}}


def make_agent_{i}() -> ReActAgent:
    return ReActAgent.from_tools(tools=TOOLS_{i}, memory=ChatMemoryBuffer.from_defaults(token_limit=4000))
'''

ROUTE_MODULE = '''"""Routes of service {i}: no agent framework imported here, the agent comes from a sibling."""

from fastapi import APIRouter

from .agents_{a} import agent_{a}, make_agent_{a}

router = APIRouter()
SESSION_ID = "default"


@router.post("/ask/{i}")
async def ask_{i}(question: str):
    answer = await agent_{a}.achat(question)
    return {{"answer": str(answer), "session": SESSION_ID}}


@router.post("/fresh/{i}")
async def fresh_{i}(question: str):
    agent = make_agent_{a}()
    return {{"answer": str(await agent.achat(question))}}
'''

PER_REQUEST_MODULE = '''"""Correct agent code: one agent per call, nothing shared between requests."""

from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.tools import tool


@tool
def weather_{i}(city: str) -> str:
    """The weather in a city."""
    return city.upper()


def answer_{i}(llm, prompt, question: str) -> str:
    agent = create_tool_calling_agent(llm, [weather_{i}], prompt)
    executor = AgentExecutor(agent=agent, tools=[weather_{i}])
    history = []
    result = executor.invoke({{"input": question}})
    history.append(result)
    return str(result["output"])
'''

PLAIN_MODULE = '''"""Utilities {i}: the bulk of a real project, with nothing for dupguard to report."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

PATTERN_{i} = re.compile(r"[^a-z0-9]+")


def normalise_{i}(text: str) -> str:
    """Lower-case ``text`` and squeeze everything else into dashes."""
    return PATTERN_{i}.sub("-", text.lower()).strip("-")


@dataclasses.dataclass
class Record{i}:
    name: str
    tags: list[str] = dataclasses.field(default_factory=list)
    history: list[str] = dataclasses.field(default_factory=list)

    def tag(self, *tags: str) -> None:
        for tag in tags:
            if tag not in self.tags:
                self.tags.append(tag)
        self.history.append(",".join(tags))

    def summary(self) -> str:
        return f"{{self.name}} ({{len(self.tags)}} tags)"


def group_{i}(records: Iterable[Record{i}]) -> dict[str, list[Record{i}]]:
    groups: dict[str, list[Record{i}]] = {{}}
    for record in records:
        for tag in record.tags or ["untagged"]:
            groups.setdefault(tag, []).append(record)
    return groups


def retry_{i}(fn, attempts: int = 3):
    """Call ``fn`` until it stops raising ``OSError`` (a file on a flaky mount)."""
    for attempt in range(attempts):
        try:
            return fn()
        except OSError:
            if attempt == attempts - 1:
                raise
    return None


class Cache{i}:
    def __init__(self) -> None:
        self.items: dict[str, str] = {{}}

    def get(self, key: str, default: str = "") -> str:
        return self.items.get(key, default)

    def put(self, key: str, value: str) -> None:
        self.items[key] = value
'''


def tree_file(i: int) -> tuple[str, str]:
    """The ``i``-th file of the generated tree: (relative path, text). Directories of 100 files,
    each a package; of every 25 files one is an agent module, the next one a route module importing
    that agent from its sibling, the next one correct per-request agent code, the rest plain code."""
    package, slot = f"svc{i // 100:03d}", i % 100
    if slot == 0:
        return f"{package}/__init__.py", f'"""Service package {i // 100}."""\n'
    kind = slot % 25
    if kind == 1:
        return f"{package}/agents_{i}.py", AGENT_MODULE.format(i=i, u=i + 3)
    if kind == 2:
        return f"{package}/routes_{i}.py", ROUTE_MODULE.format(i=i, a=i - 1)
    if kind == 3:
        return f"{package}/answer_{i}.py", PER_REQUEST_MODULE.format(i=i)
    return f"{package}/util_{i}.py", PLAIN_MODULE.format(i=i)


def write_tree(root: Path, files: int) -> int:
    """Write the first ``files`` files of the tree under ``root``; return its number of lines."""
    lines = 0
    for i in range(files):
        rel, text = tree_file(i)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        lines += text.count("\n")
    return lines


def lint_tree(root: Path) -> tuple[float, float, int]:
    """CPU and wall seconds of ``dupguard check`` on ``root`` as a user runs it (one process,
    ``--jobs 1``, no cache, no configuration), and its number of findings."""
    cmd = [sys.executable, "-m", "dupguard", "check", "--no-cache", "--isolated", "--jobs", "1"]
    cmd += ["--output-format", "json", "--exit-zero", "."]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"dupguard exited {proc.returncode} on {root}: {proc.stderr.strip()[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, len(json.loads(proc.stdout))


START_FILES = 4  # one file of each kind: the smallest tree that loads everything a tree needs


def tree_sizes(sizes: list[int], reps: int, write: str | None) -> None:
    """The tree case (module docstring): time per file at each size, and its ratio to the first.

    The process's fixed cost (the interpreter, the imports, the catalog: about half a second once a
    file needs the analysis, a twentieth without) is measured on the first ``START_FILES`` files of
    the tree and subtracted: "net" is ``(CPU(n) - CPU(start)) / (n - START_FILES)``, the cost of one
    more file. Sizes below 5,000 files run ``max(reps, 5)`` times, each run right after a run of the
    start-up, and the median of the differences counts: at 100 files the net time is a tenth of a
    second, as large as the noise of a loaded machine, and a start-up measured in a quiet moment
    subtracted from a size measured in a busy one made the smallest size's figure a matter of
    luck. Larger sizes run once, less the fastest start-up."""
    small_reps = max(reps, 5)
    with tempfile.TemporaryDirectory(prefix="dupguard-tree-") as tmp:
        base = Path(write) if write else Path(tmp)
        start_tree = base / f"tree_{START_FILES}"
        write_tree(start_tree, START_FILES)
        start = min(lint_tree(start_tree)[0] for _ in range(small_reps))
        print(
            f"start-up ({START_FILES} files, one of each kind): {start:.3f} s CPU, subtracted for 'net';"
            f" dupguard check --jobs 1 --no-cache; below 5,000 files, the median of {small_reps} differences"
            " from a start-up run just before"
        )
        print(
            f"{'files':>8} {'lines':>9} {'findings':>8} {'CPU s':>8} {'wall s':>8} {'ms/file':>8}"
            f" {'net ms/file':>11} {'net per file vs first':>21}"
        )
        nets = []
        for size in sizes:
            root = base / f"tree_{size}"
            lines = write_tree(root, size)
            if size < 5_000:
                pairs = [(lint_tree(start_tree)[0], lint_tree(root)) for _ in range(small_reps)]
                cpu, wall, findings = min(run for _, run in pairs)
                net = _median([run[0] - before for before, run in pairs])
            else:
                cpu, wall, findings = lint_tree(root)
                net = cpu - start
            nets.append(max(net, 0.0) / max(size - START_FILES, 1))
            print(
                f"{size:>8} {lines:>9} {findings:>8} {cpu:>8.2f} {wall:>8.2f} {1e3 * cpu / size:>8.2f}"
                f" {1e3 * nets[-1]:>11.3f} {nets[-1] / nets[0]:>21.2f}",
                flush=True,
            )
        if len(nets) > 1 and min(nets) > 0:
            spread = max(nets) / min(nets)
            verdict = "within" if spread <= 1.5 else "NOT within"
            print(f"net time per file, largest / smallest over the sizes: {spread:.2f} ({verdict} 1.5x)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="1000,10000,100000", help="comma-separated module sizes (lines)")
    ap.add_argument("--reps", type=int, default=3, help="runs per size below 50,000 lines (the fastest counts)")
    ap.add_argument("--files", default="100,1000,10000", help="comma-separated tree sizes (files)")
    ap.add_argument("--write", metavar="DIR", help="also write the generated modules and trees to DIR")
    ap.add_argument("--breakdown", action="store_true", help="also print every rule's µs/line per size")
    ap.add_argument("--no-floor", action="store_true", help="skip the table against libcst's parse + empty walk")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.lines.split(",") if s.strip()]
    files = [int(s) for s in args.files.split(",") if s.strip()]
    if sizes:
        module_sizes(sizes, args.reps, args.write, args.breakdown)
        if not args.no_floor:
            print()
            floor_sizes(sizes, args.reps, args.write)
    if files:
        if sizes:
            print()
        tree_sizes(files, args.reps, args.write)
    return 0


def module_sizes(sizes: list[int], reps: int, write: str | None, breakdown: bool) -> None:
    """The module case (module docstring): model + rules time per line at each size."""
    # warm up: imports, the catalog, the walker's per-type plans
    measure(generate(300))
    print(
        f"{'lines':>8} {'findings':>8} {'parse s':>8} {'model s':>8} {'rules s':>8} {'gc s':>6}"
        f" {'parse µs/line':>13} {'model+rules µs/line':>19} {'without gc':>10} {'(model+rules)/parse':>19}"
        f" {'per line vs first':>17} {'without gc':>10}  slowest rule"
    )
    first = first_no_gc = None
    for size in sizes:
        text = generate(size)
        n = text.count("\n")
        if write:
            Path(write).mkdir(parents=True, exist_ok=True)
            (Path(write) / f"app_{size}.py").write_text(text, encoding="utf-8")
        runs = [measure(text) for _ in range(reps if size < 50_000 else 1)]
        t = min(runs, key=lambda r: r["model"] + r["rules"])
        in_gc = t["gc model"] + t["gc rules"]
        per_line = (t["model"] + t["rules"]) / n
        no_gc = per_line - in_gc / n
        first = first if first is not None else per_line
        first_no_gc = first_no_gc if first_no_gc is not None else no_gc
        slowest = max((k for k in t if k.startswith("DUP")), key=lambda k: t[k])
        print(
            f"{n:>8} {int(t['findings']):>8} {t['parse']:>8.2f} {t['model']:>8.2f} {t['rules']:>8.2f} {in_gc:>6.2f}"
            f" {1e6 * t['parse'] / n:>13.1f} {1e6 * per_line:>19.1f} {1e6 * no_gc:>10.1f}"
            f" {(t['model'] + t['rules']) / t['parse']:>19.2f} {per_line / first:>17.2f} {no_gc / first_no_gc:>10.2f}"
            f"  {slowest} {1e6 * t[slowest] / n:.1f} µs/line",
            flush=True,
        )
        if breakdown:
            steps = sorted((k for k in t if k.startswith("DUP") or k == "positions"), key=lambda k: -t[k])
            print(
                "          µs/line (of which gc): "
                + ", ".join(f"{k} {1e6 * t[k] / n:.1f} ({1e6 * t['gc ' + k] / n:.1f})" for k in steps),
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
