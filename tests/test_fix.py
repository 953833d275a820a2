"""``dupguard fix``: the rule folders' examples, the CLI contract, the safety net, the writes.

The folder tests are generated from ``rules/*/``: for every rule whose ``rule.toml`` says it
has a fix, ``bad.py`` (without its ``# error:`` test markers) must fix to exactly
``fixed.py``, ``fixed.py`` must be a fixed point, and must lint clean for that rule.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from dupguard.config import Settings
from dupguard.edits import text_edits
from dupguard.fixer import MAX_PASSES, fix_bytes, fix_paths, write_atomic
from dupguard.pipeline import lint_text
from dupguard.rulemeta import all_rules
from linthelpers import ROOT, RULES_DIR, rule_folders, run_cli

MARKER = re.compile(r"[ \t]*#\s*error:\s*DUP\d{3}(?:\s*,\s*DUP\d{3})*")
FIXABLE = [f for f in rule_folders() if all_rules()[f.name[:6]].fix in ("safe", "unsafe")]
IDS = [f.name for f in FIXABLE]


def _code(folder: Path) -> str:
    return folder.name[:6]


def _unsafe(folder: Path) -> bool:
    return all_rules()[_code(folder)].fix == "unsafe"


def unmarked_bad(folder: Path) -> str:
    """bad.py without the ``# error: DUPxxx`` annotations (they are test markers, not code)."""
    return MARKER.sub("", (folder / "bad.py").read_text(encoding="utf-8"))


def fix_text(text: str, codes: frozenset[str], *, unsafe: bool = True, settings: Settings | None = None):
    outcome, data, error = fix_bytes("example.py", text.encode("utf-8"), settings or Settings(), codes, unsafe=unsafe)
    return outcome, data.decode("utf-8"), error


# ----------------------------------------------------------------------------- folders


@pytest.mark.parametrize("folder", FIXABLE, ids=IDS)
def test_bad_fixes_to_exactly_fixed(folder: Path) -> None:
    assert (folder / "fixed.py").exists(), f"{folder.name} has a fix but no fixed.py"
    code = _code(folder)
    outcome, fixed, error = fix_text(unmarked_bad(folder), frozenset({code}), unsafe=_unsafe(folder))
    assert error is None
    assert fixed == (folder / "fixed.py").read_text(encoding="utf-8")
    markers = {row for row, _ in _markers(folder, code)}
    assert len({a.row for a in outcome.applied if a.pass_number == 1}) >= 1
    assert {d.code for d in outcome.remaining} <= {code} and not [d for d in outcome.remaining if d.code == code], (
        f"left unfixed: {outcome.remaining} ({outcome.skipped}); markers at {sorted(markers)}"
    )


def _markers(folder: Path, code: str):
    from linthelpers import expected_markers

    return [(row, c) for row, c in expected_markers(folder / "bad.py") if c == code]


@pytest.mark.parametrize("folder", FIXABLE, ids=IDS)
def test_fixed_is_a_fixed_point_and_lints_clean(folder: Path) -> None:
    code = _code(folder)
    text = (folder / "fixed.py").read_text(encoding="utf-8")
    outcome, again, error = fix_text(text, frozenset({code}))
    assert error is None and again == text and outcome.applied == []
    compile(text, str(folder / "fixed.py"), "exec")
    assert lint_text("fixed.py", text, Settings(), frozenset({code})) == []


def test_cli_fixes_copies_of_every_bad_like_the_api(tmp_path: Path) -> None:
    """One CLI run over a copy of every fixable bad.py, each file limited to its own rule."""
    codes = sorted(all_rules())
    ignores = []
    for folder in FIXABLE:
        (tmp_path / f"{_code(folder)}.py").write_text(unmarked_bad(folder), encoding="utf-8")
        others = ",".join(c for c in codes if c != _code(folder))
        ignores += ["--per-file-ignores", f"{_code(folder)}.py:{others}"]
    proc = run_cli("fix", "--isolated", "--unsafe-fixes", *ignores, ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    for folder in FIXABLE:
        assert (tmp_path / f"{_code(folder)}.py").read_text(encoding="utf-8") == (folder / "fixed.py").read_text(
            encoding="utf-8"
        ), folder.name


def test_json_edits_reproduce_fixed(tmp_path: Path) -> None:
    """``check --output-format json`` edits are the fix: applying them gives fixed.py."""
    folder = RULES_DIR / "DUP301-duplicate-tool"
    target = tmp_path / "app.py"
    target.write_text(unmarked_bad(folder), encoding="utf-8")
    proc = run_cli(
        "check", "--isolated", "--no-cache", "--select", "DUP301", "--output-format", "json", str(target), cwd=tmp_path
    )
    assert proc.returncode == 1
    findings = json.loads(proc.stdout)
    assert findings and all(f["fix"]["applicability"] == "safe" for f in findings)
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    text = "".join(lines)
    edits = sorted(
        (
            (
                starts[e["location"]["row"] - 1] + e["location"]["column"] - 1,
                starts[e["end_location"]["row"] - 1] + e["end_location"]["column"] - 1,
                e["content"],
            )
            for f in findings
            for e in f["fix"]["edits"]
        ),
        reverse=True,
    )
    for start, end, content in edits:
        text = text[:start] + content + text[end:]
    assert text == (folder / "fixed.py").read_text(encoding="utf-8")


def test_json_marks_unsafe_fixes() -> None:
    bad = RULES_DIR / "DUP101-shared-agent-singleton" / "bad.py"
    proc = run_cli("check", "--isolated", "--no-cache", "--select", "DUP101", "--output-format", "json", str(bad))
    fixes = [f["fix"] for f in json.loads(proc.stdout)]
    assert fixes and all(f is not None and f["applicability"] == "unsafe" and f["edits"] for f in fixes)


# ----------------------------------------------------------------------------- CLI contract


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tools_app.py").write_text(unmarked_bad(RULES_DIR / "DUP301-duplicate-tool"), encoding="utf-8")
    (tmp_path / "agent_app.py").write_text(unmarked_bad(RULES_DIR / "DUP101-shared-agent-singleton"), encoding="utf-8")
    (tmp_path / "clean.py").write_text((RULES_DIR / "DUP301-duplicate-tool" / "good.py").read_text(), encoding="utf-8")
    return tmp_path


# the example files also hold other rules' findings (DUP302: both tools are named "search")
ONLY = ("--select", "DUP101,DUP301")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.glob("*.py"))}


