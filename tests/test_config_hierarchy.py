"""Configuration like ruff's (issue 17, item 4), end to end in real subprocesses: each file under
the nearest config above it, ``extend``, git's ignore files above the linted root, ``--output-file``,
colour (``NO_COLOR``/``FORCE_COLOR``) and ``--watch``. docs/configuration.md describes all of it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from linthelpers import run_cli

# three findings in one file: DUP301 (a safe fix), DUP102 and DUP101
APP = textwrap.dedent(
    """\
    from agents import Agent, function_tool
    from fastapi import FastAPI
    from llama_index.core.agent import ReActAgent
    from llama_index.core.memory import ChatMemoryBuffer


    def search(query: str) -> str:
        return query


    search_tool = function_tool(search)
    support = Agent(name="support", tools=[search_tool, search_tool])

    app = FastAPI()
    memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
    agent = ReActAgent.from_tools(tools=[], memory=memory)


    @app.post("/chat")
    async def chat(payload: dict):
        return await agent.achat(payload["message"])
    """
)
ALL_CODES = {"DUP101", "DUP102", "DUP301"}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


_CONCISE = re.compile(r"^(?P<file>.+?):\d+:\d+: (?P<code>DUP\d+) ", re.MULTILINE)


def _found(proc: subprocess.CompletedProcess) -> dict[str, set[str]]:
    """A concise report → {filename (posix, as reported: relative to the working directory): {codes}}."""
    assert proc.returncode in (0, 1), proc.stderr.decode()
    out: dict[str, set[str]] = {}
    for match in _CONCISE.finditer(proc.stdout.decode()):
        out.setdefault(Path(match["file"]).as_posix(), set()).add(match["code"])
    return out


def _monorepo(root: Path) -> Path:
    """A root with no config of its own and two projects, each with its own (different select,
    ignore and per-file-ignores), in the three kinds of config file."""
    return _write(
        root,
        {
            "tool.py": APP,  # no config above it: the defaults
            "alpha/pyproject.toml": textwrap.dedent(
                """\
                [project]
                name = "alpha"

                [tool.dupguard]
                ignore = ["DUP101"]

                [tool.dupguard.per-file-ignores]
                "svc/legacy/*" = ["DUP3"]
                """
            ),
            "alpha/svc/app.py": APP,
            "alpha/svc/legacy/old.py": APP,
            "beta/dupguard.toml": 'select = ["DUP101", "DUP301"]\n\n[per-file-ignores]\n"scripts/*" = ["DUP101"]\n',
            "beta/app.py": APP,
            "beta/scripts/job.py": APP,
            # a pyproject.toml without [tool.dupguard] is not a config: gamma is under the root's
            "gamma/pyproject.toml": '[project]\nname = "gamma"\n',
            "gamma/app.py": APP,
        },
    )


MONOREPO_EXPECTED = {
    "tool.py": ALL_CODES,
    "alpha/svc/app.py": {"DUP102", "DUP301"},
    "alpha/svc/legacy/old.py": {"DUP102"},
    "beta/app.py": {"DUP101", "DUP301"},
    "beta/scripts/job.py": {"DUP301"},
    "gamma/app.py": ALL_CODES,
}


# ------------------------------------------------------------------------- hierarchy


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_monorepo_lints_each_file_by_its_own_config_from_the_root(tmp_path: Path, cache: bool) -> None:
    """The acceptance line: two projects with different configs, linted from the root."""
    root = _monorepo(tmp_path)
    flags = [] if cache else ["--no-cache"]
    for _ in range(2 if cache else 1):  # with the cache: a cold run, then a warm one answering from it
        proc = run_cli("check", *flags, "--output-format", "concise", ".", cwd=root)
        assert _found(proc) == MONOREPO_EXPECTED
    if cache:  # one cache, the root's, with a file per settings
        assert (root / ".dupguard_cache").is_dir()
        assert not (root / "alpha" / ".dupguard_cache").exists() and not (root / "beta" / ".dupguard_cache").exists()
        # a config change reaches the cached results of that project only
        (root / "beta" / "dupguard.toml").write_text('select = ["DUP102"]\n')
        proc = run_cli("check", "--output-format", "concise", ".", cwd=root)
        found = _found(proc)
        assert found["beta/app.py"] == found["beta/scripts/job.py"] == {"DUP102"}
        assert found["alpha/svc/app.py"] == {"DUP102", "DUP301"}


def test_a_project_gives_the_same_findings_from_its_own_directory_and_from_the_root(tmp_path: Path) -> None:
    root = _monorepo(tmp_path)
    inside = _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root / "alpha"))
    assert {f"alpha/{name}": codes for name, codes in inside.items()} == {
        name: codes for name, codes in MONOREPO_EXPECTED.items() if name.startswith("alpha/")
    }


def test_files_named_from_the_root_use_their_own_config_as_pre_commit_runs_them(tmp_path: Path) -> None:
    root = _monorepo(tmp_path)
    names = ["alpha/svc/app.py", "beta/scripts/job.py", "tool.py"]
    proc = run_cli("check", "--no-cache", "--force-exclude", "--output-format", "concise", *names, cwd=root)
    assert _found(proc) == {name: MONOREPO_EXPECTED[name] for name in names}


def test_stdin_is_linted_by_the_config_of_its_stdin_filename(tmp_path: Path) -> None:
    root = _monorepo(tmp_path)
    like = {"beta/scripts/new.py": "beta/scripts/job.py", "alpha/svc/new.py": "alpha/svc/app.py", "new.py": "tool.py"}
    for name, sibling in like.items():
        proc = run_cli(
            "check",
            "--no-cache",
            "--output-format",
            "concise",
            "--stdin-filename",
            name,
            "-",
            cwd=root,
            stdin=APP.encode(),
        )
        assert _found(proc) == {name: MONOREPO_EXPECTED[sibling]}


def test_config_and_isolated_apply_to_every_file(tmp_path: Path) -> None:
    root = _monorepo(tmp_path)
    (root / "only301.toml").write_text('select = ["DUP301"]\n')
    fixed = _found(
        run_cli("check", "--no-cache", "--config", "only301.toml", "--output-format", "concise", ".", cwd=root)
    )
    assert fixed == {name: {"DUP301"} for name in MONOREPO_EXPECTED}
    isolated = _found(run_cli("check", "--no-cache", "--isolated", "--output-format", "concise", ".", cwd=root))
    assert isolated == {name: ALL_CODES for name in MONOREPO_EXPECTED}
    # a command-line option overrides that key in every file's config
    flagged = _found(run_cli("check", "--no-cache", "--select", "DUP102", "--output-format", "concise", ".", cwd=root))
    assert flagged == {name: {"DUP102"} for name in MONOREPO_EXPECTED}


def test_each_project_excludes_by_its_own_patterns(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "a/.dupguard.toml": 'extend-exclude = ["generated", "/svc/skip.py"]\n',
            "a/generated/app.py": APP,
            "a/svc/skip.py": APP,
            "a/svc/app.py": APP,
            "b/pyproject.toml": "[tool.dupguard]\n",
            "b/generated/app.py": APP,
            "b/svc/skip.py": APP,
        },
    )
    found = _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root))
    assert set(found) == {"a/svc/app.py", "b/generated/app.py", "b/svc/skip.py"}


def test_the_nearest_of_three_config_files_in_one_directory_wins_like_ruff(tmp_path: Path) -> None:
    root = _write(tmp_path, {"p/app.py": APP, "p/pyproject.toml": '[tool.dupguard]\nselect = ["DUP101"]\n'})
    assert _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root)) == {
        "p/app.py": {"DUP101"}
    }
    (root / "p" / "dupguard.toml").write_text('select = ["DUP102"]\n')
    assert _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root)) == {
        "p/app.py": {"DUP102"}
    }
    (root / "p" / ".dupguard.toml").write_text('select = ["DUP301"]\n')
    assert _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root)) == {
        "p/app.py": {"DUP301"}
    }


def test_fix_uses_each_files_config(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "a/pyproject.toml": '[tool.dupguard]\nunfixable = ["DUP301"]\n',
            "a/app.py": APP,
            "b/pyproject.toml": "[tool.dupguard]\n",
            "b/app.py": APP,
        },
    )
    proc = run_cli("fix", "--diff", ".", cwd=root)
    assert proc.returncode == 1, proc.stderr.decode()
    diff = proc.stdout.decode()
    assert "+++ b/b/app.py" in diff and "+++ b/a/app.py" not in diff


def test_the_project_index_of_each_project_is_its_own(tmp_path: Path) -> None:
    """The agent built in one module of project ``svc`` and served from another: from the
    monorepo's root, the route is reported with the place the agent is built (the index is
    built for the file's project root, where ``import app.agent`` resolves)."""
    root = _write(
        tmp_path,
        {
            "svc/pyproject.toml": "[tool.dupguard]\n",
            "svc/app/__init__.py": "",
            "svc/app/agent.py": "from strands import Agent\n\nagent = Agent(tools=[])\n",
            "svc/app/routes.py": "from fastapi import FastAPI\n\nfrom app.agent import agent\n\napi = FastAPI()\n\n\n"
            "@api.post('/chat')\nasync def chat(prompt: str):\n    return await agent.invoke_async(prompt)\n",
            "other/pyproject.toml": '[tool.dupguard]\nselect = ["DUP3"]\n',
            "other/x.py": APP,
        },
    )
    for flags in ([], ["--no-cache"]):
        proc = run_cli("check", *flags, "--output-format", "json", ".", cwd=root)
        report = json.loads(proc.stdout)
        routes = [d for d in report if d["filename"] == str(root / "svc/app/routes.py")]
        assert routes and "bound at module level in app/agent.py:3" in routes[0]["message"], proc.stdout.decode()
        assert {d["code"] for d in report if d["filename"] == str(root / "other/x.py")} == {"DUP301"}


