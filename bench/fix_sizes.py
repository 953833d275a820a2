#!/usr/bin/env python3
"""Cost per function of ``dupguard fix`` on one large module: does fixing stay linear in its size?

Why: ``bench/sizes.py`` keeps ``check`` linear; a fix has costs of its own. Building a finding's
fix once meant transforming, printing and diffing the whole module (and the scope analysis
ran per pass), so a module with thousands of small functions took minutes to fix: the cost
per finding grew with the file. Now every fix of a pass shares one fix context (parents,
scopes: ``dupguard.fixes.FixContext``), a fix touches only the statements it changes
(``dupguard.edits.proposal_edits``), and one transform applies the pass.

Each shape generates a module of ``n`` small functions (a FastAPI app) and runs the whole fix
loop on it in this process (``dupguard.fixer.fix_source``: parse, analyse, build every fix,
apply, re-parse and re-analyse until nothing is left), unsafe fixes included:

* ``agents``: ``n`` module-level agents, each read by one handler: ``n`` DUP101 fixes, each a
  factory and one line in its handler;
* ``tools``: ``n`` handlers, each giving one tool twice: ``n`` DUP301 fixes;
* ``appends``: ``n`` handlers, each appending one message twice: ``n`` DUP503 fixes;
* ``one``: one module-level agent read by all ``n`` handlers: one DUP101 fix that rewrites
  every handler.

It prints the CPU seconds (``time.process_time``: other load on the machine does not count),
the part of them spent in Python's garbage collector (``gc s``, counted apart as in
``bench/sizes.py``: on a large module one full collection walks every node alive and its
timing is lumpy), the passes, the fixes made, and µs per function, with and without the
collector, relative to the smallest size: without it, the figure must stay within 1.5x for
the cost to be linear.

Usage: ``python bench/fix_sizes.py [--sizes 300,1000,3000] [--shapes agents,tools,appends,one]``
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

HEADER = (
    "from fastapi import FastAPI\n"
    "from llama_index.core.agent import ReActAgent\n"
    "from llama_index.core.tools import FunctionTool\n"
    "\n"
    "from .tools import lookup\n"
    "\n"
    "app = FastAPI()\n"
)


def _agents(i: int) -> str:
    return (
        f"\nagent_{i} = ReActAgent.from_tools(tools=[])\n\n\n"
        f"@app.post('/agents/{i}')\nasync def agents_{i}(payload: dict):\n"
        f"    return await agent_{i}.achat(payload['message'])\n"
    )


def _tools(i: int) -> str:
    return (
        f"\n\n@app.post('/tools/{i}')\nasync def tools_{i}(payload: dict):\n"
        f"    tool = FunctionTool.from_defaults(fn=lookup, name='lookup_{i}')\n"
        f"    agent = ReActAgent.from_tools(tools=[tool, tool])\n"
        f"    return await agent.achat(payload['message'])\n"
    )


def _appends(i: int) -> str:
    return (
        f"\n\n@app.post('/appends/{i}')\nasync def appends_{i}(payload: dict):\n"
        f"    agent = ReActAgent.from_tools(tools=[])\n"
        f"    messages = payload['messages']\n"
        f"    reply = await agent.achat(payload['message'])\n"
        f"    messages.append(reply)\n"
        f"    messages.append(reply)\n"
        f"    return messages\n"
    )


def _one(i: int) -> str:
    return (
        f"\n\n@app.post('/one/{i}')\nasync def one_{i}(payload: dict):\n"
        f"    return await agent.achat(payload['message'])\n"
    )


SHAPES = {"agents": _agents, "tools": _tools, "appends": _appends, "one": _one}


def generate(shape: str, n: int) -> str:
    head = HEADER + ("agent = ReActAgent.from_tools(tools=[])\n" if shape == "one" else "")
    return head + "".join(SHAPES[shape](i) for i in range(n))


class _GcClock:
    """CPU seconds spent in the garbage collector (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.total += time.process_time() - self._start


_GC = _GcClock()


def measure(text: str) -> tuple[float, float, int, int, str | None]:
    """(CPU seconds, of which in the collector, passes, fixes made, error) of fixing ``text``
    with every rule, unsafe fixes included."""
    from dupguard.config import Settings
    from dupguard.fixer import fix_source

    settings = Settings()
    gc.collect()
    start, in_gc = time.process_time(), _GC.total
    outcome, _ = fix_source("app.py", text, "utf-8", settings, settings.enabled_codes(), unsafe=True)
    seconds = time.process_time() - start
    return seconds, _GC.total - in_gc, outcome.passes, len(outcome.applied), outcome.error


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="300,1000,3000", help="comma-separated numbers of functions")
    ap.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of {', '.join(SHAPES)}")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    measure(generate("tools", 20))  # warm up: imports, the catalog
    print(
        f"{'shape':<8} {'functions':>9} {'lines':>7} {'CPU s':>7} {'gc s':>6} {'passes':>6} {'fixes':>6}"
        f" {'µs/function':>11} {'vs first':>8} {'without gc':>10} {'vs first':>8}"
    )
    for shape in shapes:
        first = first_no_gc = None
        for n in sizes:
            text = generate(shape, n)
            seconds, in_gc, passes, fixes, error = measure(text)
            per, no_gc = 1e6 * seconds / n, 1e6 * (seconds - in_gc) / n
            first, first_no_gc = first or per, first_no_gc or no_gc
            print(
                f"{shape:<8} {n:>9} {text.count(chr(10)):>7} {seconds:>7.2f} {in_gc:>6.2f} {passes:>6} {fixes:>6}"
                f" {per:>11.0f} {per / first:>8.2f} {no_gc:>10.0f} {no_gc / first_no_gc:>8.2f}"
                + (f"  error: {error}" if error else ""),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