def test_diff_writes_nothing_and_exits_1_when_a_fix_is_available(project: Path) -> None:
    before = _snapshot(project)
    proc = run_cli("fix", "--isolated", *ONLY, "--diff", ".", cwd=project)
    assert proc.returncode == 1, proc.stderr.decode()
    assert _snapshot(project) == before
    patch = proc.stdout.decode()
    assert "--- a/tools_app.py" in patch and "-tools = [search_tool, search_tool]" in patch
    assert "agent_app.py" not in patch  # DUP101 is unsafe: not without --unsafe-fixes
    err = proc.stderr.decode()
    assert "Would fix 4 findings, 4 findings would remain." in err
    assert "4 more fixes available with `--unsafe-fixes`" in err
    # the patch is the fix: git applies it and gives fixed.py
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "apply", "-"], cwd=project, input=proc.stdout, check=True)
    assert (project / "tools_app.py").read_text() == (RULES_DIR / "DUP301-duplicate-tool" / "fixed.py").read_text()


def test_diff_exits_0_when_nothing_would_change(project: Path) -> None:
    proc = run_cli("fix", "--isolated", *ONLY, "--diff", "clean.py", cwd=project)
    assert proc.returncode == 0 and proc.stdout == b""
    # only unsafe fixes available: nothing changes without --unsafe-fixes
    proc = run_cli("fix", "--isolated", *ONLY, "--diff", "agent_app.py", cwd=project)
    assert proc.returncode == 0 and proc.stdout == b""
    assert "4 more fixes available with `--unsafe-fixes`" in proc.stderr.decode()
    proc = run_cli("fix", "--isolated", *ONLY, "--diff", "--unsafe-fixes", "agent_app.py", cwd=project)
    assert proc.returncode == 1 and b"+def make_agent():" in proc.stdout


def test_fix_exit_codes_and_unsafe_opt_in(project: Path) -> None:
    proc = run_cli("fix", "--isolated", *ONLY, "--show-fixes", ".", cwd=project)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out  # DUP101 findings remain
    assert "Fixed 4 findings:" in out and "tools_app.py:13:23: DUP301 Remove the repeated `search_tool`" in out
    assert "agent_app.py:9:1: DUP101" in out and "4 more fixes available with `--unsafe-fixes`" in out
    assert (project / "tools_app.py").read_text() == (RULES_DIR / "DUP301-duplicate-tool" / "fixed.py").read_text()
    proc = run_cli("check", "--isolated", *ONLY, "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert "Fixed 4 findings, 0 findings remaining." in proc.stdout.decode()
    assert (project / "agent_app.py").read_text() == (
        RULES_DIR / "DUP101-shared-agent-singleton" / "fixed.py"
    ).read_text()
    proc = run_cli("fix", "--isolated", *ONLY, ".", cwd=project)
    assert proc.returncode == 0 and "All checks passed!" in proc.stdout.decode()


def test_config_unsafe_fixes_fixable_and_unfixable(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.dupguard]\nselect = ["DUP101", "DUP301"]\nunsafe-fixes = true\nunfixable = ["DUP3"]\n'
    )
    proc = run_cli("fix", ".", cwd=project)
    assert proc.returncode == 1  # the DUP301 findings stay: unfixable
    assert (project / "agent_app.py").read_text() == (
        RULES_DIR / "DUP101-shared-agent-singleton" / "fixed.py"
    ).read_text()
    assert "tools_app.py:13:23: DUP301" in proc.stdout.decode()
    proc = run_cli(
        "fix", "--no-unsafe-fixes", "--fixable", "DUP301", "--unfixable", "DUP1", "--ignore", "DUP101", ".", cwd=project
    )
    assert proc.returncode == 0, proc.stdout.decode()  # DUP301 fixed, DUP101 not selected
    (project / "pyproject.toml").write_text('[tool.dupguard]\nunsafe-fixes = "yes"\n')
    proc = run_cli("fix", ".", cwd=project)
    assert proc.returncode == 2 and b"unsafe-fixes: expected true or false" in proc.stderr


def test_stdin_prints_the_fixed_source(project: Path) -> None:
    source = (project / "tools_app.py").read_bytes()
    proc = run_cli("fix", "--isolated", *ONLY, "-", "--stdin-filename", "tools_app.py", stdin=source, cwd=project)
    assert proc.returncode == 0
    assert proc.stdout == (RULES_DIR / "DUP301-duplicate-tool" / "fixed.py").read_bytes()


