"""One file pipeline for ``check`` and ``fix`` (src/dupguard/pipeline.py).

The two commands read, decode, gate and parse files through the same code, so a file they
cannot process gets the same words and the same exit code from both; the package has no
import cycle; the pieces the pipeline is made of behave as their docstrings say.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from dupguard.config import Settings
from dupguard.diagnostics import FileError
from dupguard.pipeline import SourceError, decode, lint_paths, read
from linthelpers import ROOT, RULES_DIR, run_cli

PACKAGE = ROOT / "src" / "dupguard"

SHARED_AGENT = (
    "from fastapi import FastAPI\nfrom llama_index.core.agent import ReActAgent\n\napp = FastAPI()\n"
    "agent = ReActAgent.from_tools(tools=[])\n\n\n@app.post('/chat')\nasync def chat(payload: dict):\n"
    "    return await agent.achat(payload['message'])\n"
)


# ----------------------------------------------------------------------------- no import cycle

# Cycles that belong to other parts of the tree, as (importer, imported-module prefix): a
# package whose ``__init__`` loads its own submodules, which import the package back.
# Remove an entry once its cycle is gone (none is left).
KNOWN_CYCLE_EDGES: tuple[tuple[str, str], ...] = ()


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name → (file, is a package ``__init__``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _under_type_checking(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (never executed: not an import)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def import_graph() -> dict[str, set[str]]:
    """module → the package's modules it imports, at module level or inside a function (a
    lazy import is an import all the same). An edge goes to the module an import names, and
    to a submodule named in ``from package import name``."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _under_type_checking(tree)
        edges: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                named = [target] + [f"{target}.{alias.name}" for alias in node.names]
            else:
                continue
            edges.update(m for m in named if m in modules and m != name)
        graph[name] = edges
    # ``dupguard.rules.load()`` imports every module of its package by walking it (each rule
    # module registers itself): edges no import statement shows
    graph["dupguard.rules"] |= {m for m in modules if m.startswith("dupguard.rules.")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle (its modules in import order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_lazy_imports() -> None:
    graph = import_graph()
    # cli imports the pipeline and the fixer inside its command functions only
    assert {"dupguard.pipeline", "dupguard.fixer"} <= graph["dupguard.cli"]
    assert "dupguard.pipeline" in graph["dupguard.fixer"]


def test_no_import_cycle_in_the_package() -> None:
    graph = import_graph()
    for importer, prefix in KNOWN_CYCLE_EDGES:
        if importer in graph:
            graph[importer] = {m for m in graph[importer] if not m.startswith(prefix)}
    assert find_cycle(graph) is None


def test_check_and_fix_share_the_pipeline() -> None:
    """One reader, one decoder, one parser, one pool: neither the fixer nor the CLI reads,
    decodes, parses or starts processes on its own."""
    graph = import_graph()
    assert "dupguard.pipeline" in graph["dupguard.fixer"] and "dupguard.fixer" not in graph["dupguard.pipeline"]
    for name in ("fixer.py", "cli.py", "edits.py"):
        source = (PACKAGE / name).read_text(encoding="utf-8")
        for needle in ("read_bytes(", "ProcessPoolExecutor", "multiprocessing", "detect_encoding", "ParserSyntaxError"):
            if name == "fixer.py" and needle == "read_bytes(":
                continue  # write_atomic re-reads the target to see that nobody changed it meanwhile
            assert needle not in source, f"{name} has its own {needle}"


# ----------------------------------------------------------------------------- bad input, both commands

COMMANDS = {"check": ("check", "--no-cache"), "fix": ("fix",), "fix --diff": ("fix", "--diff")}


def _errors(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if line.startswith("dupguard: error: ")]


def _summary(proc, command: str) -> str:
    stream = proc.stderr if command == "fix --diff" else proc.stdout
    lines = [line for line in stream.decode().splitlines() if line and not line.startswith("dupguard: error: ")]
    return lines[-1] if lines else ""


def _bad_input(tmp_path: Path, kind: str) -> tuple[list[str], str]:
    """Make one kind of bad input in ``tmp_path``; (the command-line paths, the expected error)."""
    if kind == "syntax error":
        (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:\n")
        return ["app.py"], r"app\.py: syntax error at line 2, column \d+: "
    if kind == "too deeply nested":
        (tmp_path / "app.py").write_text("from strands import Agent\nx = " + "(" * 5000 + ")" * 5000 + "\n")
        return ["app.py"], r"app\.py: too deeply nested to parse$"
    if kind == "undecodable":
        (tmp_path / "app.py").write_bytes(b"from strands import Agent\nname = '\xe9t\xe9'\n")
        return ["app.py"], r"app\.py: cannot decode as utf-8: invalid continuation byte$"
    if kind == "unknown encoding":
        (tmp_path / "app.py").write_bytes(b"# -*- coding: klingon -*-\nfrom strands import Agent\n")
        return ["app.py"], r"app\.py: cannot detect the source encoding: unknown encoding: klingon$"
    if kind == "missing":
        return ["missing.py"], r"missing\.py: no such file or directory$"
    if kind == "permission denied":
        (tmp_path / "app.py").write_text(SHARED_AGENT)
        (tmp_path / "app.py").chmod(0)
        return ["app.py"], r"app\.py: permission denied$"
    if kind == "unreadable directory":
        (tmp_path / "pkg").mkdir()
        (tmp_path / "pkg" / "app.py").write_text(SHARED_AGENT)
        (tmp_path / "pkg").chmod(0)
        return ["."], r"pkg: permission denied$"
    if kind == "broken symlink":
        os.symlink(tmp_path / "gone.py", tmp_path / "app.py")
        return ["."], r"app\.py: broken symbolic link$"
    if kind == "symlink loop":
        os.symlink(tmp_path / "loop", tmp_path / "loop")
        return ["."], r"loop: symbolic link loop, skipped$"
    raise AssertionError(kind)


KINDS = [
    "syntax error",
    "too deeply nested",
    "undecodable",
    "unknown encoding",
    "missing",
    "permission denied",
    "unreadable directory",
    "broken symlink",
    "symlink loop",
]


@pytest.mark.parametrize("kind", KINDS)
def test_check_and_fix_say_the_same_about_bad_input(tmp_path: Path, kind: str) -> None:
    """Same exit code (1: a file could not be processed), same error line, same summary, from
    ``check``, ``fix`` and ``fix --diff``; nothing is written, nothing crashes. Runs without
    the capabilities that bypass file permissions, so that chmod 000 means unreadable."""
    paths, expected = _bad_input(tmp_path, kind)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and os.access(p, os.R_OK)}
    results = {}
    try:
        for command, args in COMMANDS.items():
            results[command] = run_cli(*args, "--isolated", *paths, cwd=tmp_path, unprivileged=True)
    finally:
        for p in tmp_path.iterdir():
            if not p.is_symlink():
                p.chmod(0o755)
    for command, proc in results.items():
        assert b"Traceback" not in proc.stderr, (command, proc.stderr.decode())
        errors = _errors(proc.stderr)
        assert len(errors) == 1 and re.search(expected, errors[0]), (command, errors)
        assert proc.returncode == 1, (command, proc.returncode, proc.stderr.decode())
        assert _summary(proc, command) == "1 file could not be processed.", (command, proc.stdout, proc.stderr)
    assert _errors(results["check"].stderr) == _errors(results["fix"].stderr) == _errors(results["fix --diff"].stderr)
    assert results["fix --diff"].stdout == b""
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name in before} == before


@pytest.mark.parametrize("kind", ["directory", "missing"])
def test_a_file_that_cannot_be_read_gets_one_reason_in_both_commands(tmp_path: Path, kind: str) -> None:
    """Reading happens after discovery: a file can become a directory or vanish in between.
    Both commands' pipelines name it the same way (and a missing file the way discovery
    names a path on the command line). Permissions: the unprivileged CLI test above."""
    from dupguard.fixer import fix_paths

    target = tmp_path / "app.py"
    if kind == "directory":
        target.mkdir()
        reason = "is a directory"
    else:
        reason = "no such file or directory"
    with pytest.raises(SourceError, match=f"^{reason}$"):
        read(target)
    checked = lint_paths([target], Settings(), use_cache=False)
    fixed = fix_paths([target], Settings(), unsafe=False, write=True)
    assert checked.errors == fixed.errors == [FileError(str(target), reason)]
    assert checked.diagnostics == [] and fixed.files == []


# ----------------------------------------------------------------------------- the drift, fixed


def test_fix_on_a_syntax_error_is_an_error_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from strands import Agent\ndef broken(:\n")
    for args in (("check", "--no-cache"), ("fix",)):
        proc = run_cli(*args, "--isolated", "app.py", cwd=tmp_path)
        assert proc.returncode == 1, args
        assert "All checks passed!" not in proc.stdout.decode()


REFUSED = SHARED_AGENT.replace("\n\n\n@app.post", "\nprint(agent)\n\n\n@app.post")
REASON = "note: no automatic fix: `agent` is also read at module level (line 6)"


def test_fix_and_fix_diff_both_say_why_a_finding_has_no_fix(tmp_path: Path) -> None:
    """Apply mode and ``--diff`` list the finding that stays, with the reason its fix was
    refused. Exit codes: apply 1 (a finding remains), ``--diff`` 0 (like ruff: nothing would
    change), ``check`` 1."""
    (tmp_path / "app.py").write_text(REFUSED)
    args = ("--isolated", "--unsafe-fixes", "--select", "DUP101", "app.py")
    applied = run_cli("fix", *args, cwd=tmp_path)
    diff = run_cli("fix", "--diff", *args, cwd=tmp_path)
    assert applied.returncode == 1 and diff.returncode == 0 and diff.stdout == b""
    finding = "app.py:5:1: DUP101 `agent` is a stateful"
    assert finding in applied.stdout.decode() and REASON in applied.stdout.decode()
    assert finding in diff.stderr.decode() and REASON in diff.stderr.decode()
    assert "Fixed 0 findings, 1 finding remaining." in applied.stdout.decode()
    assert "Would fix 0 findings, 1 finding would remain." in diff.stderr.decode()
    assert (tmp_path / "app.py").read_text() == REFUSED
    assert run_cli("check", "--no-cache", *args[:1], "--select", "DUP101", "app.py", cwd=tmp_path).returncode == 1


def test_exit_zero_means_zero_for_both_commands(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(REFUSED)
    (tmp_path / "broken.py").write_text("from strands import Agent\ndef broken(:\n")
    for args in (("check", "--no-cache"), ("fix",), ("fix", "--diff")):
        proc = run_cli(*args, "--isolated", "--exit-zero", ".", cwd=tmp_path)
        assert proc.returncode == 0, (args, proc.stderr.decode())
        assert "broken.py: syntax error" in proc.stderr.decode()


def test_fix_from_stdin_gives_the_source_back_when_it_cannot_fix_it(tmp_path: Path) -> None:
    """An editor replaces its buffer with what ``fix -`` prints: a file that cannot be parsed
    comes back as it went in (and the error is on stderr)."""
    source = b"from strands import Agent\ndef broken(:\n"
    proc = run_cli("fix", "--isolated", "-", "--stdin-filename", "app.py", stdin=source, cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == source
    errors = _errors(proc.stderr)
    assert len(errors) == 1 and errors[0].startswith("dupguard: error: app.py: syntax error at line 2, column ")


def test_fix_in_a_pool_gives_what_fix_in_one_process_gives(tmp_path: Path) -> None:
    """Past PARALLEL_THRESHOLD relevant files ``fix`` runs in the same worker pool as ``check``."""
    from dupguard.pipeline import PARALLEL_THRESHOLD

    bad = (RULES_DIR / "DUP301-duplicate-tool" / "bad.py").read_text()
    expected = (RULES_DIR / "DUP301-duplicate-tool" / "fixed.py").read_text()
    count = 3 * PARALLEL_THRESHOLD
    outputs = {}
    for jobs in ("1", "2"):
        root = tmp_path / jobs
        for i in range(count):
            path = root / "pkg" / f"m{i:02}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(re.sub(r"[ \t]*#\s*error:.*", "", bad))
        (root / "pkg" / "broken.py").write_text("from strands import Agent\ndef broken(:\n")
        proc = run_cli("fix", "--isolated", "--select", "DUP301", "--show-fixes", "--jobs", jobs, ".", cwd=root)
        assert proc.returncode == 1, proc.stderr.decode()
        assert all((root / "pkg" / f"m{i:02}.py").read_text() == expected for i in range(count))
        outputs[jobs] = (proc.stdout, proc.stderr)
    assert outputs["1"] == outputs["2"]
    assert (
        f"Fixed {4 * count} findings, 0 findings remaining. 1 file could not be processed." in outputs["1"][0].decode()
    )


# ----------------------------------------------------------------------------- the steps


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (b"x = 1\r\n", "utf-8"),
        (b"\xef\xbb\xbfx = '\xc3\xa9'\n", "utf-8-sig"),
        ("# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1"), "iso-8859-1"),
        (b"\xef\xbb\xbf# coding: utf-8\nx = 1\n", "utf-8-sig"),
        (b"", "utf-8"),
    ],
)
def test_decode_gives_the_encoding_that_writes_the_same_bytes(data: bytes, encoding: str) -> None:
    text, found = decode(data)
    assert found == encoding and not text.startswith("\ufeff")
    assert text.encode(found) == data


def _duplicate_finding(module):
    """A DUP301-shaped finding: drop the last element of the first statement's list."""
    import libcst as cst

    from dupguard.fixes import FixProposal, replace
    from dupguard.rules import Finding

    assign = module.body[0].body[0]
    elements = assign.value.elements
    kept = [*elements[:-2], elements[-2].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    drop = replace(assign.value, assign.value.with_changes(elements=kept))
    return Finding(assign, "dup", fix=FixProposal("Drop", (drop,)))


def _fix_context(module):
    from dupguard.fixes import FixContext
    from dupguard.semantic.positions import Positions

    return FixContext(module, None, Positions(module))  # these fixes read no model


def test_report_fixes_are_built_per_module() -> None:
    import libcst as cst

    from dupguard.edits import ReportFixes
    from dupguard.rulemeta import all_rules

    first = cst.parse_module("a = [x, y, x]\n")
    second = cst.parse_module("\n\nb = [x, x]\n")
    one, two = ReportFixes(_fix_context(first)), ReportFixes(_fix_context(second))
    fix_two = two.fix("DUP301", _duplicate_finding(second))
    fix_one = one.fix("DUP301", _duplicate_finding(first))
    assert fix_one is not None and fix_two is not None
    assert [(e.row, e.column, e.end_row, e.end_column, e.content) for e in fix_one.edits] == [(1, 9, 1, 12, "")]
    assert [(e.row, e.column, e.end_row, e.end_column, e.content) for e in fix_two.edits] == [(3, 6, 3, 9, "")]
    assert fix_one.applicability == "safe" and fix_one.message == "Drop"
    without_fix = next(code for code, meta in all_rules().items() if meta.fix == "none")
    assert one.fix(without_fix, _duplicate_finding(first)) is None


def test_a_fix_decides_its_own_applicability() -> None:
    """The rule's declared safety is the default; a proposal that says otherwise is taken at
    its word (DUP301 is declared safe)."""
    import dataclasses

    import libcst as cst

    from dupguard.edits import ReportFixes

    module = cst.parse_module("a = [x, y, x]\n")
    finding = _duplicate_finding(module)
    unsafe = dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, applicability="unsafe"))
    fix = ReportFixes(_fix_context(module)).fix("DUP301", unsafe)
    assert fix is not None and fix.applicability == "unsafe"


