"""Properties of ``dupguard fix --unsafe-fixes`` on many programs.

1. It never produces a file that fails to parse (or to compile, when the input compiled),
   and never changes a file that has no finding: on hypothesmith-generated programs, on
   those programs with a rule's ``bad.py`` appended, on every ``bad.py`` and on every file
   of the labelled corpus.
2. Outside the fixed nodes it is byte-exact: variants of each ``bad.py`` with extra comments,
   extra blank lines, CRLF newlines, a BOM or tab indentation come out with every line that
   the plain fix does not touch unchanged, and with all the added comments still there.
"""

from __future__ import annotations

import ast
import difflib
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dupguard.config import Settings
from dupguard.fixer import fix_bytes
from dupguard.pipeline import lint_text
from dupguard.rulemeta import all_rules
from linthelpers import ROOT, rule_folders

MARKER = re.compile(r"[ \t]*#\s*error:\s*DUP\d{3}(?:\s*,\s*DUP\d{3})*")
SETTINGS = Settings()
CODES = SETTINGS.enabled_codes()
BAD_FILES = sorted(f / "bad.py" for f in rule_folders())
FIXABLE = [f for f in rule_folders() if all_rules()[f.name[:6]].fix != "none" and (f / "fixed.py").exists()]
CORPUS = sorted((ROOT / "tests" / "corpus").rglob("*.py"))


def _compiles(data: bytes) -> bool:
    try:
        compile(data, "<fix>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def check_fix_is_safe(name: str, data: bytes) -> tuple[str, bool]:
    """Fix ``data`` with every rule and unsafe fixes; assert the two safety properties.
    Returns (name, changed). Runs in worker processes too, so it asserts with messages."""
    outcome, fixed, error = fix_bytes(name, data, SETTINGS, CODES, unsafe=True)
    if outcome is None:  # the input itself does not parse: nothing may be written
        assert fixed == data, name
        return name, False
    assert error is None, f"{name}: {error}"
    if fixed != data:
        cst.parse_module(fixed)  # raises if the result does not parse
        assert not _compiles(data) or _compiles(fixed), f"{name}: the fixed file no longer compiles"
        assert outcome.applied, f"{name}: changed without a fix"
        # a changed file had findings (contrapositive: a file without any is never changed)
        assert lint_text(name, cst.parse_module(data).code, SETTINGS, CODES), f"{name}: changed with no finding"
    else:
        assert not outcome.applied
    return name, fixed != data


# ----------------------------------------------------------------------------- generated programs

SLOW = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


@SLOW
@given(source=hypothesmith.from_node())
def test_generated_programs_from_libcst_nodes(source: str) -> None:
    check_fix_is_safe("generated.py", source.encode("utf-8"))


@SLOW
@given(source=hypothesmith.from_grammar(auto_target=False))
def test_generated_programs_from_the_grammar(source: str) -> None:
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: not a file anyone can save
        assume(False)
    check_fix_is_safe("generated.py", data)


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
@given(prefix=hypothesmith.from_node(), bad=st.sampled_from(BAD_FILES))
def test_generated_code_around_a_bad_file(prefix: str, bad: Path) -> None:
    """Odd surrounding code (from hypothesmith) must not make any fix produce broken code."""
    source = prefix.rstrip("\\ \t\n") + "\n\n" + bad.read_text(encoding="utf-8")
    assume(_compiles(source.encode("utf-8")))
    check_fix_is_safe(f"{bad.parent.name}.py", source.encode("utf-8"))


# ----------------------------------------------------------------------------- real files


def test_every_bad_file_and_every_corpus_file() -> None:
    files = BAD_FILES + CORPUS
    assert len(CORPUS) > 50
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = dict(pool.map(check_fix_is_safe, [str(p) for p in files], [p.read_bytes() for p in files]))
    fixed_bad = [p for p in BAD_FILES if results[str(p)]]
    # every rule with a fix example changes its own bad.py (the others may too: bad files mix rules)
    assert {p.parent for p in fixed_bad} >= set(FIXABLE)


# ----------------------------------------------------------------------------- formatting variants


def _statements(source: str) -> list[ast.stmt]:
    return [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.stmt)]


def _with_comments(lines: list[str], source: str) -> tuple[list[str], list[int | None]]:
    """An own-line comment before every statement; a trailing one on single-line simple ones."""
    starts = {s.lineno for s in _statements(source)}
    tails = {
        s.lineno
        for s in _statements(source)
        if s.lineno == s.end_lineno
        and not isinstance(
            s,
            (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.If,
                ast.For,
                ast.While,
                ast.With,
                ast.AsyncWith,
                ast.AsyncFor,
                ast.Try,
            ),
        )
    }
    out: list[str] = []
    mapping: list[int | None] = []
    for number, line in enumerate(lines, start=1):
        if number in starts:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# note {number}\n")
            mapping.append(None)
        if number in tails and "#" not in line:
            line = line.rstrip("\n") + f"  # tail {number}\n"
        out.append(line)
        mapping.append(number - 1)
    return out, mapping