def test_unparseable_input_is_reported_and_untouched(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_bytes(b"from strands import Agent\ndef f(:\n")
    proc = run_cli("fix", "--isolated", str(broken), cwd=tmp_path)
    assert proc.returncode == 1  # as `check`: a file that could not be processed
    assert b"broken.py: syntax error at line 2" in proc.stderr and b"Traceback" not in proc.stderr
    assert b"All checks passed!" not in proc.stdout and b"1 file could not be processed." in proc.stdout
    assert broken.read_bytes() == b"from strands import Agent\ndef f(:\n"


# ----------------------------------------------------------------------------- writes


def test_write_keeps_mode_symlink_and_leaves_no_temp_files(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text(unmarked_bad(RULES_DIR / "DUP503-duplicate-history-append"))
    os.chmod(real, 0o640)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    result = fix_paths([link], Settings(), unsafe=False, write=True)
    assert result.errors == [] and result.files[0].changed
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert real.read_text() == (RULES_DIR / "DUP503-duplicate-history-append" / "fixed.py").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "real.py"]


def test_a_file_edited_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    original = unmarked_bad(RULES_DIR / "DUP503-duplicate-history-append").encode()
    target.write_bytes(original)
    with pytest.raises(OSError, match="changed while it was being fixed"):
        target.write_bytes(original + b"# edited\n")
        write_atomic(target, b"x = 1\n", expected=original)
    assert target.read_bytes() == original + b"# edited\n"


def test_encoding_bom_and_crlf_survive(tmp_path: Path) -> None:
    folder = RULES_DIR / "DUP503-duplicate-history-append"
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + unmarked_bad(folder).replace("\n", "\r\n").encode())
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + unmarked_bad(folder)).encode("latin-1"))
    result = fix_paths([bom, latin], Settings(), unsafe=False, write=True)
    assert result.errors == []
    fixed = (folder / "fixed.py").read_text()
    assert bom.read_bytes() == b"\xef\xbb\xbf" + fixed.replace("\n", "\r\n").encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# café\n" + fixed).encode("latin-1")


# ----------------------------------------------------------------------------- the safety net


def _with_rule(monkeypatch: pytest.MonkeyPatch, check) -> None:
    """Swap DUP503's implementation for a deliberately broken one (no real rule is broken)."""
    from dupguard.rules import Rule, load

    monkeypatch.setitem(load(), "DUP503", Rule("DUP503", "broken", check, "duplicate_history_append", "safe"))


def test_a_fix_that_never_settles_leaves_the_file_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from dupguard.fixes import FixProposal, replace
    from dupguard.rules import Finding

    class Grow:  # always adds a statement
        def propose(self, ctx):
            more = ctx.module.with_changes(body=[*ctx.module.body, cst.parse_statement("messages.append(x)\n")])
            return FixProposal("grow", (replace(ctx.module, more),))

    def grows(model, ctx):  # always finds something
        yield Finding(ctx.positions._module.body[-1], "again", fix=Grow())

    _with_rule(monkeypatch, grows)
    text = "import openai\nmessages = []\nx = 1\nmessages.append(x)\n"
    outcome, data, error = fix_text(text, frozenset({"DUP503"}))
    assert data == text and outcome.applied == []
    assert error == f"fixes for DUP503 did not settle after {MAX_PASSES} passes; file left unchanged"


def test_a_fix_that_breaks_compilation_leaves_the_file_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from dupguard.fixes import FixProposal, replace
    from dupguard.rules import Finding

    def breaks(model, ctx):  # `yield` at module level parses but does not compile
        module = ctx.positions._module
        stmt = module.body[-1]
        if "yield" not in module.code:
            yield Finding(stmt, "bad", fix=FixProposal("break", (replace(stmt, cst.parse_statement("yield x\n")),)))

    _with_rule(monkeypatch, breaks)
    text = "import openai\nmessages = []\nx = 1\nmessages.append(x)\n"
    _, data, error = fix_text(text, frozenset({"DUP503"}))
    assert data == text and "DUP503 fix produced code that does not compile" in error


def test_a_fix_that_cannot_be_built_is_skipped_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix that raises, or names a node of another tree, is one skipped finding, not a crash."""
    from dupguard.fixes import FixProposal, remove
    from dupguard.rules import Finding

    class Raises:
        def propose(self, ctx):
            raise RuntimeError("boom")

    def check(model, ctx):
        module = ctx.positions._module
        yield Finding(module.body[-1], "raises", fix=Raises())
        elsewhere = cst.parse_module("x = 1\n").body[0]
        yield Finding(module.body[-2], "foreign", fix=FixProposal("foreign", (remove(elsewhere),)))

    _with_rule(monkeypatch, check)
    text = "import openai\nmessages = []\nx = 1\nmessages.append(x)\n"
    outcome, data, error = fix_text(text, frozenset({"DUP503"}))
    assert error is None and data == text and outcome.applied == []
    reasons = sorted(reason for _, reason in outcome.skipped)
    assert reasons[0].startswith("internal error building the fix (RuntimeError: boom)")
    assert "not in the module" in reasons[1]


def test_the_same_change_made_by_two_fixes_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two findings whose fixes insert the same import at the same place and change different
    statements: both are applied in one pass, the import once."""
    from dupguard.fixes import FixProposal, insert_after, replace
    from dupguard.rules import Finding

    def check(model, ctx):
        module = ctx.positions._module
        if "import json" in module.code:
            return
        for stmt in module.body[2:]:
            new = stmt.with_changes(body=[cst.parse_statement("print(json.dumps(1))\n").body[0]])
            imported = insert_after(module.body[0], cst.parse_statement("import json\n"))
            yield Finding(stmt, "print", fix=FixProposal("print", (imported, replace(stmt, new))))

    _with_rule(monkeypatch, check)
    text = "import openai\nmessages = []\nx = 1\ny = 2\n"
    outcome, data, error = fix_text(text, frozenset({"DUP503"}))
    assert error is None and [a.pass_number for a in outcome.applied] == [1, 1]
    assert data == "import openai\nimport json\nmessages = []\nprint(json.dumps(1))\nprint(json.dumps(1))\n"


def test_the_same_edit_from_two_nodes_is_not_made_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """One fix inserts a line after a statement, another the same line before the next one:
    the same text edit, from two nodes. The pass must not print the line twice: it applies the
    first fix alone, and the second finds nothing left to do."""
    from dupguard.fixes import FixProposal, insert_after, insert_before
    from dupguard.rules import Finding

    line = cst.parse_statement("import json\n")

    def check(model, ctx):
        module = ctx.positions._module
        if "import json" in module.code:
            return
        yield Finding(module.body[1], "after", fix=FixProposal("after", (insert_after(module.body[0], line),)))
        yield Finding(module.body[2], "before", fix=FixProposal("before", (insert_before(module.body[1], line),)))

    _with_rule(monkeypatch, check)
    text = "import openai\nmessages = []\nx = 1\n"
    outcome, data, error = fix_text(text, frozenset({"DUP503"}))
    assert error is None and data == "import openai\nimport json\nmessages = []\nx = 1\n"
    assert [(a.message, a.pass_number) for a in outcome.applied] == [("after", 1)]


