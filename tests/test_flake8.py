"""The flake8 plugin, through real ``flake8`` subprocesses: same findings as the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from linthelpers import ROOT, rule_folders, run_cli

FLAKE8_LINE = re.compile(r"^(?P<file>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>DUP\d{3}) (?P<msg>.*)$")


def _flake8(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, timeout=300)


def _parse(output: str) -> set[tuple[str, int, int, str, str]]:
    out = set()
    for line in output.splitlines():
        match = FLAKE8_LINE.match(line)
        if match:
            out.add((Path(match["file"]).name, int(match["row"]), int(match["col"]), match["code"], match["msg"]))
    return out


def test_flake8_and_cli_agree_on_every_bad_file() -> None:
    files = [str(folder / "bad.py") for folder in rule_folders()]
    flake8 = _flake8("--isolated", "--select", "DUP", *files)
    cli = run_cli("check", "--no-cache", "--isolated", "--output-format", "json", *files)
    from_cli = {
        (Path(d["filename"]).name, d["location"]["row"], d["location"]["column"], d["code"], d["message"])
        for d in json.loads(cli.stdout)
    }
    from_flake8 = _parse(flake8.stdout.decode())
    assert from_cli, "the CLI found nothing in the bad files"
    assert from_flake8 == from_cli, flake8.stderr.decode()
    assert flake8.returncode == 1


def test_flake8_select_ignore_and_noqa(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """\
        from fastapi import FastAPI
        from llama_index.core.agent import ReActAgent

        app = FastAPI()
        agent = ReActAgent.from_tools(tools=[])
        second = ReActAgent.from_tools(tools=[])  # noqa: DUP101


        @app.post("/chat")
        async def chat(payload: dict):
            await second.achat("x")
            return await agent.achat(payload["message"])
        """
    )
    (tmp_path / "app.py").write_text(source)
    found = _parse(_flake8("--isolated", "--select", "DUP", "app.py", cwd=tmp_path).stdout.decode())
    assert {(row, code) for _, row, _, code, _ in found} == {(5, "DUP101")}
    assert _flake8("--isolated", "--select", "DUP", "--ignore", "DUP101", "app.py", cwd=tmp_path).returncode == 0
    assert _flake8("--isolated", "--select", "DUP3", "app.py", cwd=tmp_path).returncode == 0


def test_flake8_honours_catalog_extensions(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        textwrap.dedent(
            """\
        from flask import Flask
        from mycompany.bots import SupportBot

        app = Flask(__name__)
        bot = SupportBot()


        @app.route("/chat", methods=["POST"])
        def chat():
            return bot.chat("hi")
        """
        )
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dupguard]\nextend-stateful-agents = ["mycompany.bots.SupportBot"]\n'
    )
    proc = _flake8("--select", "DUP", "app.py", cwd=tmp_path)
    assert {(row, code) for _, row, _, code, _ in _parse(proc.stdout.decode())} == {(5, "DUP101")}
