#!/usr/bin/env python3
"""Cost per line of one large agent module: does dupguard stay linear in the size of a file?

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

Usage: ``python bench/sizes.py [--lines 1000,10000,100000] [--reps N] [--breakdown] [--write DIR]``
(``--write`` keeps the generated modules, e.g. to profile one with ``bench/phases.py``).
"""

from __future__ import annotations

import argparse
import gc
import sys
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
    for code in sorted(settings.enabled_codes()):
        out["findings"] += timed(code, lambda code=code: sum(1 for _ in rules[code](model, ctx)), collect=False)
    steps = ["positions", *sorted(settings.enabled_codes())]
    out["rules"] = sum(out[k] for k in steps)
    out["gc rules"] = sum(out[f"gc {k}"] for k in steps)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="1000,10000,100000", help="comma-separated module sizes (lines)")
    ap.add_argument("--reps", type=int, default=3, help="runs per size below 50,000 lines (the fastest counts)")
    ap.add_argument("--write", metavar="DIR", help="also write the generated modules to DIR")
    ap.add_argument("--breakdown", action="store_true", help="also print every rule's µs/line per size")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.lines.split(",") if s.strip()]
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
        if args.write:
            Path(args.write).mkdir(parents=True, exist_ok=True)
            (Path(args.write) / f"app_{size}.py").write_text(text, encoding="utf-8")
        runs = [measure(text) for _ in range(args.reps if size < 50_000 else 1)]
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
        if args.breakdown:
            steps = sorted((k for k in t if k.startswith("DUP") or k == "positions"), key=lambda k: -t[k])
            print(
                "          µs/line (of which gc): "
                + ", ".join(f"{k} {1e6 * t[k] / n:.1f} ({1e6 * t['gc ' + k] / n:.1f})" for k in steps),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