def test_fixes_that_change_one_node_differently_wait_for_the_next_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix that replaces a statement and one that changes a name inside it: one per pass (the
    second is built again on the next pass, from the first one's result, and has nothing left
    to do there)."""
    from dupguard.fixes import FixProposal, replace
    from dupguard.rules import Finding

    def check(model, ctx):
        stmt = ctx.positions._module.body[-1]
        value = stmt.body[0].value
        if value.value == "1":
            yield Finding(stmt, "a: the value", fix=FixProposal("a", (replace(value, cst.Integer("2")),)))
            yield Finding(stmt, "b: the line", fix=FixProposal("b", (replace(stmt, cst.parse_statement("y = 1\n")),)))
        elif value.value == "2":
            yield Finding(stmt, "c: the line", fix=FixProposal("c", (replace(stmt, cst.parse_statement("y = 3\n")),)))

    _with_rule(monkeypatch, check)
    outcome, data, error = fix_text("import openai\nx = 1\n", frozenset({"DUP503"}))
    assert error is None and data == "import openai\ny = 3\n"
    assert [(a.message, a.pass_number) for a in outcome.applied] == [("a", 1), ("c", 2)]


def test_a_fix_is_not_applied_where_noqa_suppresses_the_finding() -> None:
    text = unmarked_bad(RULES_DIR / "DUP503-duplicate-history-append").replace(
        "    messages.append(assistant_reply)\n    return",
        "    messages.append(assistant_reply)  # noqa: DUP503\n    return",
    )
    outcome, fixed, error = fix_text(text, frozenset({"DUP503"}))
    marked = _markers(RULES_DIR / "DUP503-duplicate-history-append", "DUP503")
    assert error is None and "# noqa: DUP503" in fixed and len(outcome.applied) == len(marked) - 1


@pytest.mark.parametrize("shape", ["agents", "tools", "appends", "one"])
def test_fix_cost_per_function_does_not_grow_with_the_module(shape: str) -> None:
    """The whole fix loop on generated modules of 50 and 400 small functions (bench/fix_sizes.py):
    the CPU time per function of the larger one, the garbage collector left out, stays within
    2x the smaller one's. Building each fix from a transform, print and diff of the whole module
    made it 3x from 100 to 300 functions; one diff of a fix that rewrites every handler, 6x."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("_dupguard_bench_fix_sizes", ROOT / "bench" / "fix_sizes.py")
    assert spec is not None and spec.loader is not None
    fix_sizes = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fix_sizes
    spec.loader.exec_module(fix_sizes)

    def per_function(n: int, reps: int) -> float:
        runs = [fix_sizes.measure(fix_sizes.generate(shape, n)) for _ in range(reps)]
        assert all(error is None and fixes for _, _, _, fixes, error in runs)
        return min(seconds - in_gc for seconds, in_gc, *_ in runs) / n  # the least disturbed run

    fix_sizes.measure(fix_sizes.generate(shape, 20))  # warm up
    small, large = per_function(50, 3), per_function(400, 1)
    assert large <= 2 * small, (small, large)


def test_text_edits_are_minimal() -> None:
    old = "a = [x, y, x]\nb = 1\n"
    assert [(e.start, e.end, e.content) for e in text_edits(old, "a = [x, y]\nb = 1\n")] == [(9, 12, "")]
    assert text_edits(old, old) == ()


# ----------------------------------------------------------------------------- DUP301 / DUP503 shapes


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("[t, u, t]", "[t, u]"),
        ("[t, t, u]", "[t, u]"),
        ("[t, u, t,]", "[t, u,]"),
        ("[\n    t,\n    u,\n    t,\n]", "[\n    t,\n    u,\n]"),
        ("[\n    t,\n    u,\n    t\n]", "[\n    t,\n    u,\n]"),
        (
            "[\n    t,  # first\n    # about the repeat\n    t,  # repeat\n    u,\n]",
            "[\n    t,  # first\n    # about the repeat\n    u,\n]",
        ),
        ("[t,\n u, t]", "[t,\n u]"),
        ("[" + ", ".join(["t", "u"] * 12) + "]", "[t, u]"),
    ],
)
def test_duplicate_tool_list_shapes(before: str, after: str) -> None:
    head = "from strands import Agent, tool\n\n\n@tool\ndef t():\n    pass\n\n\nu = t\nagent = Agent(tools="
    _, fixed, error = fix_text(head + before + ")\n", frozenset({"DUP301"}))
    assert error is None and fixed == head + after + ")\n"


def test_duplicate_append_keeps_comment_lines_and_semicolon_neighbours() -> None:
    text = (
        "from strands import Agent\n\n\ndef build(t, u):\n    tools = [t, u]\n    tools.append(u)  # again\n"
        "    # the agent\n    return Agent(tools=tools)\n\n\n"
        "def record(messages, reply):\n    messages.append(reply)\n    # keep this note\n"
        "    messages.append(reply)\n    print(1); messages.append(reply)\n"
    )
    _, fixed, error = fix_text(text, frozenset({"DUP301", "DUP503"}))
    assert error is None
    assert fixed == (
        "from strands import Agent\n\n\ndef build(t, u):\n    tools = [t, u]\n"
        "    # the agent\n    return Agent(tools=tools)\n\n\n"
        "def record(messages, reply):\n    messages.append(reply)\n    # keep this note\n    print(1)\n"
    )


