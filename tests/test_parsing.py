"""``dupguard.parsing``: the same trees as libcst's parser, without its per-node checks, and
the checks back in place afterwards (codemods rely on them); the direct constructors behave
like the ones ``dataclasses`` wrote."""

from __future__ import annotations

import dataclasses

import libcst as cst
import pytest

from dupguard.parsing import DATACLASS_CONSTRUCTORS, HOT_NODE_CLASSES, parse_module
from linthelpers import ROOT

FILES = sorted(p for d in ("rules", "tests/corpus") for p in (ROOT / d).rglob("*.py"))


def test_trees_equal_libcsts_on_the_agent_code_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(FILES) > 50
    with monkeypatch.context() as m:  # libcst exactly as installed
        for kind, init in DATACLASS_CONSTRUCTORS.items():
            m.setattr(kind, "__init__", init)
        plain = [cst.parse_module(path.read_text(encoding="utf-8")) for path in FILES]
    for path, reference in zip(FILES, plain):
        text = path.read_text(encoding="utf-8")
        fast = parse_module(text)
        assert fast.deep_equals(reference), path
        assert fast.code == text, path


def test_every_hot_node_class_gets_a_direct_constructor() -> None:
    # a libcst release that renames a class or stops using dataclasses shows up here
    assert sorted(kind.__name__ for kind in DATACLASS_CONSTRUCTORS) == sorted(HOT_NODE_CLASSES)
    for kind in DATACLASS_CONSTRUCTORS:
        assert kind.__init__ is not DATACLASS_CONSTRUCTORS[kind]
        assert kind.__init__.__qualname__ == f"{kind.__name__}.__init__"


@pytest.mark.parametrize("name", HOT_NODE_CLASSES)
def test_direct_constructors_build_what_the_dataclass_ones_build(name: str) -> None:
    kind = getattr(cst, name)
    original = DATACLASS_CONSTRUCTORS[kind]
    fields = dataclasses.fields(kind)
    required = [f for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    # required fields: take them from a parsed example, so that the values are valid
    example = _example(kind)
    kwargs = {f.name: getattr(example, f.name) for f in required}
    built, reference = kind(**kwargs), kind.__new__(kind)
    original(reference, **kwargs)
    assert built.deep_equals(reference)
    for f in fields:
        value = getattr(built, f.name)
        if f.default_factory is not dataclasses.MISSING and isinstance(value, cst.CSTNode):
            assert value is not getattr(kind(**kwargs), f.name), f"{f.name}: one node per call, as before"
    # positionally, as hand-written code may call them
    assert kind(*(getattr(example, f.name) for f in fields)).deep_equals(example)
    with pytest.raises(TypeError):
        kind(*(getattr(example, f.name) for f in fields), None)
    if required:
        with pytest.raises(TypeError):
            kind()


_EXAMPLE_SOURCE = """\
from a import b as c
# note
@d
def f(x: int = 1, *, y) -> None:
    z = g.h(x, k=[1, 'two'])[0]
    return (
        z
    )
print(f)
"""


def _example(kind: type) -> cst.CSTNode:
    found: list[cst.CSTNode] = []

    class Find(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node) is kind and not found:
                found.append(node)
            return True

    cst.parse_module(_EXAMPLE_SOURCE).visit(Find())
    assert found, f"the example source has no {kind.__name__}"
    return found[0]


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
