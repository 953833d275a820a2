"""Fuzzing ``check`` and ``fix`` (issue 18): no input crashes them or ends in a traceback, and
``fix`` never leaves a file that does not parse.

Inputs: hypothesmith programs (from libcst's node types and from Python's grammar) and the
corpus and rule files, each possibly prefixed with an agent import (so that it reaches the
parser and the rules rather than stopping at the prefilter) and then mutated: line endings
(LF, CRLF, CR, a mix), nesting (brackets, unary operators, attribute and call chains,
``elif`` chains, from 1 level to far past what the parser survives), encodings (BOM, a
PEP 263 cookie, UTF-16, an unknown codec, stray bytes), sizes (repeated up to 40 times,
truncated; past ``MAX_FUZZ_SIZE`` a file takes the max-file-size path),
spliced, deleted and duplicated lines, and stray characters.

Each example is written to a real file and goes through the pipeline's own entry points
(read, decode, gate, parse, analyse, fix, write): ``lint_paths`` and ``fix_paths``, with the
fuzz directory as the project root, so the project analysis (``project.py``) covers the example
itself. (With the default root, the working directory, every example rebuilt the project index
of the whole dupguard checkout, twice, without a cache: 2-4 s an example instead of 0.03 s.) A file
may be reported as one that cannot be processed (syntax error, undecodable, too deeply
nested); it may not be an internal error or a crash, and a file ``fix`` wrote must parse
(and compile when the input did). A native crash here would take the test process down.

The normal suite runs a short, derandomised pass; ``DUPGUARD_FUZZ_EXAMPLES=20000`` runs a long
random one (``DUPGUARD_FUZZ_SEED`` fixes its seeds). The counts are printed (``pytest -s``):
examples run, and how many of them were distinct inputs (hypothesis may generate the same bytes
twice), each one checked by both ``check`` and ``fix``. One more test runs a batch
of mutated files through the command line with two workers, where a crash would be a dead
worker rather than a dead test.
"""

from __future__ import annotations

import ast
import hashlib
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from dupguard.config import Settings
from dupguard.fixer import fix_paths
from dupguard.pipeline import SourceError, lint_paths, parse
from linthelpers import ROOT, RULES_DIR

SEEDS = sorted({*(ROOT / "tests" / "corpus").rglob("*.py"), *RULES_DIR.rglob("*.py")})
SEED_BYTES = [path.read_bytes() for path in SEEDS]
HEADERS = [
    b"",
    b"from strands import Agent\n",
    b"from llama_index.core.agent import ReActAgent\nagent = ReActAgent.from_tools(tools=[])\n",
    b"import openai\n",
]
# ``fix``'s cost grows faster than linearly with a module's functions (the codemods' scope
# analysis): the fuzz keeps its files small enough for thousands of examples, and larger ones
# go down the max-file-size path (skipped, reported) like a generated giant would
MAX_FUZZ_SIZE = 64 * 1024
SETTINGS = Settings(max_file_size=MAX_FUZZ_SIZE)
EXAMPLES = int(os.environ.get("DUPGUARD_FUZZ_EXAMPLES", "0") or 0)
RUN: dict[str, float] = {
    "examples": 0,
    "distinct": 0,
    "parsed": 0,
    "fixed": 0,
    "refused": 0,
    "slowest seconds": 0.0,
}
SEEN: set[bytes] = set()  # digests of the inputs run: the distinct count
# a file the digests are appended to (one hex line each): a long run in several processes
# counts its distinct inputs with ``sort -u FILE | wc -l``
DIGESTS = os.environ.get("DUPGUARD_FUZZ_DIGESTS", "")
STARTED = time.monotonic()


class Chooser:
    """Random choices, from hypothesis (``draw``) or from ``random.Random``: the mutations are
    written once for both."""

    def __init__(self, draw: Callable[[Any], Any] | None = None, rng: random.Random | None = None) -> None:
        self.draw = draw
        self.rng = rng

    def choice(self, items: list | tuple) -> Any:
        if self.draw is not None:
            return self.draw(st.sampled_from(items))
        assert self.rng is not None
        return self.rng.choice(items)

    def integer(self, low: int, high: int) -> int:
        if self.draw is not None:
            return self.draw(st.integers(low, high))
        assert self.rng is not None
        return self.rng.randint(low, high)


# ----------------------------------------------------------------------------- mutations


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def line_endings(data: bytes, pick: Chooser) -> bytes:
    style = pick.choice(["\n", "\r\n", "\r", "mixed"])
    out = []
    for line in _lines(data):
        body = line.rstrip(b"\r\n")
        ending = pick.choice(["\n", "\r\n", "\r"]) if style == "mixed" else style
        out.append(body + (ending.encode() if line != body else b""))
    return b"".join(out)