def test_flake8_lints_each_file_by_its_own_config(tmp_path: Path) -> None:
    pytest.importorskip("flake8")
    root = _monorepo(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DUP", "."], cwd=root, capture_output=True, timeout=300
    )
    found: dict[str, set[str]] = {}
    for line in proc.stdout.decode().splitlines():
        name, _, _, rest = line.split(":", 3)
        found.setdefault(Path(name).as_posix().removeprefix("./"), set()).add(rest.split()[0])
    assert found == MONOREPO_EXPECTED, proc.stderr.decode()


# ------------------------------------------------------------------------- extend


def test_extend_chains_relative_to_the_file_that_says_it(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            # the base: selection, a per-file ignore anchored at its own directory, an exclusion
            "pyproject.toml": textwrap.dedent(
                """\
                [tool.dupguard]
                select = ["DUP1", "DUP3"]
                ignore = ["DUP102"]
                extend-exclude = ["/services/api/generated"]

                [tool.dupguard.per-file-ignores]
                "services/api/legacy.py" = ["DUP3"]
                """
            ),
            # the middle: adds to the base's ignore (no select of its own)
            "services/pyproject.toml": '[tool.dupguard]\nextend = "../pyproject.toml"\nignore = ["DUP101"]\n',
            # the leaf: extends the middle, which extends the base
            "services/api/dupguard.toml": 'extend = "../pyproject.toml"\n',
            "services/api/app.py": APP,
            "services/api/legacy.py": APP,
            "services/api/generated/app.py": APP,
            # a sibling that starts afresh with a select of its own: the base's ignores no longer apply
            "services/web/dupguard.toml": 'extend = "../../pyproject.toml"\nselect = ["DUP102"]\n',
            "services/web/app.py": APP,
        },
    )
    found = _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root))
    assert found == {"services/api/app.py": {"DUP301"}, "services/web/app.py": {"DUP102"}}
    # the same from the leaf's own directory
    leaf = _found(run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=root / "services" / "api"))
    assert leaf == {"app.py": {"DUP301"}}


