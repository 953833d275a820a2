"""``dupguard.cstfast``: the shortcuts through libcst's internals and the switch that turns them off.

The per-shortcut equivalence tests live with their users and run in both modes
(tests/test_parsing.py, test_positions.py, test_visitor.py through ``cstmodes``). Here: the
environment switch itself, the string-value shortcut, that every shortcut is really active on
the installed libcst, that plain mode builds none of them, and that the whole linter gives the
same report in both modes (real ``dupguard`` and ``pytest`` processes with
``DUPGUARD_PLAIN_LIBCST=1``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import libcst as cst
import pytest

from cstmodes import libcst_mode  # noqa: F401
from dupguard import cstfast
from dupguard.semantic.model import string_value
from linthelpers import ROOT, run_cli


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != cstfast.ENV_VAR}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**full_env, **env}, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(("value", "fast"), [(None, True), ("", True), ("0", True), ("1", False), ("yes", False)])
def test_the_switch_is_read_from_the_environment_at_import(value: str | None, fast: bool) -> None:
    env = {} if value is None else {cstfast.ENV_VAR: value}
    proc = _python("from dupguard import cstfast; print(cstfast.enabled())", **env)
    assert proc.stdout.strip() == str(fast), proc.stderr


def test_this_process_follows_the_environment() -> None:
    """What the plain-mode run of the rule tests below checks about itself."""
    assert cstfast.enabled() == (os.environ.get(cstfast.ENV_VAR, "") in ("", "0"))


STRINGS = [
    "'plain'",
    '"double"',
    "'''triple\nline'''",
    '""""""',
    "r'raw\\n'",
    "b'bytes'",
    "'esc\\taped'",
    "'\\u00e9'",
    "f'{x}'",
    "'a' 'b'",
    "u'unicode'",
    "Rb'\\d'",
]


@pytest.mark.usefixtures("libcst_mode")
@pytest.mark.parametrize("source", STRINGS)
def test_string_value_is_evaluated_value(source: str) -> None:
    node = cst.parse_expression(source)
    expected = getattr(node, "evaluated_value", None)
    assert string_value(node) == expected and type(string_value(node)) is type(expected)


@pytest.mark.usefixtures("libcst_mode")
def test_string_value_on_every_string_of_the_examples() -> None:
    strings: list[cst.SimpleString] = []

    class Collect(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            strings.append(node)

    for path in sorted((ROOT / "rules").glob("*/*.py")):
        cst.parse_module(path.read_text(encoding="utf-8")).visit(Collect())
    assert len(strings) > 200
    assert [string_value(s) for s in strings] == [s.evaluated_value for s in strings]


def test_only_the_fast_mode_skips_the_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluated = []
    real = cst.SimpleString.evaluated_value
    monkeypatch.setattr(
        cst.SimpleString, "evaluated_value", property(lambda self: evaluated.append(self.value) or real.fget(self))
    )
    node = cst.parse_expression("'role'")
    monkeypatch.setattr(cstfast, "_enabled", True)
    assert string_value(node) == "role" and evaluated == []
    monkeypatch.setattr(cstfast, "_enabled", False)
    assert string_value(node) == "role" and evaluated == ["'role'"]


def test_every_shortcut_is_active_on_the_installed_libcst() -> None:
    """On a libcst that pyproject.toml allows, nothing is quietly left to the slow path."""
    assert sorted(cstfast.factories()) == sorted(cstfast.HOT_NODE_CLASSES)
    module = cst.parse_module("x = f(1)\n")
    found = cstfast.offsets(module)
    assert found is not None and found[1] == module.code and found[0][id(module)] == (0, len(module.code))
    assert cstfast._originals()[0] is cst.CSTNode.__dict__["__post_init__"]


def test_plain_mode_builds_no_shortcut() -> None:
    """With the switch off, a whole lint (findings, positions, fixes) never makes the factories
    or the private ``CodegenState`` subclass, and leaves every libcst class as installed."""
    code = (
        "import json, libcst as cst\n"
        "from pathlib import Path\n"
        "from dupguard import cstfast\n"
        "from dupguard.config import Settings\n"
        "from dupguard.pipeline import lint_text\n"
        "classes = {n: getattr(cst, n) for n in cstfast.HOT_NODE_CLASSES}\n"
        "settings = Settings(with_fixes=True)\n"
        "found = 0\n"
        "for path in sorted(Path('rules').glob('*/bad.py')):\n"
        "    found += len(lint_text(str(path), path.read_text(), settings, settings.enabled_codes()))\n"
        "built = [f.cache_info().currsize for f in (cstfast.factories, cstfast._offset_state_type, cstfast._originals)]\n"
        "same = classes == {n: getattr(cst, n) for n in cstfast.HOT_NODE_CLASSES}\n"
        "print(json.dumps([found, built, same]))\n"
    )
    plain = _python(code, **{cstfast.ENV_VAR: "1"})
    fast = _python(code)
    assert json.loads(plain.stdout) == [json.loads(fast.stdout)[0], [0, 0, 0], True], plain.stderr
    assert json.loads(fast.stdout)[1:] == [[1, 1, 1], True], fast.stderr
    assert json.loads(fast.stdout)[0] > 50


def test_the_report_on_the_rule_examples_is_the_same_in_both_modes() -> None:
    args = ("check", "--no-cache", "--output-format", "json", "rules/")
    fast = run_cli(*args, env={cstfast.ENV_VAR: "0"})
    plain = run_cli(*args, env={cstfast.ENV_VAR: "1"})
    assert fast.returncode == plain.returncode == 1, (fast.stderr, plain.stderr)
    report = json.loads(fast.stdout)
    assert len(report) > 100 and any(d.get("fix") for d in report)
    assert json.loads(plain.stdout) == report


def test_the_rule_tests_pass_with_plain_libcst() -> None:
    """The rule tests (every bad, good, noqa and fixed example) and the model tests, in a
    process started with ``DUPGUARD_PLAIN_LIBCST=1``."""
    env = {**os.environ, cstfast.ENV_VAR: "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_rules.py",
            "tests/test_model.py",
            "tests/test_cstfast.py::test_this_process_follows_the_environment",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