NESTINGS = {
    "brackets": lambda n: b"x = " + b"(" * n + b"y" + b")" * n + b"\n",
    "lists": lambda n: b"x = " + b"[" * n + b"]" * n + b"\n",
    "not": lambda n: b"x = " + b"not " * n + b"y\n",
    "minus": lambda n: b"x = " + b"-" * n + b"y\n",
    "attribute": lambda n: b"x = y" + b".a" * n + b"\n",
    "call": lambda n: b"x = y" + b"()" * n + b"\n",
    "plus": lambda n: b"x = " + b"a + " * n + b"y\n",
    "power": lambda n: b"x = " + b"a ** " * n + b"y\n",
    "lambda": lambda n: b"x = " + b"lambda: " * n + b"y\n",
    "ternary": lambda n: b"x = " + b"a if b else " * n + b"y\n",
    "elif": lambda n: b"if a:\n    pass\n" + b"elif b:\n    pass\n" * n,
    "blocks": lambda n: b"".join(b" " * i + b"if x:\n" for i in range(n)) + b" " * n + b"pass\n",
    "fstring": lambda n: b"x = " + b"f'{" * n + b"y" + b"}'" * n + b"\n",
}


def nesting(data: bytes, pick: Chooser) -> bytes:
    kind = pick.choice(sorted(NESTINGS))
    depth = pick.choice([1, 20, 99, 100, 199, 200, 201, 500, 1000, 3000, 7000])
    if kind == "blocks":
        depth = min(depth, 120)  # the text grows with the square of the depth
    lines = _lines(data)
    at = pick.integer(0, len(lines))
    return b"".join(lines[:at]) + NESTINGS[kind](depth) + b"".join(lines[at:])


def encoding(data: bytes, pick: Chooser) -> bytes:
    how = pick.choice(["bom", "latin-1 cookie", "utf-16", "unknown codec", "stray bytes", "cookie on line 2"])
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "latin-1 cookie":
        text = data.decode("utf-8", "replace")
        return b"# -*- coding: latin-1 -*-\n" + text.encode("latin-1", "replace")
    if how == "utf-16":
        return data.decode("utf-8", "replace").encode("utf-16")
    if how == "unknown codec":
        return b"# coding: klingon\n" + data
    if how == "cookie on line 2":
        return b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n" + data
    at = pick.integer(0, len(data))
    return data[:at] + pick.choice([b"\xff", b"\xc3", b"\xe9t\xe9", b"\x00", b"\xed\xa0\x80"]) + data[at:]


def size(data: bytes, pick: Chooser) -> bytes:
    if pick.choice(["repeat", "truncate"]) == "repeat":
        return data * pick.integer(2, 40)
    return data[: pick.integer(0, len(data))]


def splice(data: bytes, pick: Chooser) -> bytes:
    lines = _lines(data)
    other = _lines(pick.choice(SEED_BYTES))
    start = pick.integer(0, len(other) - 1)
    piece = other[start : start + pick.integer(1, 30)]
    at = pick.integer(0, len(lines))
    return b"".join(lines[:at] + piece + lines[at:])


def edit_lines(data: bytes, pick: Chooser) -> bytes:
    lines = _lines(data)
    at = pick.integer(0, len(lines) - 1)
    if pick.choice(["delete", "duplicate"]) == "delete":
        return b"".join(lines[:at] + lines[at + pick.integer(1, 5) :])
    return b"".join(lines[: at + 1] + [lines[at]] * pick.integer(1, 20) + lines[at + 1 :])


def stray(data: bytes, pick: Chooser) -> bytes:
    at = pick.integer(0, len(data))
    char = pick.choice(
        [b"(", b")", b"[", b"]", b"{", b"}", b":", b"\\", b"'", b'"', b'"""', b"#", b"\t", b" ", b"\x0c"]
    )
    return data[:at] + char + data[at:]


MUTATIONS = [line_endings, nesting, encoding, size, splice, edit_lines, stray]


def mutate(data: bytes, pick: Chooser) -> bytes:
    data = pick.choice(HEADERS) + data
    for _ in range(pick.integer(0, 4)):
        data = pick.choice(MUTATIONS)(data, pick)
    return data


# ----------------------------------------------------------------------------- the property

NOT_ALLOWED = ("internal error", "crashed", "Traceback")