@pytest.mark.parametrize(
    "files, names",
    [
        ({"p/pyproject.toml": '[tool.dupguard]\nextend = "pyproject.toml"\n'}, ["p/pyproject.toml"]),
        (
            {
                "p/pyproject.toml": '[tool.dupguard]\nextend = "../q/dupguard.toml"\n',
                "q/dupguard.toml": 'extend = "../p/pyproject.toml"\n',
            },
            ["p/pyproject.toml", "q/dupguard.toml"],
        ),
    ],
    ids=["itself", "two files"],
)
def test_an_extend_cycle_is_a_one_line_config_error(tmp_path: Path, files: dict[str, str], names: list[str]) -> None:
    root = _write(tmp_path, {**files, "p/app.py": APP})
    proc = run_cli("check", "--no-cache", ".", cwd=root)
    assert proc.returncode == 2
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "circular configuration" in lines[0] and "extend" in lines[0], lines
    for name in names:
        assert str(root / name) in lines[0]
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "extend, needle",
    [('"missing.toml"', "missing.toml: no such file"), ("3", "extend: expected the path of another config file")],
)
def test_a_bad_extend_is_a_one_line_config_error(tmp_path: Path, extend: str, needle: str) -> None:
    root = _write(tmp_path, {"p/pyproject.toml": f"[tool.dupguard]\nextend = {extend}\n", "p/app.py": APP})
    proc = run_cli("check", "--no-cache", ".", cwd=root)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and len(err.splitlines()) == 1 and needle in err and "pyproject.toml" in err, err


