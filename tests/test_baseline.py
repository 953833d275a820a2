"""Adopting dupguard on a codebase with findings (src/dupguard/baseline.py, addnoqa.py,
docs/adoption.md): ``check --baseline``/``--write-baseline`` and ``check --add-noqa``, end to
end in real subprocesses."""

from __future__ import annotations

import ast
import json
import os
import textwrap
from pathlib import Path

import pytest

from linthelpers import run_cli

AGENT = textwrap.dedent(
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
TOOLS = textwrap.dedent(
    """\
    from langchain.agents import AgentExecutor, create_react_agent


    def build(llm, prompt, search):
        agent = create_react_agent(llm, [search, search], prompt)
        return AgentExecutor(agent=agent, tools=[search, search])
    """
)
NEW_DEFECT = textwrap.dedent(
    """\


    second = ReActAgent.from_tools(tools=[])


    @app.post("/other")
    async def other(payload: dict):
        return await second.achat(payload["message"])
    """
)


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "app" / "chat.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "app" / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.dupguard]\n", encoding="utf-8")
    return tmp_path


def _check(repo: Path, *args: str):
    return run_cli("check", "--no-cache", *args, ".", cwd=repo)


def _json(proc) -> list[dict]:
    return json.loads(proc.stdout.decode())


def _shift_every_line(path: Path) -> None:
    """An edit elsewhere in the file: a docstring and imports on top, every line moves down."""
    path.write_text('"""Edited."""\n\nimport os\nimport sys\n\n' + path.read_text(encoding="utf-8"), encoding="utf-8")