def test_no_module_outlives_its_lint() -> None:
    """Per-module state is passed along, not kept in module globals: once ``lint_text`` (with
    the report's fixes) returns, no dupguard module holds a parsed tree."""
    import gc
    import sys

    import libcst as cst

    from dupguard.pipeline import lint_text

    path = RULES_DIR / "DUP301-duplicate-tool" / "bad.py"
    found = lint_text(str(path), path.read_text(), Settings(with_fixes=True), frozenset({"DUP301"}))
    assert found and all(d.fix is not None for d in found)
    gc.collect()

    def trees(value: object, depth: int = 0) -> bool:
        if isinstance(value, cst.CSTNode):
            return True
        if depth < 2 and isinstance(value, (list, tuple, set, frozenset)):
            return any(trees(item, depth + 1) for item in value)
        if depth < 2 and isinstance(value, dict):
            return any(trees(item, depth + 1) for item in value.values())
        return False

    held = [
        f"{name}.{attr}"
        for name, module in list(sys.modules.items())
        if name.startswith("dupguard")
        for attr, value in list(vars(module).items())
        if trees(value)
    ]
    assert held == []


def test_one_summary_for_both_commands() -> None:
    from dupguard.report.text import summary

    assert summary(0, 0) == summary(0, 0, fixed=0) == "All checks passed!"
    assert summary(0, 2) == summary(0, 2, fixed=0) == summary(0, 2, fixed=0, diff=True)
    assert summary(0, 2) == "2 files could not be processed."
    assert summary(3, 0) == "Found 3 errors."
    assert summary(1, 1, fixed=2) == "Fixed 2 findings, 1 finding remaining. 1 file could not be processed."
    assert summary(0, 0, fixed=1, diff=True, unsafe_hidden=2) == (
        "Would fix 1 finding, 0 findings would remain. 2 more fixes available with `--unsafe-fixes`"
        " (they may change behaviour; review the diff)."
    )