@pytest.mark.parametrize(
    "pattern, directory, expected",
    [
        ("migrations", "/r/shared", "migrations"),  # unanchored: the same anywhere
        ("*.gen.py", "/r/shared", "*.gen.py"),
        ("**/gen", "/", "**/gen"),
        ("/gen", "/r/p", "/gen"),  # the file's own directory is the root
        ("/gen", "/r/p/configs", "/configs/gen"),  # extended from below the root
        ("gen/x/", "/r/p/configs", "/configs/gen/x/"),
        ("!/keep", "/r/p/configs", "!/configs/keep"),
        ("/p/gen", "/r", "/gen"),  # extended from above the root: its path to the root is stripped
        ("p/sub/gen", "/r", "/sub/gen"),
        ("/other/gen", "/r", None),  # above the root, about another directory: nothing under the root
        ("/*/gen", "/r", "/*/gen"),  # a wildcard where the root's name is: kept, relative to the root
        ("/gen", "/elsewhere", None),
        ("/gen", "/r/p/a[1]", "/a\\[1]/gen"),  # the directory's own brackets match literally
    ],
)
def test_an_extended_files_patterns_keep_their_meaning(pattern: str, directory: str, expected: str | None) -> None:
    from dupguard.config import _rebase_pattern

    assert _rebase_pattern(pattern, directory, "/r/p") == expected


def test_an_extended_files_per_file_ignores_are_anchored_where_it_is(tmp_path: Path) -> None:
    from dupguard.config import Settings, _anchor_glob
    from dupguard.pipeline import codes_for_file

    assert _anchor_glob("__init__.py", "/r/base") == "__init__.py"
    assert _anchor_glob("scripts/*", "/r/a[1]") == "/r/a[[]1]/scripts/*"
    root = tmp_path / "p"
    settings = Settings(
        root=str(root), per_file_ignores=((_anchor_glob("p/scripts/*", str(tmp_path.resolve())), ("DUP1",)),)
    )
    codes = frozenset({"DUP101", "DUP301"})
    assert codes_for_file(str(root / "scripts" / "job.py"), settings, codes) == {"DUP301"}
    assert codes_for_file(str(root / "app.py"), settings, codes) == codes


def test_extend_on_the_command_line_is_not_an_option(tmp_path: Path) -> None:
    from dupguard.config import ConfigError, parse_table

    with pytest.raises(ConfigError, match="unknown key 'extend'"):
        parse_table({"extend": "x.toml"}, source="command line")


# ------------------------------------------------------------------------- gitignore

git = pytest.mark.skipif(shutil.which("git") is None, reason="git is the reference")


def _git(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env)


