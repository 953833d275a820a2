"""Walker calls the hooks libcst's CSTVisitor would call, in the same order (minus trivia).

The reference is a real ``CSTVisitor`` that records every visit/leave and every attribute
visit, ignoring what lies under trivia fields; the walker's recorder has a hook for every node
type and every walked field. Both must produce the same sequence on real files, with the
libcst shortcuts on (the walker's own loop in ``dupguard.cstfast``'s child order) and off (the
hooks driven by a ``CSTVisitor``).
"""

from __future__ import annotations

import sys
from dataclasses import is_dataclass
from pathlib import Path

import libcst as cst
import pytest

from cstmodes import libcst_mode  # noqa: F401
from dupguard import cstfast
from dupguard.semantic.visitor import Walker, _walked_fields, is_trivia

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "rules").glob("*/*.py")) + sorted((ROOT / "tests" / "corpus").glob("*/*.py"))
NODE_TYPES = [t for t in vars(cst).values() if isinstance(t, type) and issubclass(t, cst.CSTNode) and is_dataclass(t)]


class Reference(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []
        self._trivia_depth = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not self._trivia_depth:
            self.calls.append(("visit", type(node).__name__, id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if not self._trivia_depth:
            self.calls.append(("leave", type(original_node).__name__, id(original_node)))

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if is_trivia(attribute):
            self._trivia_depth += 1
        elif not self._trivia_depth:
            self.calls.append((f"visit_{attribute}", type(node).__name__, id(node)))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if is_trivia(attribute):
            self._trivia_depth -= 1
        elif not self._trivia_depth:
            self.calls.append((f"leave_{attribute}", type(original_node).__name__, id(original_node)))


def _recorder(names: set[str] | None = None) -> type:
    """A walker that records every hook, or only the hooks of the node types in ``names``."""

    def hook(kind: str, name: str) -> object:
        def record(self, node: cst.CSTNode) -> None:
            self.calls.append((kind, name, id(node)))

        return record

    methods: dict[str, object] = {}
    for node_type in NODE_TYPES:
        name = node_type.__name__
        if names is not None and name not in names:
            continue
        methods[f"visit_{name}"] = hook("visit", name)
        methods[f"leave_{name}"] = hook("leave", name)
        for field in _walked_fields(node_type):
            methods[f"visit_{name}_{field}"] = hook(f"visit_{field}", name)
            methods[f"leave_{name}_{field}"] = hook(f"leave_{field}", name)
    recorder = type("Recorder", (Walker,), methods)
    return recorder


RECORDER = _recorder()


def hook_sequences(source: str) -> tuple[list, list]:
    module = cst.parse_module(source)
    reference = Reference()
    module.visit(reference)
    ours = RECORDER()
    ours.calls = []
    ours.walk(module)
    return ours.calls, reference.calls


@pytest.mark.usefixtures("libcst_mode")
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_same_hooks_in_the_same_order_as_libcst(path: Path) -> None:
    ours, reference = hook_sequences(path.read_text(encoding="utf-8"))
    assert ours == reference and len(reference) > 100


@pytest.mark.usefixtures("libcst_mode")
def test_nodes_without_hooks_below_them_are_not_entered_and_no_hook_is_lost() -> None:
    """A walker with hooks for a few node types only (as the model builder has) skips the
    node types where nothing can fire (``Name``…), and still fires every hook it has."""
    names = {"Call", "Arg", "Attribute", "Subscript", "FunctionDef"}
    partial = _recorder(names)
    for path in FILES[:40]:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        reference = Reference()
        module.visit(reference)
        ours = partial()
        ours.calls = []
        ours.walk(module)
        assert ours.calls == [call for call in reference.calls if call[1] in names], path
    if not cstfast.enabled():  # libcst's own visit enters every node
        return
    assert {cst.Name, cst.SimpleString} <= partial._silent
    assert not partial._silent & {t for t in NODE_TYPES if t.__name__ in names}


@pytest.mark.parametrize("node_type", NODE_TYPES, ids=lambda t: t.__name__)
def test_walked_fields_follow_libcsts_visiting_order(node_type: type) -> None:
    """Every node type, even ones the files above lack: the fields come in the order libcst's
    ``_visit_and_replace_children`` visits them (a libcst upgrade that reorders one fails here)."""
    import inspect
    import re

    try:
        source = inspect.getsource(node_type._visit_and_replace_children)
    except (OSError, TypeError):
        pytest.skip("no source")
    visited = re.findall(r'visit_\w+\(\s*self,\s*"(\w+)"', source)
    walked = _walked_fields(node_type)
    assert [f for f in dict.fromkeys(visited) if f in walked] == list(walked)


@pytest.mark.usefixtures("libcst_mode")
def test_visit_returning_false_skips_the_children_but_not_leave() -> None:
    class Skipper(Walker):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.seen.append("def " + node.name.value)
            return False

        def visit_Call(self, node: cst.Call) -> None:
            self.seen.append("call")

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.seen.append("end " + original_node.name.value)

    skipper = Skipper()
    skipper.walk(cst.parse_module("def f():\n    g()\nh()\n"))
    assert skipper.seen == ["def f", "end f", "call"]


if __name__ == "__main__":  # python tests/test_visitor.py FILE...: report the first difference
    for arg in sys.argv[1:]:
        try:
            ours, reference = hook_sequences(Path(arg).read_text(encoding="utf-8"))
        except Exception as exc:
            print(arg, "skipped:", type(exc).__name__)
            continue
        if ours != reference:
            at = (
                next(i for i, (a, b) in enumerate(zip(ours, reference)) if a != b)
                if any(a != b for a, b in zip(ours, reference))
                else min(len(ours), len(reference))
            )
            print(
                "differs:",
                [c[:2] for c in ours[at - 1 : at + 2]],
                "libcst:",
                [c[:2] for c in reference[at - 1 : at + 2]],
                arg,
            )
