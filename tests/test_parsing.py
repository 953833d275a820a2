"""``dupguard.parsing``: the same trees as libcst's parser, without its per-node checks, and
the checks and libcst's classes back in place afterwards (codemods rely on them); the
factories build what the classes build (``dupguard.cstfast``, shortcut 1). The tests that
compare trees run with the shortcuts on and off (``cstmodes``)."""

from __future__ import annotations

import dataclasses

import libcst as cst
import pytest

from cstmodes import libcst_mode  # noqa: F401
from dupguard import cstfast
from dupguard.cstfast import HOT_NODE_CLASSES, factories
from dupguard.parsing import parse_module
from linthelpers import ROOT

FACTORIES = factories()

FILES = sorted(p for d in ("rules", "tests/corpus") for p in (ROOT / d).rglob("*.py"))


@pytest.mark.usefixtures("libcst_mode")
def test_trees_equal_libcsts_on_the_agent_code_examples() -> None:
    assert len(FILES) > 50
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        fast, plain = parse_module(text), cst.parse_module(text)
        assert fast.deep_equals(plain), path
        assert fast.code == text, path


@pytest.mark.usefixtures("libcst_mode")
def test_the_parser_builds_real_libcst_nodes() -> None:
    module = parse_module("agent = make_agent(tools=[t])\n")
    assign = module.body[0].body[0]
    assert type(assign) is cst.Assign and type(assign.value) is cst.Call
    assert type(assign.value.args[0].value.elements[0].value) is cst.Name


def test_every_hot_node_class_has_a_factory() -> None:
    # a libcst release that renames a class or stops using dataclasses shows up here
    assert sorted(FACTORIES) == sorted(HOT_NODE_CLASSES)


@pytest.mark.parametrize("name", HOT_NODE_CLASSES)
def test_factories_build_what_the_classes_build(name: str) -> None:
    kind, make = getattr(cst, name), FACTORIES[name]
    assert kind is not make
    fields = dataclasses.fields(kind)
    example = _example(kind)
    everything = {f.name: getattr(example, f.name) for f in fields}
    assert type(make(**everything)) is kind
    assert make(**everything).deep_equals(kind(**everything))
    # positionally, and with the defaults: the same parameters as the class
    assert make(*everything.values()).deep_equals(example)
    required = {
        f.name: everything[f.name]
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    built = make(**required)
    assert built.deep_equals(kind(**required))
    for f in fields:
        value = getattr(built, f.name)
        if f.default_factory is not dataclasses.MISSING and isinstance(value, cst.CSTNode):
            assert value is not getattr(make(**required), f.name), f"{f.name}: one node per call, as the class does"
    with pytest.raises(TypeError):
        make(*everything.values(), None)
    if required:
        with pytest.raises(TypeError):
            make()


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


@pytest.mark.usefixtures("libcst_mode")
@pytest.mark.parametrize(
    "source",
    [b"x = 1\r\n", "\ufeffimport os\n".encode("utf-8"), "# -*- coding: latin-1 -*-\ns = '\xe9'\n".encode("latin-1")],
)
def test_bytes_keep_their_encoding_and_newlines(source: bytes) -> None:
    fast, plain = parse_module(source), cst.parse_module(source)
    assert fast.deep_equals(plain) and fast.encoding == plain.encoding and fast.bytes == source


@pytest.mark.usefixtures("libcst_mode")
def test_nodes_are_not_checked_while_parsing_unless_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = cst.Name._validate
    monkeypatch.setattr(cst.Name, "_validate", lambda self: calls.append(self.value) or original(self))
    cst.parse_module("agent = make_agent()\n")
    assert calls, "libcst checks each node it builds (the cost the shortcut avoids)"
    calls.clear()
    parse_module("agent = make_agent()\n")
    assert calls == ([] if cstfast.enabled() else ["agent", "make_agent"])


@pytest.mark.usefixtures("libcst_mode")
def test_libcst_is_as_installed_during_a_plain_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the fast parse swaps classes and checks, and only while libcst's parser runs."""
    real_name, real_check = cst.Name, cst.CSTNode.__dict__["__post_init__"]
    seen = []
    libcsts = cst.parse_module

    def spy(source: str | bytes) -> cst.Module:
        seen.append((cst.Name is real_name, cst.CSTNode.__dict__["__post_init__"] is real_check))
        return libcsts(source)

    monkeypatch.setattr(cst, "parse_module", spy)
    parse_module("x = 1\n")
    assert seen == ([(False, False)] if cstfast.enabled() else [(True, True)])
    assert cst.Name is real_name and cst.CSTNode.__dict__["__post_init__"] is real_check


@pytest.mark.usefixtures("libcst_mode")
@pytest.mark.parametrize("source", ["x = 1\n", "def (:\n"])
def test_hand_built_nodes_are_checked_again_afterwards(source: str) -> None:
    try:
        parse_module(source)
    except cst.ParserSyntaxError:
        pass
    assert all(getattr(cst, name) is not make for name, make in FACTORIES.items())
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")