def _compiles(data: bytes) -> bool:
    try:
        compile(data, "<fuzz>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _parses(data: bytes) -> bool:
    from dupguard.pipeline import decode

    try:
        parse(decode(data)[0])
    except SourceError:
        return False
    return True


def check_and_fix(directory: Path, data: bytes) -> None:
    """``check`` then ``fix`` one file; every problem is a reason, never an internal error,
    and what ``fix`` writes parses."""
    RUN["examples"] += 1
    digest = hashlib.blake2b(data, digest_size=16).digest()
    SEEN.add(digest)
    RUN["distinct"] = len(SEEN)
    started = time.perf_counter()
    path = directory / "fuzzed.py"
    path.write_bytes(data)
    settings = SETTINGS._replace(root=str(directory))  # the project is the example (module docstring)
    checked = lint_paths([path], settings, use_cache=False)
    for error in checked.errors:
        assert not any(word in error.message for word in NOT_ALLOWED), error
    fixed = fix_paths([path], settings, unsafe=True, write=True)
    for error in fixed.errors:
        assert not any(word in error.message for word in NOT_ALLOWED), error
        RUN["refused"] += 1
    after = path.read_bytes()
    if after != data:
        RUN["fixed"] += 1
        assert _parses(after), "fix wrote a file that does not parse"
        assert not _compiles(data) or _compiles(after), "fix wrote a file that no longer compiles"
    elif not checked.errors:
        RUN["parsed"] += 1
    RUN["slowest seconds"] = max(RUN["slowest seconds"], round(time.perf_counter() - started, 2))
    if DIGESTS:  # written once both commands passed: the file lists checked inputs only
        with open(DIGESTS, "a", encoding="ascii") as out:
            out.write(digest.hex() + "\n")
    if EXAMPLES and RUN["examples"] % 100 == 0:  # a long run says how far it got (pytest -s)
        print(f"fuzz: {RUN} after {time.monotonic() - STARTED:.0f} s", file=sys.stderr, flush=True)


# built once: each ``from_grammar()`` builds a Lark parser of Python's grammar (2-3 s), which,
# done per example, was most of the fuzz's time
PROGRAMS = {"node": hypothesmith.from_node(), "grammar": hypothesmith.from_grammar(auto_target=False)}


@st.composite
def fuzzed(draw: Callable[[Any], Any]) -> bytes:
    pick = Chooser(draw=draw)
    kind = draw(st.sampled_from(["seed", "seed", "node", "grammar"]))
    if kind == "seed":
        base = pick.choice(SEED_BYTES)
    else:
        source = draw(PROGRAMS[kind])
        base = source.encode("utf-8", "surrogatepass")
    return mutate(base, pick)


# A long run is cut into rounds of ``ROUND`` examples, each a fresh hypothesis run with its own
# seed (``DUPGUARD_FUZZ_SEED`` + round; random unless set): in one run of 20,000, hypothesis's
# engine slowed from 0.07 s to about 0.5 s an example within 1,500 examples while the process
# grew past 1 GB; rounds of 500 stay near 0.1 s and 250 MB for a few thousand examples. The
# process still grows (2.2 GB and about 1 s an example after 7,000), so a longer run goes in
# several processes (``DUPGUARD_FUZZ_DIGESTS``; bench/RESULTS.md, "Hardening runs"). SEEN and
# RUN span the rounds, so the counts are the process's.
ROUND = 500
ROUNDS = -(-EXAMPLES // ROUND) if EXAMPLES else 1
SEED = int(os.environ.get("DUPGUARD_FUZZ_SEED", "") or random.randrange(2**32))


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# a round of a long run: 3 s an example (a slow one, such as a 36 KB file with a syntax error
# after a 3,000-level ternary chain, cost libcst 14 s to reject, niced on a loaded machine)
@pytest.mark.timeout(3 * ROUND if EXAMPLES else 300)
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_fuzzed_inputs_never_crash_check_or_fix(round_: int, fuzz_dir: Path) -> None:
    """One round of fresh hypothesis examples (see ``ROUND``); the normal suite: one derandomised round of 40."""

    @settings(
        max_examples=min(ROUND, EXAMPLES - round_ * ROUND) if EXAMPLES else 40,
        derandomize=not EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=fuzzed())
    def fuzz(data: bytes) -> None:
        check_and_fix(fuzz_dir, data)

    if EXAMPLES:
        fuzz = seed(SEED + round_)(fuzz)
    fuzz()


def test_zz_report_the_fuzz_count() -> None:
    """Runs after the fuzz test (pytest keeps file order): the count for the record."""
    seeds = f", seeds {SEED}..{SEED + ROUNDS - 1}" if EXAMPLES else ""
    print(f"\nfuzz: {RUN}, {time.monotonic() - STARTED:.0f} s{seeds}")
    assert RUN["examples"] >= (EXAMPLES or 40) or RUN["examples"] == 0  # 0: the fuzz test was deselected


def test_fuzzed_files_through_the_command_line_with_workers(tmp_path: Path) -> None:
    """A pool of two workers over mutated files: no worker dies, nothing ends in a traceback,
    every file ``fix`` changed parses."""
    rng = random.Random(18)
    files = {}
    for index in range(48):
        data = mutate(rng.choice(SEED_BYTES), Chooser(rng=rng))
        path = tmp_path / f"f{index:02}.py"
        path.write_bytes(data)
        files[path] = data
    for command in (("check", "--no-cache"), ("fix", "--unsafe-fixes")):
        proc = subprocess.run(
            [sys.executable, "-m", "dupguard", *command, "--isolated", "--max-file-size", "64KB", "--jobs", "2", "."],
            cwd=tmp_path,
            capture_output=True,
            timeout=600,
        )
        assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
        for word in NOT_ALLOWED:
            assert word not in proc.stderr.decode(), proc.stderr.decode()[-2000:]
    for path, data in files.items():
        after = path.read_bytes()
        if after != data:
            assert _parses(after), path
