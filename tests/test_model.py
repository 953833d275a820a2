"""Small helpers of the semantic model that stand in for slower libcst properties."""

from __future__ import annotations

import libcst as cst
import pytest

from dupguard.semantic.model import string_value
from linthelpers import ROOT

EDGE_CASES = [
    '"a"',
    "'b'",
    '""',
    "''",
    '"""c"""',
    "'''d'''",
    "''''''",
    '"it\'s"',
    "'say \"hi\"'",
    'b"x"',
    'u"x"',
    'r"\\d"',
    'R"x"',
    'rb"\\x"',
    '"\\n"',
    '"\\u00e9"',
    '"""two\nlines"""',
    '"""crlf\r\nlines"""',
    "'''a\\\nb'''",
]


@pytest.mark.parametrize("source", EDGE_CASES)
def test_string_value_is_libcsts_evaluated_value(source: str) -> None:
    node = cst.parse_expression(source)
    assert isinstance(node, cst.SimpleString)
    assert string_value(node) == node.evaluated_value
    assert type(string_value(node)) is type(node.evaluated_value)


def test_string_value_on_every_string_of_the_examples() -> None:
    strings: list[cst.SimpleString] = []

    class Collect(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            strings.append(node)

    for path in sorted(p for d in ("rules", "tests/corpus") for p in (ROOT / d).rglob("*.py")):
        cst.parse_module(path.read_bytes()).visit(Collect())
    assert len(strings) > 500
    assert [string_value(s) for s in strings] == [s.evaluated_value for s in strings]


@pytest.mark.parametrize("source", ['f"x"', "x", "1", "'a' 'b'"])
def test_string_value_of_other_nodes_is_what_libcst_has_or_none(source: str) -> None:
    node = cst.parse_expression(source)
    assert string_value(node) == getattr(node, "evaluated_value", None)