REGISTER_HEAD = (
    "from flask import Flask, request\nfrom llama_index.core import set_global_handler\n\n"
    "web = Flask(__name__)\n\n\n@web.post('/ask')\ndef ask():\n"
)


@pytest.mark.parametrize(
    ("body", "after"),
    [
        # the registration is all the `if` does: the check joins its condition (no nested `if`, SIM102)
        (
            "    if request.json.get('a') or request.json.get('b'):\n        set_global_handler('phoenix')\n",
            (
                "    if (request.json.get('a') or request.json.get('b')) and next(_ask_set_global_handler_once) == 0:\n"
                "        set_global_handler('phoenix')\n"
            ),
        ),
        # with an `else`, a joined condition would send the later calls there: nested
        (
            "    if request.json.get('a'):\n        set_global_handler('phoenix')\n    else:\n        print('no')\n",
            (
                "    if request.json.get('a'):\n        if next(_ask_set_global_handler_once) == 0:\n"
                "            set_global_handler('phoenix')\n    else:\n        print('no')\n"
            ),
        ),
    ],
    ids=["joined", "else-nested"],
)
def test_register_once_under_a_condition(body: str, after: str) -> None:
    _, fixed, error = fix_text(REGISTER_HEAD + body + "    return 'ok'\n", frozenset({"DUP401"}))
    assert error is None and after in fixed, fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP401"})) == []


def test_per_call_tool_list_drops_the_global_it_no_longer_needs() -> None:
    """``global TOOLS`` was there for ``TOOLS += [...]``: it goes with it (a ``global`` nothing
    assigns is flagged by ruff, PLW0602); the other names of the statement stay; another
    assignment of ``TOOLS`` in the function refuses the fix (the copy would shadow it)."""
    head = "from strands import Agent\n\nTOOLS = []\n\n\n@app.post('/r')\ndef research(topic: str, extra):\n"
    text = (
        head + "    global TOOLS, SEEN\n    SEEN = 1\n    TOOLS += [extra]\n    return str(Agent(tools=TOOLS)(topic))\n"
    )
    _, fixed, error = fix_text("from fastapi import FastAPI\napp = FastAPI()\n" + text, frozenset({"DUP303"}))
    assert error is None
    assert (
        "    global SEEN\n    SEEN = 1\n    tools = [*TOOLS, extra]\n    return str(Agent(tools=tools)(topic))\n"
        in fixed
    )
    text = (
        head
        + "    global TOOLS\n    TOOLS += [extra]\n    agent = Agent(tools=TOOLS)\n    TOOLS = TOOLS[:1]\n    return agent\n"
    )
    outcome, fixed, error = fix_text("from fastapi import FastAPI\napp = FastAPI()\n" + text, frozenset({"DUP303"}))
    assert error is None and outcome.applied == []
    assert [why for _, why in outcome.skipped] == ["`TOOLS` is also assigned at line 13 in `research()`"]


# ----------------------------------------------------------------------------- DUP101 shapes


def test_session_parameter_gives_a_session_registry() -> None:
    text = (
        "from fastapi import FastAPI\nfrom llama_index.core.agent import ReActAgent\n\napp = FastAPI()\n"
        "agent = ReActAgent.from_tools(tools=[])\n\n\n@app.post('/chat/{session_id}')\n"
        'async def chat(session_id: str, payload: dict):\n    """Answer."""\n'
        "    return await agent.achat(payload['message'])\n"
    )
    _outcome, fixed, error = fix_text(text, frozenset({"DUP101"}))
    assert error is None, error
    assert "from dupguard.runtime import SessionRegistry\n" in fixed
    assert "agent_sessions = SessionRegistry(lambda _session_id: ReActAgent.from_tools(tools=[]))\n" in fixed
    assert '    """Answer."""\n    agent = agent_sessions.get(session_id)\n    return await agent.achat(' in fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP101"})) == []
    assert not fix_text(text, frozenset({"DUP101"}), unsafe=False)[0].applied


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("print(agent)\n", "`agent` is also read at module level (line 7)"),
        ("helper = lambda: agent.chat('x')\n", "`agent` is read in a lambda (line 7)"),
        ("class Holder:\n    ref = agent\n", "`agent` is read in a class body (line 8)"),
        ("def make_agent():\n    pass\n", "the factory name `make_agent` is already used in this module"),
        ("@app.post('/q')\ndef quick(payload: dict): return agent.chat(payload)\n", "`quick()` is a one-line function"),
    ],
)
def test_unsafe_dup101_fix_is_skipped_with_the_reason(extra: str, reason: str) -> None:
    text = (
        "from fastapi import FastAPI\nfrom llama_index.core.agent import ReActAgent\n\napp = FastAPI()\n"
        "agent = ReActAgent.from_tools(tools=[])\n\n" + extra + "\n\n@app.post('/chat')\n"
        "async def chat(payload: dict):\n    return await agent.achat(payload['message'])\n"
    )
    outcome, fixed, error = fix_text(text, frozenset({"DUP101"}))
    assert error is None and fixed == text
    assert [why for _, why in outcome.skipped] == [reason]


_HISTORY_HEAD = (
    "from fastapi import FastAPI\nfrom langchain_core.chat_history import InMemoryChatMessageHistory\n"
    "from langchain_core.runnables.history import RunnableWithMessageHistory\n"
    "from langchain_openai import ChatOpenAI\n\napp = FastAPI()\nhistory = InMemoryChatMessageHistory()\n"
)