def _with_blank_lines(lines: list[str], source: str) -> tuple[list[str], list[int | None]]:
    starts = {s.lineno for s in _statements(source)}
    out: list[str] = []
    mapping: list[int | None] = []
    for number, line in enumerate(lines, start=1):
        if number in starts and number > 1:
            out.append("\n")
            mapping.append(None)
        out.append(line)
        mapping.append(number - 1)
    return out, mapping


def _tabs(text: str) -> str:
    return "".join(
        re.sub(r"^(?:    )+", lambda m: "\t" * (len(m.group(0)) // 4), line) for line in text.splitlines(keepends=True)
    )


def _fix(data: bytes, code: str) -> bytes:
    outcome, fixed, error = fix_bytes("variant.py", data, SETTINGS, frozenset({code}), unsafe=True)
    assert error is None and outcome is not None and outcome.applied
    return fixed


def _changed_lines(before: list[str], after: list[str]) -> set[int]:
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out.update(range(i1, i2))
    return out


@pytest.mark.parametrize("variant", ["comments", "blank-lines"])
@pytest.mark.parametrize("folder", FIXABLE, ids=[f.name for f in FIXABLE])
def test_comment_and_blank_line_variants_change_only_the_fixed_lines(folder: Path, variant: str) -> None:
    code = folder.name[:6]
    bad = MARKER.sub("", (folder / "bad.py").read_text(encoding="utf-8"))
    plain = bad.splitlines(keepends=True)
    touched = _changed_lines(plain, (folder / "fixed.py").read_text(encoding="utf-8").splitlines(keepends=True))
    make = _with_comments if variant == "comments" else _with_blank_lines
    lines, mapping = make(plain, bad)
    fixed = _fix("".join(lines).encode(), code).decode()
    out = fixed.splitlines(keepends=True)
    # every line the plain fix keeps must come out unchanged and in order (a subsequence of
    # the output: a line diff could align the two copies of a duplicated line either way);
    # blank lines right after removed code may go with it
    kept: list[str] = []
    previous_removed = False
    # two copies of one line (the duplicate being removed) are interchangeable
    touched_text = {plain[i] for i in touched}
    for line, origin in zip(lines, mapping):
        removed = origin is not None and plain[origin] in touched_text
        if removed or (previous_removed and not line.strip()):
            previous_removed = True
            continue
        previous_removed = False
        kept.append(line)
    position = 0
    for line in out:
        if position < len(kept) and _same_or_nested(line, kept[position]):
            position += 1
    assert position == len(kept), f"a line the fix does not own changed or moved: {kept[position]!r}"
    notes = [line for line, m in zip(lines, mapping) if m is None and line.strip()]
    assert all(any(_same_or_nested(line, note) for line in out) for note in notes), "an own-line comment was lost"


def _same_or_nested(line: str, kept: str) -> bool:
    """``line`` is ``kept`` unchanged, or moved one block deeper by the fix (the DUP102 fix runs
    a handler's body under ``async with asession_lease(...)``): the same text, more indented."""
    if line == kept:
        return True
    body = kept.lstrip(" \t")
    return bool(body.strip()) and line.endswith(body) and len(line) > len(kept) and not line[: -len(body)].strip()


@pytest.mark.parametrize("variant", ["crlf", "bom", "bom+crlf", "tabs", "latin-1 cookie"])
@pytest.mark.parametrize("folder", FIXABLE, ids=[f.name for f in FIXABLE])
def test_newline_encoding_and_indent_variants_fix_to_the_same_variant_of_fixed(folder: Path, variant: str) -> None:
    code = folder.name[:6]
    bad = MARKER.sub("", (folder / "bad.py").read_text(encoding="utf-8"))
    expected = (folder / "fixed.py").read_text(encoding="utf-8")

    def apply(text: str) -> bytes:
        if variant == "tabs":
            return _tabs(text).encode()
        if variant == "latin-1 cookie":
            return ("# -*- coding: latin-1 -*-\n# caf\u00e9\n" + text).encode("latin-1")
        if "crlf" in variant:
            text = text.replace("\n", "\r\n")
        data = text.encode()
        return b"\xef\xbb\xbf" + data if "bom" in variant else data

    assert _fix(apply(bad), code) == apply(expected)
