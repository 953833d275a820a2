"""The ``dupguard`` command end to end, in real subprocesses."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from linthelpers import RULES_DIR, SHARED_AGENT, expected_markers, rule_folders, run_cli

BAD = RULES_DIR / "DUP101-shared-agent-singleton" / "bad.py"


def _project(tmp_path: Path, files: dict[str, str | bytes], config: str | None = None) -> Path:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    if config is not None:
        (tmp_path / "pyproject.toml").write_text(f"[tool.dupguard]\n{config}\n", encoding="utf-8")
    return tmp_path


def _json(proc) -> list[dict]:
    return json.loads(proc.stdout.decode())


# ------------------------------------------------------------------------- rules folders


@pytest.mark.parametrize("folder", rule_folders(), ids=lambda f: f.name)
def test_check_bad_exits_1_with_marked_lines_and_good_exits_0(folder: Path) -> None:
    code = folder.name.split("-")[0]
    proc = run_cli(
        "check", "--no-cache", "--isolated", "--select", code, "--output-format", "json", str(folder / "bad.py")
    )
    assert proc.returncode == 1, proc.stderr.decode()
    found = {(d["location"]["row"], d["code"]) for d in _json(proc)}
    assert found == {m for m in expected_markers(folder / "bad.py") if m[1] == code}
    proc = run_cli("check", "--no-cache", "--isolated", "--select", code, str(folder / "good.py"))
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


# ------------------------------------------------------------------------- output formats


def test_full_format_has_code_frame_caret_and_hint() -> None:
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", "full", str(BAD))
    out = proc.stdout.decode()
    assert re.search(r"bad\.py:9:1: DUP101 `agent` is a stateful", out)
    assert re.search(r"^\s+9 \| agent = ReActAgent", out, re.MULTILINE)
    assert re.search(r"^\s+\| \^{10,}", out, re.MULTILINE)
    assert "= help:" in out and "dupguard rule DUP101" in out
    assert re.search(r"Found \d+ errors\.", out)


def test_concise_and_grouped_formats() -> None:
    concise = run_cli("check", "--no-cache", "--isolated", "--output-format", "concise", str(BAD)).stdout.decode()
    lines = [line for line in concise.splitlines() if "DUP101" in line]
    assert len(lines) == 4 and all(re.match(r".+bad\.py:\d+:\d+: DUP101 ", line) for line in lines)
    grouped = run_cli("check", "--no-cache", "--isolated", "--output-format", "grouped", str(BAD)).stdout.decode()
    assert grouped.splitlines()[0].endswith("bad.py:")
    assert re.search(r"^  9:1 DUP101 ", grouped, re.MULTILINE)


def test_json_has_ruff_shaped_fields() -> None:
    data = _json(run_cli("check", "--no-cache", "--isolated", "--output-format", "json", str(BAD)))
    assert data
    for item in data:
        assert set(item) >= {
            "code",
            "name",
            "message",
            "filename",
            "location",
            "end_location",
            "fix",
            "noqa_row",
            "url",
        }
        assert item["name"] == "shared-agent-singleton"
        assert set(item["location"]) == {"row", "column"} and item["location"]["column"] >= 1
        assert os.path.isabs(item["filename"])
        assert item["url"].endswith("DUP101.md")


def test_json_lines() -> None:
    out = run_cli("check", "--no-cache", "--isolated", "--output-format", "json-lines", str(BAD)).stdout.decode()
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 4 and {r["code"] for r in rows} == {"DUP101"}


def test_sarif_is_valid_2_1_0_with_rule_metadata() -> None:
    doc = json.loads(run_cli("check", "--no-cache", "--isolated", "--output-format", "sarif", str(BAD)).stdout)
    assert doc["version"] == "2.1.0" and "$schema" in doc
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert "DUP101" in ids and ids == sorted(ids)
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["helpUri"].startswith("https://")
    assert len(run["results"]) == 4
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1


def test_github_annotations() -> None:
    out = run_cli("check", "--no-cache", "--isolated", "--output-format", "github", str(BAD)).stdout.decode()
    lines = out.splitlines()
    assert len(lines) == 4
    pattern = re.compile(
        r"^::error file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=DUP\d{3}::.+DUP\d{3} .+$"
    )
    assert all(pattern.match(line) for line in lines), lines


def test_statistics_quiet_and_exit_zero() -> None:
    stats = run_cli("check", "--no-cache", "--isolated", "--statistics", str(BAD))
    assert stats.returncode == 1
    assert re.match(r"\s+4\tDUP101\tshared-agent-singleton", stats.stdout.decode())
    quiet = run_cli("check", "--no-cache", "--isolated", "--quiet", "--exit-zero", str(BAD))
    assert quiet.returncode == 0 and "Found" not in quiet.stdout.decode()


def test_rules_and_rule_commands() -> None:
    table = run_cli("rules").stdout.decode()
    assert re.search(r"^DUP101\s+shared-agent-singleton\s+unsafe$", table, re.MULTILINE)
    assert re.search(r"^DUP301\s+duplicate-tool\s+safe$", table, re.MULTILINE)
    doc = run_cli("rule", "dup101")
    assert doc.returncode == 0 and "## Why is this bad?" in doc.stdout.decode()
    assert run_cli("rule", "DUP999").returncode == 2
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.decode().startswith("dupguard ")


def test_stdin_with_filename() -> None:
    proc = run_cli(
        "check",
        "--no-cache",
        "--isolated",
        "--output-format",
        "concise",
        "--stdin-filename",
        "api/chat.py",
        "-",
        stdin=SHARED_AGENT.encode(),
    )
    assert proc.returncode == 1
    assert proc.stdout.decode().startswith("api/chat.py:5:1: DUP101")


# ------------------------------------------------------------------------- configuration


def test_select_ignore_from_file_and_flags(tmp_path: Path) -> None:
    _project(tmp_path, {"app.py": SHARED_AGENT}, config='ignore = ["DUP1"]')
    assert run_cli("check", "--no-cache", "app.py", cwd=tmp_path).returncode == 0
    # the flag overrides the file
    assert run_cli("check", "--no-cache", "--ignore", "DUP3", "app.py", cwd=tmp_path).returncode == 1
    assert run_cli("check", "--no-cache", "--isolated", "app.py", cwd=tmp_path).returncode == 1
    assert run_cli("check", "--no-cache", "--isolated", "--select", "DUP3", "app.py", cwd=tmp_path).returncode == 0
    assert (
        run_cli(
            "check", "--no-cache", "--isolated", "--select", "DUP3", "--extend-select", "DUP101", "app.py", cwd=tmp_path
        ).returncode
        == 1
    )


def test_per_file_ignores_from_file_and_flag(tmp_path: Path) -> None:
    _project(
        tmp_path,
        {"api/app.py": SHARED_AGENT, "web/app.py": SHARED_AGENT},
        config='[tool.dupguard.per-file-ignores]\n"api/*" = ["DUP101"]',
    )
    out = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout.decode()
    assert "web/app.py" in out and "api/app.py" not in out
    out = run_cli(
        "check",
        "--no-cache",
        "--isolated",
        "--per-file-ignores",
        "web/*:DUP1",
        "--output-format",
        "concise",
        ".",
        cwd=tmp_path,
    ).stdout.decode()
    assert "api/app.py" in out and "web/app.py" not in out


def test_exclude_extend_exclude_and_gitignore(tmp_path: Path) -> None:
    _project(
        tmp_path,
        {"a/app.py": SHARED_AGENT, "b/app.py": SHARED_AGENT, "c/app.py": SHARED_AGENT, ".gitignore": "c/\n"},
        config='extend-exclude = ["b"]',
    )
    out = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout.decode()
    assert "a/app.py" in out and "b/app.py" not in out and "c/app.py" not in out
    out = run_cli(
        "check", "--no-cache", "--isolated", "--exclude", "a", "--output-format", "concise", ".", cwd=tmp_path
    ).stdout.decode()
    assert "a/app.py" not in out and "b/app.py" in out and "c/app.py" not in out
    (tmp_path / "pyproject.toml").write_text("[tool.dupguard]\nrespect-gitignore = false\n")
    out = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout.decode()
    assert "c/app.py" in out


@pytest.mark.parametrize(
    "config, needle",
    [
        ('selec = ["DUP1"]', "unknown key 'selec'"),
        ('select = ["DUP9"]', "select: unknown rule code or prefix 'DUP9'"),
        ('ignore = "DUP101"', "ignore: expected a list"),
        ('output-format = "xml"', "output-format: 'xml' is not one of full, concise"),
        ('respect-gitignore = "yes"', "respect-gitignore: expected true or false"),
        (
            'extend-stateful-agents = ["my agents.Bot"]',
            "extend-stateful-agents: 'my agents.Bot' is not a qualified name",
        ),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_config_exits_2_naming_the_key(tmp_path: Path, config: str, needle: str) -> None:
    _project(tmp_path, {"app.py": SHARED_AGENT}, config=config)
    proc = run_cli("check", "app.py", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and needle in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_flag_value_exits_2(tmp_path: Path) -> None:
    proc = run_cli("check", "--select", "XYZ1", str(BAD))
    assert proc.returncode == 2 and "select: unknown rule code or prefix 'XYZ1'" in proc.stderr.decode()


def test_catalog_extension_from_config(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """\
        from fastapi import FastAPI
        from mycompany.bots import SupportBot

        app = FastAPI()
        bot = SupportBot()


        @app.post("/chat")
        def chat(payload: dict):
            return bot.chat(payload["message"])
        """
    )
    _project(tmp_path, {"app.py": source})
    assert run_cli("check", "--no-cache", "app.py", cwd=tmp_path).returncode == 0
    _project(tmp_path, {}, config='extend-stateful-agents = ["mycompany.bots.SupportBot"]')
    proc = run_cli("check", "--no-cache", "--output-format", "concise", "app.py", cwd=tmp_path)
    assert proc.returncode == 1 and "app.py:5:1: DUP101" in proc.stdout.decode()


def test_noqa_variants(tmp_path: Path) -> None:
    base = SHARED_AGENT.replace("agent = ReActAgent.from_tools(tools=[])", "agent = ReActAgent.from_tools(tools=[]){}")
    for suffix, expected in (("  # noqa", 0), ("  # noqa: DUP101", 0), ("  # noqa: DUP1", 0), ("  # noqa: DUP3", 1)):
        _project(tmp_path, {"app.py": base.format(suffix)})
        assert run_cli("check", "--no-cache", "--isolated", "app.py", cwd=tmp_path).returncode == expected, suffix
    _project(tmp_path, {"app.py": "# dupguard: noqa\n" + base.format("")})
    assert run_cli("check", "--no-cache", "--isolated", "app.py", cwd=tmp_path).returncode == 0


# ------------------------------------------------------------------------- cache


def test_cache_hits_and_invalidates(tmp_path: Path) -> None:
    _project(tmp_path, {"app.py": SHARED_AGENT}, config='cache-dir = "cachedir"')
    first = run_cli("check", "--output-format", "json", "app.py", cwd=tmp_path)
    assert (tmp_path / "cachedir").is_dir()
    second = run_cli("check", "--output-format", "json", "app.py", cwd=tmp_path)
    assert _json(first) == _json(second) and len(_json(first)) == 1
    (tmp_path / "app.py").write_text(SHARED_AGENT.replace("agent.achat", "print"))
    assert run_cli("check", "app.py", cwd=tmp_path).returncode == 0
    # changing the selection invalidates too
    (tmp_path / "app.py").write_text(SHARED_AGENT)
    assert run_cli("check", "--select", "DUP3", "app.py", cwd=tmp_path).returncode == 0
    assert run_cli("check", "app.py", cwd=tmp_path).returncode == 1


def test_jobs_gives_same_results(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": SHARED_AGENT for i in range(40)}
    _project(tmp_path, files)
    one = _json(
        run_cli("check", "--no-cache", "--isolated", "--jobs", "1", "--output-format", "json", ".", cwd=tmp_path)
    )
    two = _json(
        run_cli("check", "--no-cache", "--isolated", "--jobs", "2", "--output-format", "json", ".", cwd=tmp_path)
    )
    assert len(one) == 40 and one == two


# ------------------------------------------------------------------------- bad input


def test_bad_input_one_clear_line_each_and_the_rest_is_linted(tmp_path: Path) -> None:
    crlf = SHARED_AGENT.replace("\n", "\r\n").encode()
    bom = b"\xef\xbb\xbf" + SHARED_AGENT.encode()
    _project(
        tmp_path,
        {
            "good/app.py": SHARED_AGENT,
            "syntax.py": "from llama_index.core.agent import ReActAgent\ndef broken(:\n",
            "latin.py": b"from strands import Agent\nname = '\xe9t\xe9'\n",
            "crlf.py": crlf,
            "bom.py": bom,
            "empty.py": "",
            "tabs.py": SHARED_AGENT.replace("    ", "\t"),
        },
    )
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.py").write_text(SHARED_AGENT)
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    os.symlink(tmp_path, tmp_path / "good" / "up")
    locked.chmod(0)
    try:
        proc = run_cli(
            "check",
            "--no-cache",
            "--isolated",
            "--output-format",
            "concise",
            ".",
            "nonexistent.py",
            cwd=tmp_path,
            unprivileged=True,
        )
    finally:
        locked.chmod(0o755)
    err = proc.stderr.decode()
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert "Traceback" not in err
    assert re.search(r"syntax\.py: syntax error at line 2", err)
    assert re.search(r"latin\.py: cannot decode as utf-8", err)
    assert "nonexistent.py: no such file or directory" in err
    assert re.search(r"dangling\.py: broken symbolic link", err)
    assert re.search(r"locked: permission denied", err)
    # every other file was still linted, CRLF / BOM / tabs included
    for name in ("good/app.py", "crlf.py", "bom.py", "tabs.py"):
        assert f"{name}:5:1: DUP101" in out, name
    assert "empty.py" not in out + err
    assert out.count("DUP101") == 4


def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    _project(tmp_path, {"secret.py": SHARED_AGENT, "app.py": SHARED_AGENT})
    (tmp_path / "secret.py").chmod(0)
    proc = run_cli("check", "--no-cache", "--isolated", "secret.py", "app.py", cwd=tmp_path, unprivileged=True)
    assert "secret.py: permission denied" in proc.stderr.decode() and proc.returncode == 1


def test_no_agent_code_never_imports_libcst(tmp_path: Path) -> None:
    _project(tmp_path, {"a.py": "import os\nprint(os.getcwd())\n", "b/c.py": "def f():\n    return 1\n"})
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['dupguard', 'check', '--no-cache', '--isolated', '.']\n"
        "from dupguard.cli import main\n"
        "code = main()\n"
        "assert code == 0, code\n"
        "assert 'libcst' not in sys.modules, 'libcst was imported'\n"
        "print('ok')\n"
    )
    import subprocess

    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True)
    assert proc.returncode == 0 and proc.stdout.decode().strip().endswith("ok"), proc.stderr.decode()


@pytest.mark.parametrize("case", ["no-cache", "cache", "pre-commit hook"])
def test_one_named_file_loads_only_what_it_needs(tmp_path: Path, case: str) -> None:
    """The pre-commit case (issue 6, target 6): one irrelevant file named on the command line.
    What it must not import is what made start-up slow (bench/RESULTS.md): the parser, the
    codemods, pathspec, TOML, dataclasses (which pulls in ``inspect``), the catalog. The hook
    runs with ``--force-exclude`` in a project with a config: plain-path excludes need no pathspec."""
    config = 'extend-exclude = ["generated", "tests/fixtures/"]' if case == "pre-commit hook" else None
    _project(tmp_path, {"a.py": "import os\nprint(os.getcwd())\n"}, config=config)
    flags = {"no-cache": ["--no-cache"], "cache": [], "pre-commit hook": ["--force-exclude"]}[case]
    heavy = [
        "libcst",
        "pathspec",
        "dataclasses",
        "inspect",
        "dupguard.semantic.catalog_data",
        "dupguard.codemods",
        "shutil",
        # the language server (`dupguard server` only)
        "dupguard.server",
        "dupguard.editor",
        "pygls",
        "lsprotocol",
    ]  # argparse's formatter imports shutil (and bz2, lzma) unless given a width
    if config is None:
        heavy += ["tomllib", "tomli"]
    probe = (
        "import sys\n"
        f"sys.argv = ['dupguard', 'check', *{flags!r}, 'a.py']\n"
        "from dupguard.cli import main\n"
        "assert main() == 0\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    import subprocess

    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines()[-1] == "[]"


@pytest.mark.parametrize("columns", ["40", "120"])
def test_help_is_what_argparses_own_formatter_writes(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from dupguard import cli

    def helps() -> list[str]:
        cli._terminal_columns.cache_clear()
        parser = cli.build_parser()
        commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        return [parser.format_help()] + [commands[name].format_help() for name in ("check", "fix", "rule")]

    monkeypatch.setenv("COLUMNS", columns)
    try:
        ours = helps()
        monkeypatch.setattr(cli, "_Formatter", argparse.HelpFormatter)
        assert ours == helps()
    finally:
        cli._terminal_columns.cache_clear()  # the next test's terminal, not this one's
    if columns == "120":
        assert max(len(line) for line in ours[1].splitlines()) > 40


def test_the_project_lints_itself_clean() -> None:
    """Dogfooding with the project's own [tool.dupguard] (fixtures are excluded there)."""
    proc = run_cli("check", "--no-cache", "--output-format", "concise", ".")
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


