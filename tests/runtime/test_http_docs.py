"""docs/runtime-http.md stays true: every Python block parses and the names it documents exist
in ``dupguard.runtime`` (its runnable blocks are run by tests/test_docs_run.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dupguard.runtime

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime-http.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def blocks():
    text = DOC.read_text(encoding="utf-8")
    for match in FENCE.finditer(text):
        info = match.group(1).strip().split()
        yield (info[0] if info else ""), info[1:], match.group(2), text.count("\n", 0, match.start()) + 2


RUNNABLE = [(code, line) for lang, flags, code, line in blocks() if lang == "python" and "runnable" in flags]


def test_the_page_has_a_runnable_example_per_helper():
    assert len(RUNNABLE) == 3
    joined = "\n".join(code for code, _ in RUNNABLE)
    for name in ("IdempotencyMiddleware", "handle_once", "session_lease"):
        assert name in joined


def test_every_python_block_parses_and_its_runtime_imports_exist():
    for lang, _flags, code, line in blocks():
        if lang != "python":
            continue
        tree = ast.parse(code, filename=f"docs/runtime-http.md:{line}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "dupguard.runtime":
                for alias in node.names:
                    assert hasattr(dupguard.runtime, alias.name), f"line {line}: {alias.name}"
