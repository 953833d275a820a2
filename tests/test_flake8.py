"""The flake8 plugin, through real ``flake8`` subprocesses: same findings as the CLI."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from linthelpers import ROOT, SHARED_AGENT, rule_folders, run_cli

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


def test_flake8_and_cli_agree_on_every_bad_file(tmp_path: Path) -> None:
    # copies: this repository's [tool.dupguard] excludes rules/, which the plugin honours
    for folder in rule_folders():
        (tmp_path / folder.name).mkdir()
        shutil.copy(folder / "bad.py", tmp_path / folder.name / "bad.py")
    files = [f"{folder.name}/bad.py" for folder in rule_folders()]
    flake8 = _flake8("--isolated", "--select", "DUP", *files, cwd=tmp_path)
    cli = run_cli("check", "--no-cache", "--isolated", "--output-format", "json", *files, cwd=tmp_path)
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


def _project(tmp_path: Path, config: str, files: tuple[str, ...]) -> None:
    (tmp_path / "pyproject.toml").write_text(config)
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(SHARED_AGENT)


def test_flake8_applies_per_file_ignores_and_excludes_like_the_cli(tmp_path: Path) -> None:
    config = textwrap.dedent(
        """\
        [tool.dupguard]
        exclude = ["legacy/*.py"]
        extend-exclude = ["generated"]

        [tool.dupguard.per-file-ignores]
        "tests/*" = ["DUP1"]
        "scripts/tool.py" = ["DUP102"]
        """
    )
    files = ("app.py", "tests/test_app.py", "scripts/tool.py", "legacy/old.py", "generated/api/client.py")
    _project(tmp_path, config, files)
    cli = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    from_cli = {
        (
            (tmp_path / d["filename"]).resolve().relative_to(tmp_path.resolve()).as_posix(),
            d["location"]["row"],
            d["code"],
        )
        for d in json.loads(cli.stdout)
    }
    flake8 = _flake8("--select", "DUP", ".", cwd=tmp_path)
    from_flake8 = set()
    for line in flake8.stdout.decode().splitlines():
        match = FLAKE8_LINE.match(line)
        assert match, line
        from_flake8.add((Path(match["file"]).as_posix(), int(match["row"]), match["code"]))
    assert from_flake8 == from_cli == {("app.py", 5, "DUP101"), ("scripts/tool.py", 5, "DUP101")}
    # flake8 gives the plugin named files too: dupguard's excludes hold for them (--force-exclude)
    named = _flake8("--select", "DUP", "legacy/old.py", "generated/api/client.py", "tests/test_app.py", cwd=tmp_path)
    assert named.stdout.decode() == "" and named.returncode == 0, named.stderr.decode()


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ('[tool.dupguard]\nignore = ["DUP999"]\n', "ignore: unknown rule code or prefix 'DUP999'"),
        ("[tool.dupguard]\nselect = \n", "invalid TOML"),
        ("[tool.dupguard]\nno-such-key = 1\n", "no-such-key"),
    ],
    ids=["unknown code", "invalid TOML", "unknown key"],
)
def test_a_configuration_error_fails_the_flake8_run(tmp_path: Path, config: str, problem: str) -> None:
    """Not a silent lint with the defaults: flake8 shows the problem once and exits 1, even with
    --exit-zero, whatever is selected (a DUP000 finding could be deselected or noqa'd away)."""
    _project(tmp_path, config, ("app.py", "b.py"))
    runs = [["--select", "DUP"], ["--exit-zero", "-j", "1"], ["--select", "E,W"]] if "DUP999" in config else [[]]
    for args in runs:
        proc = _flake8(*args, ".", cwd=tmp_path)
        out = proc.stdout.decode()
        assert proc.returncode == 1, (args, out, proc.stderr.decode())
        assert '"dupguard[DUP]" failed during execution due to dupguard configuration error:' in out, out
        assert str(tmp_path / "pyproject.toml") in out and problem in out, out
        assert not _parse(out) and "Traceback" not in out + proc.stderr.decode()


def test_flake8_on_the_route_file_knows_the_project(tmp_path: Path) -> None:
    """flake8 given only the file that uses the agent (as an editor or pre-commit does): the
    plugin builds the project index from the tree and reports what ``dupguard check`` reports.
    The shape is NeoFacturing/backend@174cfd9bc40a1f0058109a029c15a15f95626522 (app/core/agent.py
    builds it, app/core/chat.py runs it)."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "agent.py").write_text(
        "from langchain.agents import AgentExecutor\n"
        "from langchain.memory import ConversationBufferMemory\n\n"
        "agent = AgentExecutor(agent=None, tools=[], memory=ConversationBufferMemory())\n"
    )
    (tmp_path / "app" / "routes.py").write_text(
        "from fastapi import FastAPI\n\nfrom app.agent import agent\n\napi = FastAPI()\n\n\n"
        "@api.post('/chat')\nasync def chat(question: str):\n    return agent.run(question)\n"
    )
    flake8 = _flake8("--select", "DUP", "app/routes.py", cwd=tmp_path)
    found = _parse(flake8.stdout.decode())
    assert [(f, row, code) for f, row, _, code, _ in found] == [("routes.py", 10, "DUP101")], flake8.stderr.decode()
    assert "bound at module level in app/agent.py:4" in next(iter(found))[4]
    cli = run_cli("check", "--no-cache", "--output-format", "concise", "app/routes.py", cwd=tmp_path)
    assert "app/routes.py:10:12: DUP101" in cli.stdout.decode()