@pytest.mark.parametrize(
    ("getter", "handler_param", "reason"),
    [
        # LangChain calls a getter without parameters with no session at all: nothing to key by
        ("lambda: history", "session_id", "`history` is read in a lambda (line 8)"),
        # with two keys the history is looked up by both; the registry would key by one
        ("lambda user_id, conversation_id: history", "session_id", "`history` is read in a lambda (line 8)"),
        ("lambda *ids: history", "session_id", "`history` is read in a lambda (line 8)"),
        # a handler also reads it but has no session parameter to look it up by
        (
            "lambda session_id: history",
            "user",
            "`history` is returned by a session-history lambda; keep one per session in a store",
        ),
    ],
)
def test_history_getter_fix_refusals(getter: str, handler_param: str, reason: str) -> None:
    text = _HISTORY_HEAD + (
        f"chain = RunnableWithMessageHistory(ChatOpenAI(), {getter})\n\n\n@app.post('/ask')\n"
        f"async def ask({handler_param}: str, question: str):\n    history.add_user_message(question)\n"
        f"    return await chain.ainvoke(question, config={{'configurable': {{'session_id': {handler_param}}}}})\n"
    )
    assert [d.code for d in lint_text("x.py", text, Settings(), frozenset({"DUP102"}))] == ["DUP102"]
    outcome, fixed, error = fix_text(text, frozenset({"DUP102"}))
    assert error is None and fixed == text
    assert [why for _, why in outcome.skipped] == [reason]


def test_history_getter_and_a_handler_share_one_registry() -> None:
    text = _HISTORY_HEAD + (
        "chain = RunnableWithMessageHistory(ChatOpenAI(), lambda sid: history)\n\n\n@app.post('/ask')\n"
        "async def ask(session_id: str, question: str):\n    history.add_user_message(question)\n"
        "    return await chain.ainvoke(question, config={'configurable': {'session_id': session_id}})\n"
    )
    _outcome, fixed, error = fix_text(text, frozenset({"DUP102"}))
    assert error is None
    assert "history_sessions = SessionRegistry(lambda _session_id: InMemoryChatMessageHistory())\n" in fixed
    assert "RunnableWithMessageHistory(ChatOpenAI(), lambda sid: history_sessions.get(sid))\n" in fixed
    assert "    history = history_sessions.get(session_id)\n    history.add_user_message(question)\n" in fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP102"})) == []


