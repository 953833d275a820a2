"""The pre-commit hooks, through real ``pre-commit try-repo`` against a throwaway repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from linthelpers import ROOT, RULES_DIR

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is required")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo_under_test(tmp_path: Path) -> Path:
    """A clean copy of this checkout's committed tree plus the working changes, as a git repo:
    try-repo installs the hook from it the way users would."""
    src = tmp_path / "dupguard-src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", ".dupguard_cache", "bench", "tests"
        ),
    )
    _git("init", "-q", cwd=src)
    _git("add", "-A", cwd=src)
    _git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "snapshot", cwd=src)
    return src


def _target(tmp_path: Path, files: dict[str, str]) -> Path:
    target = tmp_path / "project"
    target.mkdir()
    _git("init", "-q", cwd=target)
    for name, text in files.items():
        (target / name).write_text(text)
    _git("add", "-A", cwd=target)
    return target


def _try_repo(src: Path, target: Path, hook: str, *files: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(target.parent / "pre-commit-home"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(src), hook, "--files", *files],
        cwd=target,
        capture_output=True,
        env=env,
        timeout=600,
    )


def test_dupguard_hook_fails_on_bad_and_passes_on_clean(tmp_path: Path, repo_under_test: Path) -> None:
    bad = (RULES_DIR / "DUP101-shared-agent-singleton" / "bad.py").read_text()
    good = (RULES_DIR / "DUP101-shared-agent-singleton" / "good.py").read_text()
    target = _target(tmp_path, {"bad_app.py": bad, "clean_app.py": good})
    failing = _try_repo(repo_under_test, target, "dupguard", "bad_app.py", "clean_app.py")
    out = failing.stdout.decode()
    assert failing.returncode == 1, out + failing.stderr.decode()
    assert "bad_app.py:9:1: DUP101" in out and "clean_app.py" not in out.split("Failed")[-1]
    passing = _try_repo(repo_under_test, target, "dupguard", "clean_app.py")
    assert passing.returncode == 0, passing.stdout.decode() + passing.stderr.decode()
    assert "Passed" in passing.stdout.decode()


def test_dupguard_hook_on_the_route_file_alone_sees_the_project(tmp_path: Path, repo_under_test: Path) -> None:
    """pre-commit passes only the changed files: a commit that touches the route alone still gets
    the finding about the agent another module builds (the project index covers the whole tree).
    The shape is serkanh/sre-bot-strands@d1e2e440a9f36b83ca2d13a4a21491a57f6edf22 (the agent
    built in one module, the FastAPI route in another that imports no agent framework)."""
    target = _target(tmp_path, {})
    (target / "app").mkdir()
    (target / "app" / "__init__.py").write_text("")
    (target / "app" / "agent.py").write_text("from strands import Agent\n\nagent = Agent(tools=[])\n")
    (target / "app" / "routes.py").write_text(
        "from fastapi import FastAPI\n\nfrom app.agent import agent\n\napi = FastAPI()\n\n\n"
        "@api.post('/chat')\nasync def chat(prompt: str):\n    return await agent.invoke_async(prompt)\n"
    )
    _git("add", "-A", cwd=target)
    proc = _try_repo(repo_under_test, target, "dupguard", "app/routes.py")
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "app/routes.py:10:18: DUP101" in out and "bound at module level in app/agent.py:3" in out


def test_dupguard_hook_lints_each_file_of_a_monorepo_by_its_own_config(tmp_path: Path, repo_under_test: Path) -> None:
    """pre-commit runs the hook from the repository root with the changed files named: each is
    linted under the nearest config above it (docs/configuration.md), not the root's."""
    bad = (RULES_DIR / "DUP101-shared-agent-singleton" / "bad.py").read_text()
    target = _target(tmp_path, {})
    for project, config in (("api", '[tool.dupguard]\nignore = ["DUP101"]\n'), ("worker", "[tool.dupguard]\n")):
        (target / project).mkdir()
        (target / project / "pyproject.toml").write_text(config)
        (target / project / "app.py").write_text(bad)
    _git("add", "-A", cwd=target)
    proc = _try_repo(repo_under_test, target, "dupguard", "api/app.py", "worker/app.py")
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "worker/app.py:9:1: DUP101" in out and "api/app.py" not in out.split("Failed")[-1]


def test_dupguard_hook_is_given_notebooks(tmp_path: Path, repo_under_test: Path) -> None:
    """The hooks take ``types_or: [python, pyi, jupyter]``, as ruff's do: a notebook in the
    commit is linted (docs/adoption.md), and reported by cell."""
    import json

    def cell(source: str) -> dict:
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}

    notebook = {
        "cells": [
            cell("from fastapi import FastAPI\nfrom strands import Agent\n\napp = FastAPI()\nagent = Agent(tools=[])"),
            cell("@app.post('/chat')\nasync def chat(prompt: str):\n    return await agent.invoke_async(prompt)"),
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    target = _target(tmp_path, {"explore.ipynb": json.dumps(notebook, indent=1) + "\n"})
    proc = _try_repo(repo_under_test, target, "dupguard", "explore.ipynb")
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "explore.ipynb:cell 1:5:1: DUP101" in out