def test_the_collector_is_paused_while_a_large_file_is_checked_or_fixed() -> None:
    """On a file larger than PAUSE_COLLECTOR_ABOVE, ``check``'s and ``fix``'s work on it runs
    with no automatic garbage collection (on a 100,000-line module the collector walked the
    whole tree again and again: bench/sizes.py), and the collector is on again afterwards; a
    small file is analysed with it on."""
    import gc

    from dupguard.fixer import fix_source
    from dupguard.pipeline import PAUSE_COLLECTOR_ABOVE, lint_job

    block = SHARED_AGENT.split("\n\n\n")[1].replace("chat", "chat_{i}").replace("/chat_{i}", "/chat/{i}")
    large = SHARED_AGENT + "".join("\n\n" + block.format(i=i) for i in range(PAUSE_COLLECTOR_ABOVE // len(block) + 1))
    assert len(large) > PAUSE_COLLECTOR_ABOVE and "chat_7" in large
    settings = Settings()
    codes = settings.enabled_codes()
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    def collections_during(work) -> int:  # type: ignore[no-untyped-def]
        gc.collect()
        collections.clear()
        gc.callbacks.append(count)
        try:
            work()
        finally:
            gc.callbacks.remove(count)
        return len(collections)

    assert gc.isenabled()
    assert collections_during(lambda: lint_job(("app.py", large, "utf-8", codes, None), settings)) == 0
    assert gc.isenabled()
    fixed = []
    assert (
        collections_during(lambda: fixed.append(fix_source("app.py", large, "utf-8", settings, codes, unsafe=True)))
        == 0
    )
    assert gc.isenabled() and fixed[0][0].applied
    small = [SHARED_AGENT * 40]
    assert collections_during(lambda: lint_job(("app.py", small[0], "utf-8", codes, None), settings)) > 0