def test_libcst_codemod_command_runs_the_rule_fix(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text(unmarked_bad(RULES_DIR / "DUP301-duplicate-tool"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "-x",
            "dupguard.codemods.duplicate_tool.FixDuplicateTool",
            "--no-format",
            "-j",
            "1",
            str(target),
        ],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert target.read_text() == (RULES_DIR / "DUP301-duplicate-tool" / "fixed.py").read_text()


# ----------------------------------------------------------------------------- DUP501 shapes

RETRY_SOURCE = """\
import time

from strands import Agent as StrandsAgent
from tenacity import retry, stop_after_attempt

CALLS = []


def issue_refund(order_id: str) -> str:
    CALLS.append(order_id)
    return "refunded " + order_id


def answer(prompt: str, message_id: int) -> str:
    support = StrandsAgent(system_prompt="You issue refunds.", tools=[issue_refund])
    while True:
        try:
            return str(support(prompt))
        except ConnectionError:
            time.sleep(0)


@retry(stop=stop_after_attempt(4))
def run_support(text: str, request_id: str) -> str:
    support = StrandsAgent(system_prompt="You issue refunds.", tools=[issue_refund])
    return str(support(text))
"""


def _stand_in_strands(tmp_path: Path) -> None:
    """A ``strands`` package whose ``Agent`` is a real callable that fails once, then records
    each prompt it runs in ``strands.RUNS``."""
    strands = tmp_path / "strands"
    strands.mkdir()
    (strands / "__init__.py").write_text(
        "RUNS = []\nFAIL_NEXT = [True]\n\n\nclass Agent:\n    def __init__(self, **kwargs):\n        pass\n\n"
        "    def __call__(self, prompt):\n        if FAIL_NEXT and FAIL_NEXT.pop():\n"
        "            raise ConnectionError('flaky')\n        RUNS.append(prompt)\n        return 'done: ' + prompt\n"
    )


def test_retry_fix_keys_runs_by_the_request_id_and_really_runs_once(tmp_path: Path) -> None:
    """Fix, then execute the fixed module against a stand-in Strands agent (a real callable
    object that fails once, then records each run): a retried or repeated call with the same
    id runs the agent once; a new id runs it again."""
    outcome, fixed, error = fix_text(RETRY_SOURCE, frozenset({"DUP501"}))
    assert error is None and len(outcome.applied) == 2, outcome.skipped
    assert (
        '            return _idempotency.run(f"{__name__}.answer:{message_id}", lambda: str(support(prompt)))\n'
        in fixed
    )
    assert '@idempotent(key=lambda text, request_id: request_id, on_in_progress="wait")\n@retry(' in fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP501"})) == []
    _stand_in_strands(tmp_path)
    # tenacity is not a dependency: a stand-in with its ``retry(stop=stop_after_attempt(n))`` contract
    (tmp_path / "tenacity.py").write_text(
        "import functools\n\n\ndef stop_after_attempt(n):\n    return n\n\n\n"
        "def retry(stop):\n    def wrap(fn):\n        @functools.wraps(fn)\n        def run(*a, **k):\n"
        "            for attempt in range(stop):\n                try:\n                    return fn(*a, **k)\n"
        "                except ConnectionError:\n                    if attempt == stop - 1:\n"
        "                        raise\n        return run\n    return wrap\n"
    )
    (tmp_path / "fixed_app.py").write_text(fixed)
    script = (
        "import strands, fixed_app\n"
        "assert fixed_app.answer('refund 1', 7) == 'done: refund 1'\n"
        "assert fixed_app.answer('refund 1', 7) == 'done: refund 1'\n"
        "assert strands.RUNS == ['refund 1'], strands.RUNS\n"
        "assert fixed_app.answer('refund 2', 8) == 'done: refund 2'\n"
        "strands.FAIL_NEXT.append(True)\n"
        "assert fixed_app.run_support('x', 'r-1') == fixed_app.run_support('x', 'r-1') == 'done: x'\n"
        "assert strands.RUNS == ['refund 1', 'refund 2', 'x'], strands.RUNS\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, timeout=120)
    assert proc.stdout == b"ok\n", proc.stderr.decode()


def test_retry_fix_refuses_non_json_results() -> None:
    text = RETRY_SOURCE.replace("return str(support(prompt))", "return support(prompt)").replace(
        '-> str:\n    support = StrandsAgent(system_prompt="You issue refunds.", tools=[issue_refund])\n'
        "    return str(support(text))",
        ':\n    support = StrandsAgent(system_prompt="You issue refunds.", tools=[issue_refund])\n    return support(text)',
    )
    outcome, fixed, error = fix_text(text, frozenset({"DUP501"}))
    assert error is None and fixed == text
    assert [why.split(",")[0] for _, why in outcome.skipped] == [
        "the result of `support(...)` is not known to be JSON-serialisable",
        "the result of `run_support(...)` is not known to be JSON-serialisable",
    ]


ASYNC_RETRY_SOURCE = """\
import asyncio

from strands import Agent as StrandsAgent

LEDGER = []


def issue_refund(order_id: str) -> str:
    LEDGER.append(order_id)
    return "refunded " + order_id


async def ask(support: StrandsAgent, prompt: str) -> str:
    return str(support(prompt))


async def answer(prompt: str, request_id: str) -> str:
    support = StrandsAgent(system_prompt="You issue refunds.", tools=[issue_refund])
    for attempt in range(3):
        try:
            return await ask(support, prompt)
        except ConnectionError:
            await asyncio.sleep(0)
    return "unavailable"
"""


def test_retry_fix_awaits_an_async_helper_once_per_key(tmp_path: Path) -> None:
    """An awaited ``async def`` annotated ``-> str`` goes through ``Idempotency.arun``; run
    against a stand-in agent that fails once, a repeated request runs it once."""
    outcome, fixed, error = fix_text(ASYNC_RETRY_SOURCE, frozenset({"DUP501"}))
    assert error is None and len(outcome.applied) == 1, outcome.skipped
    assert (
        '            return await _idempotency.arun(f"{__name__}.answer:{request_id}", lambda: ask(support, prompt))\n'
    ) in fixed
    # the import where isort puts it (dupguard before strands), the store after the imports
    assert "\nfrom dupguard.runtime import Idempotency\nfrom strands import Agent as StrandsAgent\n" in fixed
    assert 'StrandsAgent\n\n_idempotency = Idempotency(on_in_progress="wait")\n' in fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP501"})) == []
    _stand_in_strands(tmp_path)
    (tmp_path / "fixed_app.py").write_text(fixed)
    script = (
        "import asyncio, strands, fixed_app\n"
        "async def main():\n"
        "    assert await fixed_app.answer('refund 1', 'r-1') == 'done: refund 1'\n"
        "    assert await fixed_app.answer('refund 1', 'r-1') == 'done: refund 1'\n"
        "    assert await fixed_app.answer('refund 2', 'r-2') == 'done: refund 2'\n"
        "    assert strands.RUNS == ['refund 1', 'refund 2'], strands.RUNS\n"
        "asyncio.run(main())\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, timeout=120)
    assert proc.stdout == b"ok\n", proc.stderr.decode()
    # a later fix in the same module uses the store the first one added
    again = fixed + ASYNC_RETRY_SOURCE[ASYNC_RETRY_SOURCE.index("\n\nasync def answer(") :].replace(
        "def answer(", "def answer_again("
    )
    outcome, twice, error = fix_text(again, frozenset({"DUP501"}))
    assert error is None and len(outcome.applied) == 1, outcome.skipped
    assert twice.count("_idempotency = Idempotency(") == 1 and twice.count("import Idempotency") == 1
    assert '_idempotency.arun(f"{__name__}.answer_again:{request_id}", lambda: ask(support, prompt))' in twice


REFUSED_HEAD = (
    "from agents import Agent, Runner\nfrom fastapi import FastAPI, Header\n"
    "from llama_index.core.agent import ReActAgent\nfrom tenacity import retry, stop_after_attempt\n\n"
    "app = FastAPI()\nbilling = Agent(name='Billing', instructions='Send invoices.', tools=[send_invoice])\n\n\n"
)
# seed 000's own shape, as it was written
SEED_000 = (
    "@app.post('/chat')\nasync def chat(payload: dict{param}):\n    agent = ReActAgent.from_tools(tools=[refund_tool])\n"
    "    message = payload['message']\n    for _ in range(3):\n        result = await {run}\n"
    "    return {{'answer': str(result)}}\n"
)
ASK = "async def ask(agent: ReActAgent, message: str) -> str:\n    return str(await agent.achat(message))\n\n\n"


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            SEED_000.format(param="", run="agent.achat(message)"),
            "no request id in scope: `chat()` gets no id of the user action (a `request_id` or `idempotency_key`",
        ),
        (
            SEED_000.format(param=", request_id: str = Header(...)", run="agent.achat(message)"),
            (
                "the result of `agent.achat(...)` is not known to be JSON-serialisable, which `Idempotency` needs to "
                "replay it; move the run into an `async def` annotated `-> str`"
            ),
        ),
        (
            ASK + SEED_000.format(param=", request_id: str | None = Header(None)", run="ask(agent, message)"),
            "`request_id` may be None: requests without an id would share one key",
        ),
        (
            "_idempotency = object()\n\n\n"
            + ASK
            + SEED_000.format(param=", request_id: str", run="ask(agent, message)"),
            "the names `Idempotency` / `_idempotency` are already used in this module",
        ),
        (
            (
                "@retry(stop=stop_after_attempt(4))\nasync def run_billing(text: str, request_id: str):\n"
                "    return await Runner.run(billing, text)\n"
            ),
            "the result of `run_billing(...)` is not known to be JSON-serialisable",
        ),
        (
            (
                "@retry(stop=stop_after_attempt(4))\nasync def run_billing(text: str, request_id: str, *more: str) -> str:\n"
                "    return (await Runner.run(billing, text)).final_output\n"
            ),
            "`run_billing()` takes *args/**kwargs; write the key function by hand",
        ),
        (
            (
                "@retry(stop=stop_after_attempt(4))\ndef execute_tool_call(tool_call_id: str, arguments: str) -> dict:\n"
                "    return billing_api.post('/refunds', json=arguments)\n"
            ),
            "`tool_call_id` is minted per model response: a retried or re-planned turn comes back under a new one",
        ),
        (
            ASK + SEED_000.format(param=", call_id: str", run="ask(agent, message)"),
            "`call_id` is minted per model response",
        ),
        (
            # the adapter keys the agent's tools: an agent built elsewhere has its tools built there
            (
                "@app.post('/desk')\nasync def desk(text: str, agent: Agent, request_id: str = Header(...)):\n"
                "    for _ in range(3):\n        result = await Runner.run(agent, text)\n"
                "    return result.final_output\n"
            ),
            "`agent` is not built in this module, so its tools cannot be wrapped here",
        ),
        (
            (
                "_guard = object()\n_openai_agents_guard = object()\nfrom .payments import refund_order\nclerk = Agent(name='Clerk', tools=[refund_order])\n\n\n"
                "@app.post('/desk')\nasync def desk(text: str, request_id: str = Header(...)):\n"
                "    for _ in range(3):\n        result = await Runner.run(clerk, text)\n"
                "    return result.final_output\n"
            ),
            "the names `_guard` and `_openai_agents_guard` are already used in this module",
        ),
        (
            # wrapped tools run outside the adapter's turns would share one turn across requests
            (
                "from .payments import refund_order\nclerk = Agent(name='Clerk', tools=[refund_order])\n\n\n"
                "@app.post('/desk')\nasync def desk(text: str, request_id: str = Header(...)):\n"
                "    for _ in range(3):\n        result = await Runner.run(clerk, text)\n"
                "    return result.final_output\n\n\n"
                "@app.post('/stream')\nasync def stream(text: str):\n"
                "    return Runner.run_streamed(clerk, text)\n"
            ),
            "`clerk` is also run at line 23 in a way the adapter cannot take",
        ),
    ],
    ids=[
        "seed-000-no-request-id",
        "seed-000-result-not-json",
        "optional-id",
        "name-taken",
        "decorator-not-json",
        "star-args",
        "tool-call-id-is-no-key",
        "call-id-is-no-key",
        "adapter-agent-built-elsewhere",
        "adapter-guard-names-taken",
        "adapter-agent-also-streamed",
    ],
)
def test_retry_fix_refusals_leave_the_code_and_say_why(source: str, reason: str) -> None:
    """The shapes the DUP501 fix will not touch (rules/DUP501-*/bad.py has only fixable ones):
    the finding stays, with the reason."""
    text = REFUSED_HEAD + source
    outcome, fixed, error = fix_text(text, frozenset({"DUP501"}))
    assert error is None and fixed == text and outcome.applied == []
    assert [d.code for d in outcome.remaining] == ["DUP501"]
    assert [why[: len(reason)] for _, why in outcome.skipped] == [reason]


def test_retry_fix_key_function_takes_the_same_arguments() -> None:
    """``@idempotent(key=...)`` is called with the call's arguments: parameters with defaults
    may be left out, positional-only and keyword-only ones keep their kind."""
    text = (
        REFUSED_HEAD + "@retry(stop=stop_after_attempt(4))\n"
        "async def run_billing(text: str, /, request_id: str = '', retries: int = 2, *, model: str = 'x') -> str:\n"
        "    return (await Runner.run(billing, text)).final_output\n"
    )
    outcome, fixed, error = fix_text(text, frozenset({"DUP501"}))
    assert error is None and len(outcome.applied) == 1
    assert (
        "@idempotent(key=lambda text, /, request_id='', retries=None, *, model=None: request_id, "
        'on_in_progress="wait")\n@retry('
    ) in fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP501"})) == []


def test_every_fixable_rule_has_its_codemod_command() -> None:
    """``dupguard.codemods.COMMANDS`` names one libcst command per fixable rule, and each is a
    ``VisitorBasedCodemodCommand`` for that rule's code."""
    import importlib

    from libcst.codemod import VisitorBasedCodemodCommand

    from dupguard.codemods import COMMANDS

    fixable = {code for code, meta in all_rules().items() if meta.fix != "none"}
    assert set(COMMANDS) == fixable
    for code, spec in COMMANDS.items():
        module, _, name = spec.rpartition(".")
        command = getattr(importlib.import_module(f"dupguard.codemods.{module}"), name)
        assert issubclass(command, VisitorBasedCodemodCommand) and command.CODE == code


def test_uncached_factories_drop_only_imports_nothing_else_uses() -> None:
    text = (
        "from functools import lru_cache, partial\nimport functools as ft\n\nfrom fastapi import FastAPI\n"
        "from strands import Agent\n\napp = FastAPI()\nhelper = partial(print)\n\n\n@lru_cache(maxsize=1)\n"
        "def get_agent():\n    return Agent(system_prompt='x')\n\n\n# cached\n@ft.cache\ndef get_other():\n"
        "    return Agent(system_prompt='y')\n\n\n@app.post('/a')\ndef route(payload: dict):\n"
        "    return str(get_agent()(payload['m'])) + str(get_other()(payload['m']))\n"
    )
    outcome, fixed, error = fix_text(text, frozenset({"DUP101"}))
    assert error is None and outcome.passes == 1 and len(outcome.applied) == 2
    assert fixed.startswith("from functools import partial\n\nfrom fastapi import FastAPI\n")
    assert "\n\n\ndef get_agent():\n" in fixed and "\n\n\n# cached\ndef get_other():\n" in fixed
    assert lint_text("x.py", fixed, Settings(), frozenset({"DUP101"})) == []
