"""Shared helpers: the rule folders, and running the real CLI in a subprocess.

A plain module rather than ``conftest.py``: ``tests/runtime`` and ``tests/integration`` have
conftest files of their own, and test modules import these helpers by name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "rules"
MARKER = re.compile(r"#\s*error:\s*(DUP\d{3}(?:\s*,\s*DUP\d{3})*)")


# a FastAPI route running a module-level LlamaIndex agent: one DUP101 (line 5), the smallest
# file the CLI, flake8 and hardening tests lint end to end
SHARED_AGENT = textwrap.dedent(
    """\
    from fastapi import FastAPI
    from llama_index.core.agent import ReActAgent

    app = FastAPI()
    agent = ReActAgent.from_tools(tools=[])


    @app.post("/chat")
    async def chat(payload: dict):
        return await agent.achat(payload["message"])
    """
)


def rule_folders() -> list[Path]:
    return sorted(p for p in RULES_DIR.iterdir() if (p / "rule.toml").is_file())


def expected_markers(path: Path) -> set[tuple[int, str]]:
    """(line, code) pairs marked ``# error: DUPxxx`` in a bad.py."""
    out = set()
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            out.update((row, code.strip()) for code in match.group(1).split(","))
    return out


def unprivileged_prefix() -> list[str]:
    """As root, drop the capabilities that bypass file permissions, so that an unreadable
    directory really is unreadable to the child (CI runs as root here)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}", "--"]


def run_cli(
    *args: str, cwd: Path | None = None, stdin: bytes | None = None, env: dict | None = None, unprivileged: bool = False
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("DUPGUARD_DEBUG", None)
    if not env or "FORCE_COLOR" not in env:  # colour is for terminals; a CI's FORCE_COLOR must not reach the reports
        full_env.pop("FORCE_COLOR", None)
    prefix = unprivileged_prefix() if unprivileged else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "dupguard", *args],
        cwd=cwd or ROOT,
        input=stdin,
        capture_output=True,
        env=full_env,
        timeout=300,
    )


def lint_codes(source: str, name: str = "app.py") -> list[tuple[int, str]]:
    """(row, code) of every finding of every enabled rule on ``source`` (dedented), linted in
    process as the file ``name`` with the default settings: the one-module precision tests' probe."""
    from dupguard.config import Settings
    from dupguard.pipeline import lint_text

    settings = Settings()
    found = lint_text(name, textwrap.dedent(source), settings, settings.enabled_codes())
    return sorted((d.row, d.code) for d in found)