@git
def test_gitignore_above_the_root_info_exclude_and_global_excludes_as_git_applies_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config_home = tmp_path / "xdg"
    repo = tmp_path / "repo"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(config_home),
    }
    _write(config_home, {"git/ignore": "scratch_*.py\n"})
    _write(home, {"excludes": "# comment\n*_private.py\n"})
    files = {
        "proj/pyproject.toml": "[tool.dupguard]\n",
        "proj/app.py": APP,
        "proj/generated/app.py": APP,  # the repository root's .gitignore: generated/
        "proj/skip_me.py": APP,  # the repository root's .gitignore, anchored: /proj/skip_me.py
        "proj/notes_local.py": APP,  # .git/info/exclude: *_local.py
        "proj/scratch_1.py": APP,  # the global excludes file ($XDG_CONFIG_HOME/git/ignore)
        "proj/keep/scratch_2.py": APP,
        "proj/sub/deep.py": APP,  # the parent's (repo/proj) .gitignore: sub/deep.py
        ".gitignore": "# build output\ngenerated/\n/proj/skip_me.py\n",
        "proj/.gitignore": "sub/deep.py\n",
    }
    _write(repo, files)
    assert _git("init", "-q", cwd=repo, env=env).returncode == 0
    _write(repo, {".git/info/exclude": "*_local.py\n"})

    def linted(*args: str, cwd: Path) -> set[str]:
        proc = run_cli("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd, env=env)
        return set(_found(proc))

    def git_keeps(names: list[str]) -> set[str]:
        ignored = _git("check-ignore", "--no-index", *names, cwd=repo / "proj", env=env).stdout.decode().split()
        return {name for name in names if name not in ignored}

    pythons = [name.removeprefix("proj/") for name in files if name.startswith("proj/") and name.endswith(".py")]
    assert linted(".", cwd=repo / "proj") == git_keeps(pythons) == {"app.py"}

    # the global excludes file named by core.excludesFile instead of the default one
    _write(home, {".gitconfig": f'[user]\n\tname = t\n[core]\n\texcludesFile = "{home / "excludes"}" ; ours\n'})
    _write(repo, {"proj/other_private.py": APP})
    pythons.append("other_private.py")
    kept = git_keeps(pythons)
    assert "scratch_1.py" in kept and "other_private.py" not in kept
    assert linted(".", cwd=repo / "proj") == kept

    # named on the command line, a file git ignores is linted, unless --force-exclude
    assert linted("skip_me.py", "generated/app.py", cwd=repo / "proj") == {"skip_me.py", "generated/app.py"}
    assert linted("--force-exclude", "skip_me.py", "generated/app.py", "app.py", cwd=repo / "proj") == {"app.py"}
    # --no-respect-gitignore on the command line (as ruff's): none of them apply, even with --force-exclude
    assert linted("--no-respect-gitignore", ".", cwd=repo / "proj") == set(pythons)
    assert linted("--no-respect-gitignore", "--force-exclude", "skip_me.py", cwd=repo / "proj") == {"skip_me.py"}
    # respect-gitignore = false: none of them apply; --respect-gitignore turns them back on
    (repo / "proj" / "pyproject.toml").write_text("[tool.dupguard]\nrespect-gitignore = false\n")
    assert linted(".", cwd=repo / "proj") == set(pythons)
    assert linted("--respect-gitignore", ".", cwd=repo / "proj") == kept


def test_outside_a_repository_only_the_tree_own_gitignore_files_apply(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": "*.py\n", "proj/app.py": APP, "proj/.gitignore": "skip.py\n", "proj/skip.py": APP})
    proc = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path / "proj")
    assert set(_found(proc)) == {"app.py"}


# ------------------------------------------------------------------------- output


def test_output_file_holds_the_report_and_stdout_stays_quiet(tmp_path: Path) -> None:
    root = _write(tmp_path, {"app.py": APP})
    proc = run_cli("check", "--no-cache", "--output-file", "reports/out.txt", ".", cwd=root, env={"FORCE_COLOR": "1"})
    assert proc.returncode == 1 and proc.stdout == b"" and proc.stderr == b""
    report = (root / "reports" / "out.txt").read_text()
    assert "app.py:16:1: DUP101" in report and "Found 3 errors." in report and "\x1b[" not in report
    as_json = run_cli("check", "--no-cache", "-o", "out.json", "--output-format", "json", "app.py", cwd=root)
    assert as_json.returncode == 1 and as_json.stdout == b""
    assert {d["code"] for d in json.loads((root / "out.json").read_text())} == ALL_CODES


def test_an_output_file_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    root = _write(tmp_path, {"app.py": APP, "taken": ""})
    proc = run_cli("check", "--no-cache", "--output-file", "taken/out.txt", ".", cwd=root)
    err = proc.stderr.decode()
    assert (
        proc.returncode == 2
        and err.startswith("dupguard: error: --output-file: taken/out.txt")
        and len(err.splitlines()) == 1
    )


@pytest.mark.parametrize(
    "env, coloured",
    [
        ({}, False),  # a pipe
        ({"FORCE_COLOR": "1"}, True),
        ({"FORCE_COLOR": ""}, False),  # set but empty: as if unset
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    ],
)
@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_colour_follows_no_color_and_force_color(tmp_path: Path, env: dict[str, str], coloured: bool, fmt: str) -> None:
    root = _write(tmp_path, {"app.py": APP})
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.run(
        [sys.executable, "-m", "dupguard", "check", "--no-cache", "--output-format", fmt, "app.py"],
        cwd=root,
        capture_output=True,
        env={**clean, **env},
        timeout=300,
    )
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert ("\x1b[" in out) is coloured
    plain = out
    for code in ("\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[0m"):
        plain = plain.replace(code, "")
    assert "app.py:16:1: DUP101 `agent`" in plain and "Found 3 errors." in plain


def test_colour_on_a_terminal_and_never_in_machine_formats(tmp_path: Path) -> None:
    import pty

    root = _write(tmp_path, {"app.py": APP})
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}

    def on_a_terminal(*args: str, env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "dupguard", "check", "--no-cache", *args, "app.py"],
                cwd=root,
                stdout=follower,
                stderr=subprocess.PIPE,
                env={**clean, **env},
                timeout=300,
            )
            os.close(follower)
            chunks = []
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the other end is closed and drained
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(leader)
        assert proc.returncode == 1, proc.stderr.decode()
        return b"".join(chunks).decode()

    assert "\x1b[31mDUP101" in on_a_terminal(env={})
    assert "\x1b[" not in on_a_terminal(env={"NO_COLOR": "1"})
    assert "\x1b[" not in on_a_terminal("--output-format", "json", env={"FORCE_COLOR": "1"})


