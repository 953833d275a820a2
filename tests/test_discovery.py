"""Exclude matching: the fast path for plain paths and simple wildcards (LiteralSpec) agrees with pathspec's
gitignore rules."""

from __future__ import annotations

import itertools

import pathspec
import pytest

from dupguard.config import DEFAULT_EXCLUDE
from dupguard.discovery import LiteralSpec, _spec

PATTERNS = [
    *DEFAULT_EXCLUDE,
    "rules",
    "tests/corpus",
    "/abs",
    "build/",
    "a/b/",
    "x.py",
    "/top/x.py",
    "foo.bar",
    "/lead/",
    "a/b/c",
    "a-b_c.d",
    # simple wildcards within a component: what most .gitignore lines are
    "*.py",
    "x.p?",
    "a*",
    "*",
    ".*",
    "?",
    "b/*.py",
    "*/c",
    "/a*/b",
    "*.bar/",
    "*corpus*",
    "*.py[cod]",
    "[ab]",
    "x.[a-z]y",
    "c[a-b]rpus/",
]
COMPONENTS = [
    "build",
    "a",
    "b",
    "c",
    "x.py",
    "tests",
    "corpus",
    "corpusx",
    "abs",
    "top",
    "foo.bar",
    "venv",
    "lead",
    "a-b_c.d",
    ".git",
    "x.pyc",
    "cbrpus",
]
PATHS = ["/".join(p) for n in (1, 2, 3) for p in itertools.product(COMPONENTS, repeat=n)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_literal_patterns_match_like_pathspec(pattern: str) -> None:
    ours, reference = _spec((pattern,)), pathspec.GitIgnoreSpec.from_lines([pattern])
    assert isinstance(ours, LiteralSpec)
    for path in PATHS:
        for candidate in (path, path + "/"):  # a file, a directory
            assert ours.match_file(candidate) == reference.match_file(candidate), candidate


@pytest.mark.parametrize(
    "pattern",
    ["!keep", "# comment", "", "a\\b", "./x", "../x", "a/./b", "a/**/b", "**/x", "[!a].py", "[^a]", "a b", "x "],
)
def test_anything_else_goes_to_pathspec(pattern: str) -> None:
    assert isinstance(_spec(("build", pattern)), pathspec.PathSpec)
