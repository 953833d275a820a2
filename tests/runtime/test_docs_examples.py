"""docs/runtime.md stays true: no block that could run (standard library and dupguard.runtime
only) escapes being marked runnable, and the worked examples report what the page claims.
The runnable blocks themselves are run by tests/test_docs_run.py, with every other block of
the docs."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def blocks():
    text = DOC.read_text(encoding="utf-8")
    for match in FENCE.finditer(text):
        info = match.group(1).strip().split()
        line = text.count("\n", 0, match.start()) + 2  # first line of the code
        yield (info[0] if info else ""), info[1:], match.group(2), line


def runnable():
    return [(code, line) for lang, flags, code, line in blocks() if lang == "python" and "runnable" in flags]


def imported_roots(code):
    roots = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            roots.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module)
    return roots


def needs_something_else(code):
    """True when the block imports a module outside the standard library and dupguard.runtime
    (a framework, the reader's application): such a block cannot run here."""
    for module in imported_roots(code):
        top = module.split(".")[0]
        if top in sys.stdlib_module_names:
            continue
        if module == "dupguard.runtime" or module.startswith("dupguard.runtime."):
            continue
        return True
    return False


def test_the_page_has_runnable_examples():
    assert len(runnable()) >= 8


def test_every_python_block_is_valid_and_runnable_ones_are_marked():
    for lang, flags, code, line in blocks():
        if lang != "python":
            continue
        ast.parse(textwrap.dedent(code), filename=f"docs/runtime.md:{line}")
        if "runnable" not in flags:
            assert needs_something_else(code), (
                f"docs/runtime.md:{line}: this block uses only the standard library and "
                "dupguard.runtime, so mark it ```python runnable"
            )


def test_rule_codes_in_the_page_are_real():
    """Every DUPnnn named in the page exists in the rule catalogue (DESIGN §4)."""
    from dupguard.rulemeta import rule_codes

    known = set(rule_codes())
    used = set(re.findall(r"DUP\d{3}", DOC.read_text(encoding="utf-8")))
    assert used and used <= known, used - known
    # the five worked examples cover the codes the brief asks for
    assert {"DUP101", "DUP502", "DUP201", "DUP203", "DUP505", "DUP504", "DUP501"} <= used


def test_every_public_name_is_documented():
    from dupguard import runtime

    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in runtime.__all__ if f"`{name}" not in text and f"{name}(" not in text]
    assert missing == []


# -- the worked examples agree with the checker -----------------------------------------------

EXAMPLE = re.compile(r"^# (\w+\.py) — (BROKEN|FIXED)")
REPORTED = re.compile(r"^(\w+\.py):(\d+):(\d+): (DUP\d{3})", re.MULTILINE)


def worked_examples():
    """{filename: {"BROKEN": code, "FIXED": code, "claims": {(row, code)}}} from the page."""
    examples = {}
    pending_claims_for = None
    for lang, _flags, code, _line in blocks():
        match = EXAMPLE.match(code) if lang == "python" else None
        if match:
            entry = examples.setdefault(match.group(1), {"claims": set()})
            entry[match.group(2)] = code
            pending_claims_for = match.group(1) if match.group(2) == "BROKEN" else None
        elif lang == "text" and pending_claims_for and "dupguard check" in code:
            for name, row, _col, rule in REPORTED.findall(code):
                assert name == pending_claims_for
                examples[name]["claims"].add((int(row), rule))
            pending_claims_for = None
    return examples


def implemented_codes():
    result = subprocess.run([sys.executable, "-m", "dupguard", "rules"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        pytest.skip(f"the dupguard CLI is not available here: {result.stderr[-300:]}")
    codes = set(re.findall(r"^(DUP\d{3})\b", result.stdout, re.MULTILINE))
    assert codes, f"could not read the rule list from `dupguard rules`:\n{result.stdout[:500]}"
    return codes


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """One ``dupguard check`` run over every BROKEN and FIXED example of the page:
    {("BROKEN" | "FIXED", filename): {(row, code)}}, plus the implemented rule codes."""
    import json

    implemented = implemented_codes()
    root = tmp_path_factory.mktemp("worked_examples")
    for name, entry in worked_examples().items():
        for kind in ("BROKEN", "FIXED"):
            (root / kind).mkdir(exist_ok=True)
            (root / kind / name).write_text(entry[kind], encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "dupguard",
            "check",
            "--isolated",
            "--no-cache",
            "--jobs",
            "1",
            "--output-format",
            "json",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    assert result.returncode in (0, 1), result.stderr
    found: dict = {}
    for d in json.loads(result.stdout or "[]"):
        path = Path(d["filename"])
        found.setdefault((path.parent.name, path.name), set()).add((d["location"]["row"], d["code"]))
    return found, implemented


def test_five_worked_examples_with_claims():
    examples = worked_examples()
    assert sorted(examples) == ["app.py", "loop.py", "service.py", "tasks.py", "worker.py"]
    for name, entry in examples.items():
        assert "BROKEN" in entry and "FIXED" in entry and entry["claims"], name


@pytest.mark.parametrize("filename", sorted(worked_examples()))
def test_checker_reports_what_the_page_claims(filename, checked):
    found, implemented = checked
    entry = worked_examples()[filename]
    claims = {(row, code) for row, code in entry["claims"] if code in implemented}
    reported = found.get(("BROKEN", filename), set())
    assert claims <= reported, (
        f"docs/runtime.md claims {sorted(claims - reported)} for the BROKEN {filename}, "
        f"dupguard reports {sorted(reported)}: update the page or the rule"
    )
    claimed_codes = {code for _row, code in entry["claims"]}
    fixed = {code for _row, code in found.get(("FIXED", filename), set())}
    assert not (fixed & claimed_codes), f"the FIXED {filename} still reports {sorted(fixed & claimed_codes)}"


def test_internal_links_point_at_headings():
    text = DOC.read_text(encoding="utf-8")
    prose = FENCE.sub("", text)  # '#' lines inside code blocks are comments, not headings

    def slug(heading):
        heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
        return heading.replace(" ", "-")

    anchors = {slug(h) for h in re.findall(r"^#{1,6} (.+)$", prose, re.MULTILINE)}
    links = re.findall(r"\]\(#([^)]+)\)", prose)
    assert links and set(links) <= anchors, set(links) - anchors
