"""``dupguard.parsing``: the same trees as libcst's parser, without its per-node checks, and
the checks back in place afterwards (codemods rely on them)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from dupguard.parsing import parse_module
from linthelpers import ROOT

FILES = sorted(p for d in ("rules", "tests/corpus") for p in (ROOT / d).rglob("*.py"))


def test_trees_equal_libcsts_on_the_agent_code_examples() -> None:
    assert len(FILES) > 50
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        fast, plain = parse_module(text), cst.parse_module(text)
        assert fast.deep_equals(plain), path
        assert fast.code == text, path


@pytest.mark.parametrize("source", [b"x = 1\r\n", "\ufeffimport os\n".encode("utf-8"), "# -*- coding: latin-1 -*-\ns = '\xe9'\n".encode("latin-1")])
def test_bytes_keep_their_encoding_and_newlines(source: bytes) -> None:
    fast, plain = parse_module(source), cst.parse_module(source)
    assert fast.deep_equals(plain) and fast.encoding == plain.encoding and fast.bytes == source


def test_nodes_are_not_checked_while_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = cst.Name._validate
    monkeypatch.setattr(cst.Name, "_validate", lambda self: calls.append(self.value) or original(self))
    cst.parse_module("agent = make_agent()\n")
    assert calls, "libcst checks each node it builds (the cost this module avoids)"
    calls.clear()
    parse_module("agent = make_agent()\n")
    assert calls == []


@pytest.mark.parametrize("source", ["x = 1\n", "def (:\n"])
def test_hand_built_nodes_are_checked_again_afterwards(source: str) -> None:
    try:
        parse_module(source)
    except cst.ParserSyntaxError:
        pass
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")