# ------------------------------------------------------------------------- watch


def test_watch_lints_again_after_an_edit_and_ctrl_c_exits_0(tmp_path: Path) -> None:
    root = _write(tmp_path, {"app.py": "print('nothing to see')\n", "pyproject.toml": "[tool.dupguard]\n"})
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "DUPGUARD_DEBUG")}
    # Ctrl-C as in a terminal: a test run started in the background (``pytest &``, ``nohup``) has
    # SIGINT ignored, which the watch would inherit and keep; a handler is not inherited
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dupguard", "check", "--no-cache", "--watch", "."],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert proc.stdout is not None

    def until_watching() -> list[str]:
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline().decode()
            assert line, "the watch ended early"
            if line.startswith("Watching for file changes."):
                return lines
            lines.append(line)
        raise AssertionError("no report in time")

    try:
        first = until_watching()
        assert "All checks passed!\n" in first
        time.sleep(0.1)
        (root / "app.py").write_text(APP)  # a new defect
        second = until_watching()
        assert any(line.startswith("app.py:16:1: DUP101") for line in second), second
        assert "Found 3 errors.\n" in second
        (root / "pyproject.toml").write_text('[tool.dupguard]\nselect = ["DUP101"]\n')  # config edits count too
        third = until_watching()
        assert "Found 1 error.\n" in third
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        finally:
            proc.kill()
    assert code == 0, proc.stderr.read().decode() if proc.stderr else ""


# ------------------------------------------------------------------------- the lookup's cost


def test_the_lookup_asks_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dupguard import hierarchy

    _write(tmp_path, {"p/pyproject.toml": "[tool.dupguard]\n", "p/a/b/x.py": "", "p/a/b/y.py": "", "p/a/z.py": ""})
    asked: list[Path] = []
    real = hierarchy.config_in

    def counting(directory: Path) -> Path | None:
        asked.append(directory)
        return real(directory)

    monkeypatch.setattr(hierarchy, "config_in", counting)
    resolver = hierarchy.Resolver(cwd=tmp_path / "p" / "a" / "b")
    for name in ("a/b/x.py", "a/b/y.py", "a/z.py", "a/b/x.py"):
        assert resolver.for_file(tmp_path / "p" / name) is resolver.root
    assert sorted(map(str, asked)) == sorted(map(str, [tmp_path / "p", tmp_path / "p" / "a", tmp_path / "p/a/b"]))


def test_the_pre_commit_run_in_a_repository_reads_its_ignore_files_without_pathspec(tmp_path: Path) -> None:
    """The one-file run of the pre-commit hook (``--force-exclude``) now reads git's ignore files
    above the file; typical ones (comments, ``*.pyc``, ``build/``, ``.env*``) need no pathspec and
    no libcst (bench/RESULTS.md: the one-file start-up budget)."""
    _write(
        tmp_path,
        {
            ".gitignore": "# caches\n__pycache__/\n*.py[co]\n*.pyc\n.env*\nbuild/\n\n/dist\n",
            "pkg/.gitignore": "*.log\n",
            "pkg/pyproject.toml": '[tool.dupguard]\nextend-exclude = ["generated"]\n',
            "pkg/a.py": "import os\nprint(os.getcwd())\n",
            "pkg/scratch.pyc.py": "",
        },
    )
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("*.swp\n")
    probe = (
        "import sys\n"
        "sys.argv = ['dupguard', 'check', '--force-exclude', 'a.py']\n"
        "from dupguard.cli import main\n"
        "assert main() == 0\n"
        "print(sorted(m for m in ('libcst', 'pathspec', 'dataclasses', 'inspect', 'shutil') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path / "pkg", capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines()[-1] == "[]"