def test_fixes_are_built_only_for_reports_that_carry_them() -> None:
    """Text reports skip building replacements (the costly part of the fixable rules)."""
    from dupguard.config import Settings
    from dupguard.pipeline import lint_text

    path = RULES_DIR / "DUP301-duplicate-tool" / "bad.py"
    plain = Settings()
    text = path.read_text()
    without = lint_text(str(path), text, plain, frozenset({"DUP301"}))
    with_fixes = lint_text(str(path), text, plain._replace(with_fixes=True), frozenset({"DUP301"}))
    assert [d.row for d in without] == [d.row for d in with_fixes] and without
    assert all(d.fix is None for d in without)
    assert all(d.fix is not None and d.fix.applicability == "safe" for d in with_fixes)
    data = _json(
        run_cli("check", "--no-cache", "--isolated", "--select", "DUP301", "--output-format", "json", str(path))
    )
    assert all(item["fix"]["edits"] for item in data)


def test_readme_example_command_reports_the_shipped_example() -> None:
    """`dupguard check examples/` from the checkout (the README's first command): the project's
    config excludes examples/ from `check .`, but a directory named on the command line is
    linted, like ruff."""
    proc = run_cli("check", "--no-cache", "--output-format", "json", "examples/")
    assert proc.returncode == 1
    assert sorted(d["code"] for d in _json(proc)) == ["DUP102", "DUP301"]
    assert run_cli("check", "--no-cache", "--force-exclude", "examples/").returncode == 0