def test_write_baseline_then_shift_every_line_reports_nothing_new(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    everything = _json(_check(repo, "--output-format", "json"))
    # the shared agent in chat.py, the tool given twice in tools.py
    assert {(Path(d["filename"]).name, d["code"][:4]) for d in everything} == {
        ("chat.py", "DUP1"),
        ("tools.py", "DUP3"),
    }
    written = _check(repo, "--write-baseline", "dupguard-baseline.json")
    assert written.returncode == 0, written.stderr.decode()
    assert f"Wrote {len(everything)} findings to the baseline dupguard-baseline.json." in written.stderr.decode()
    assert written.stdout == b""

    for name in ("chat.py", "tools.py"):
        _shift_every_line(repo / "app" / name)
    assert {d["location"]["row"] for d in _json(_check(repo, "--output-format", "json"))} != {
        d["location"]["row"] for d in everything
    }
    proc = _check(repo, "--baseline", "dupguard-baseline.json")
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    out = proc.stdout.decode()
    assert "DUP" not in out.replace("dupguard-baseline", "")
    assert "All checks passed!" in out
    assert f"Baseline dupguard-baseline.json: {len(everything)} known findings not reported." in out


def test_a_new_defect_is_reported_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _check(repo, "--write-baseline", "baseline.json")
    _shift_every_line(repo / "app" / "chat.py")
    with (repo / "app" / "chat.py").open("a", encoding="utf-8") as handle:
        handle.write(NEW_DEFECT)
    proc = _check(repo, "--baseline", "baseline.json", "--output-format", "json")
    assert proc.returncode == 1
    (new,) = _json(proc)
    assert new["code"] == "DUP101" and new["baseline"] == "new"
    assert "`second`" in new["message"]
    assert Path(new["filename"]).name == "chat.py"
    concise = _check(repo, "--baseline", "baseline.json", "--output-format", "concise")
    lines = concise.stdout.decode().splitlines()
    assert [line for line in lines if ": DUP" in line] == [lines[0]]
    assert lines[0].startswith("app/chat.py:") and "`second`" in lines[0]
    assert "Found 1 error." in lines


def test_stale_entries_are_reported(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _check(repo, "--write-baseline", "baseline.json")
    (repo / "app" / "tools.py").write_text("def build():\n    return None\n", encoding="utf-8")
    recorded = json.loads((repo / "baseline.json").read_text(encoding="utf-8"))["findings"]
    stale = [e for e in recorded if e["file"] == "app/tools.py"]
    assert stale
    proc = _check(repo, "--baseline", "baseline.json")
    assert proc.returncode == 0  # the exit code counts new findings only
    n = len(stale)
    assert f"{n} entr{'ies' if n != 1 else 'y'} no longer found (stale" in proc.stdout.decode()
    as_json = _json(_check(repo, "--baseline", "baseline.json", "--output-format", "json"))
    assert [item["baseline"] for item in as_json] == ["stale"] * n
    assert {(item["code"], item["fingerprint"]) for item in as_json} == {(e["code"], e["fingerprint"]) for e in stale}
    assert all(item["location"] is None and Path(item["filename"]).name == "tools.py" for item in as_json)
    lines = _check(repo, "--baseline", "baseline.json", "--output-format", "json-lines").stdout.decode().splitlines()
    assert len(lines) == n and all(json.loads(line)["baseline"] == "stale" for line in lines)
    # a machine format keeps its stream for the document: the summary goes to stderr
    sarif = _check(repo, "--baseline", "baseline.json", "--output-format", "sarif")
    assert json.loads(sarif.stdout)["runs"][0]["results"] == []
    assert "no longer found" in sarif.stderr.decode()
    # recording again drops them
    _check(repo, "--write-baseline", "baseline.json")
    assert not any(
        e["file"] == "app/tools.py"
        for e in json.loads((repo / "baseline.json").read_text(encoding="utf-8"))["findings"]
    )


def test_baseline_file_is_sorted_versioned_and_stable(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _check(repo, "--write-baseline", "baseline.json")
    first = (repo / "baseline.json").read_bytes()
    document = json.loads(first)
    assert document["version"] == 1
    keys = [(e["file"], e["code"], e["fingerprint"], e["occurrence"]) for e in document["findings"]]
    assert keys == sorted(keys)
    assert all(set(e) == {"file", "code", "fingerprint", "occurrence", "source"} for e in document["findings"])
    assert {e["file"] for e in document["findings"]} == {"app/chat.py", "app/tools.py"}
    assert "agent = ReActAgent.from_tools(tools=[])" in {e["source"] for e in document["findings"]}
    # a line shift changes nothing in the file: no line numbers in it, nothing to review
    for name in ("chat.py", "tools.py"):
        _shift_every_line(repo / "app" / name)
    _check(repo, "--write-baseline", "baseline.json")
    assert (repo / "baseline.json").read_bytes() == first
    # from a subdirectory, paths are still relative to the project root
    sub = run_cli("check", "--no-cache", "--write-baseline", "../b2.json", ".", cwd=repo / "app")
    assert sub.returncode == 0
    assert (repo / "b2.json").read_bytes() == first


def test_identical_findings_are_counted_by_occurrence(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    line = "    executors.append(AgentExecutor(agent=agent, tools=[search, search]))\n"
    head = TOOLS.splitlines(keepends=True)[:5] + ["    executors = []\n"]
    (repo / "app" / "tools.py").write_text("".join(head + [line, line, "    return executors\n"]), encoding="utf-8")
    _check(repo, "--write-baseline", "baseline.json")
    entries = json.loads((repo / "baseline.json").read_text(encoding="utf-8"))["findings"]
    repeated = [e for e in entries if e["source"] == line.strip()]
    assert [e["occurrence"] for e in repeated] == [0, 1]
    assert len({e["fingerprint"] for e in repeated}) == 1
    # a third identical line: one new finding, the two known ones still known
    (repo / "app" / "tools.py").write_text(
        "".join(head + [line, line, line, "    return executors\n"]), encoding="utf-8"
    )
    proc = _check(repo, "--baseline", "baseline.json", "--output-format", "json")
    found = _json(proc)
    assert proc.returncode == 1 and len(found) == 1 and Path(found[0]["filename"]).name == "tools.py"


@pytest.mark.parametrize("fmt", ["full", "concise", "grouped", "json", "json-lines", "sarif", "github"])
def test_baseline_with_the_cache_and_every_output_format(tmp_path: Path, fmt: str) -> None:
    repo = _repo(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    run_cli("check", *cache, "--write-baseline", "baseline.json", ".", cwd=repo)
    with (repo / "app" / "chat.py").open("a", encoding="utf-8") as handle:
        handle.write(NEW_DEFECT)
    outputs = []
    for _ in range(2):  # cold, then answered from the cache
        proc = run_cli("check", *cache, "--baseline", "baseline.json", "--output-format", fmt, ".", cwd=repo)
        assert proc.returncode == 1, proc.stderr.decode()
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    out = outputs[0].decode()
    if fmt == "sarif":  # the findings, not the rules' documentation the document also carries
        out = json.dumps([r["message"] for r in json.loads(out)["runs"][0]["results"]])
    assert "`second`" in out
    assert "`agent`" not in out and "search" not in out  # the known findings


def test_bad_baseline_is_a_usage_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    missing = _check(repo, "--baseline", "nope.json")
    assert missing.returncode == 2
    assert missing.stderr.decode().strip() == (
        "dupguard: error: --baseline: nope.json: no such file (record one with --write-baseline nope.json)"
    )
    (repo / "bad.json").write_text('{"version": 99, "findings": []}', encoding="utf-8")
    assert _check(repo, "--baseline", "bad.json").returncode == 2
    (repo / "bad.json").write_text("[", encoding="utf-8")
    proc = _check(repo, "--baseline", "bad.json")
    assert proc.returncode == 2 and len(proc.stderr.decode().splitlines()) == 1
    both = _check(repo, "--baseline", "bad.json", "--write-baseline", "x.json")
    assert both.returncode == 2 and b"not allowed with argument" in both.stderr
    fixing = _check(repo, "--write-baseline", "x.json", "--fix")
    assert fixing.returncode == 2 and b"cannot be combined with --fix" in fixing.stderr
    piped = run_cli("check", "--add-noqa", "-", cwd=repo, stdin=AGENT.encode())
    assert piped.returncode == 2 and b"it cannot read stdin" in piped.stderr
    assert not (repo / "x.json").exists()


def test_notebook_baseline_survives_a_new_cell_above(tmp_path: Path) -> None:
    def cell(source: str) -> dict:
        return {
            "cell_type": "code",
            "execution_count": None,
            "id": str(len(source)),
            "metadata": {},
            "outputs": [],
            "source": source.splitlines(keepends=True),
        }

    top, bottom = AGENT.split("@app.post")
    notebook = {"cells": [cell(top), cell("@app.post" + bottom)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    _check(tmp_path, "--write-baseline", "baseline.json")
    assert json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))["findings"][0]["file"] == "nb.ipynb"
    notebook["cells"].insert(0, cell("import os\nprint(os.getcwd())\n"))
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    assert "nb.ipynb:cell 2:" in _check(tmp_path).stdout.decode()
    proc = _check(tmp_path, "--baseline", "baseline.json")
    assert proc.returncode == 0 and "1 known finding not reported" in proc.stdout.decode()


# ------------------------------------------------------------------------- --add-noqa


def test_add_noqa_suppresses_every_finding_and_keeps_the_code(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    before = {p: p.read_text(encoding="utf-8") for p in (repo / "app").glob("*.py")}
    findings = _json(_check(repo, "--output-format", "json"))
    lines = {(d["filename"], d["location"]["row"]) for d in findings}
    proc = _check(repo, "--add-noqa")
    assert proc.returncode == 0, proc.stderr.decode()
    assert f"Added {len(lines)} noqa directives." in proc.stderr.decode()
    assert _check(repo).returncode == 0
    for path, text in before.items():
        after = path.read_text(encoding="utf-8")
        assert ast.dump(ast.parse(after)) == ast.dump(ast.parse(text))
    chat = (repo / "app" / "chat.py").read_text(encoding="utf-8")
    assert "agent = ReActAgent.from_tools(tools=[])  # noqa: DUP101\n" in chat
    again = _check(repo, "--add-noqa")
    assert "Added 0 noqa directives." in again.stderr.decode()


def test_add_noqa_merges_with_comments_and_respects_multiline_statements(tmp_path: Path) -> None:
    source = textwrap.dedent(
        '''\
        from fastapi import FastAPI
        from llama_index.core.agent import ReActAgent
        from strands import Agent

        app = FastAPI()
        agent = ReActAgent.from_tools(tools=[])  # noqa: E501
        bot = Agent(  # built once
            system_prompt="You are a support bot.",
        )
        helper = Agent(system_prompt="""You help.
        Briefly.""")


        @app.post("/chat")
        async def chat(payload: dict):
            helper(payload["message"])
            bot(payload["message"])
            return await agent.achat(payload["message"])
        '''
    )
    (tmp_path / "app.py").write_text(source, encoding="utf-8")
    found = _json(_check(tmp_path, "--isolated", "--output-format", "json"))
    assert {d["location"]["row"] for d in found} >= {6, 7, 10}
    proc = _check(tmp_path, "--isolated", "--add-noqa")
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    text = (tmp_path / "app.py").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[5] == "agent = ReActAgent.from_tools(tools=[])  # noqa: E501, DUP101"
    assert lines[6] == "bot = Agent(  # built once  # noqa: DUP101"
    # the line ends inside a string: no comment can go there; said, and left as it was
    assert lines[9] == 'helper = Agent(system_prompt="""You help.'
    assert "app.py:10: no noqa comment added: the line ends inside a string" in err
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(source))
    remaining = _json(_check(tmp_path, "--isolated", "--output-format", "json"))
    assert [d["location"]["row"] for d in remaining] == [10]


def test_add_noqa_uses_the_safe_write(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    chat = repo / "app" / "chat.py"
    chat.chmod(0o444)
    try:
        proc = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=repo, unprivileged=True)
    finally:
        chat.chmod(0o644)
    assert proc.returncode == 1
    assert "dupguard: error: app/chat.py: is read-only; not written" in proc.stderr.decode()
    assert chat.read_text(encoding="utf-8") == AGENT
    assert "# noqa: DUP3" in (repo / "app" / "tools.py").read_text(encoding="utf-8")
    assert not any(name.endswith(".dupguard") for name in os.listdir(repo / "app"))


def test_a_run_on_some_files_judges_and_records_only_those(tmp_path: Path) -> None:
    """pre-commit names the changed files only: the others' entries are neither stale nor
    dropped, nor are those of a file that could not be parsed."""
    repo = _repo(tmp_path)
    _check(repo, "--write-baseline", "baseline.json")
    first = (repo / "baseline.json").read_bytes()
    tools = [e for e in json.loads(first)["findings"] if e["file"] == "app/tools.py"]
    assert tools
    only_chat = run_cli("check", "--no-cache", "--baseline", "baseline.json", "app/chat.py", cwd=repo)
    assert only_chat.returncode == 0
    assert "stale" not in only_chat.stdout.decode()
    assert "1 known finding not reported." in only_chat.stdout.decode()
    run_cli("check", "--no-cache", "--write-baseline", "baseline.json", "app/chat.py", cwd=repo)
    assert (repo / "baseline.json").read_bytes() == first
    # a file that does not parse: an error, but its entries stay
    (repo / "app" / "tools.py").write_text(TOOLS + "def broken(:\n", encoding="utf-8")
    proc = _check(repo, "--baseline", "baseline.json")
    assert proc.returncode == 1 and "app/tools.py: syntax error" in proc.stderr.decode()
    assert "stale" not in proc.stdout.decode()
    _check(repo, "--write-baseline", "baseline.json")
    assert (repo / "baseline.json").read_bytes() == first
