"""CachedVisitor calls the same hooks, in the same order, as libcst's own CSTVisitor."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from dupguard.semantic.visitor import CachedVisitor

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "rules").glob("*/bad.py"))[:6] + sorted((ROOT / "tests" / "corpus" / "dev").glob("*.py"))[:6]


def _recorder(base: type) -> type:
    class Recorder(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, str]] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.calls.append(("visit_FunctionDef", node.name.value))
            return not node.name.value.startswith("_")  # skipping children must work too

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.calls.append(("leave_FunctionDef", original_node.name.value))

        def visit_Call(self, node: cst.Call) -> None:
            self.calls.append(("visit_Call", cst.Module([]).code_for_node(node.func)))

        def visit_If_body(self, node: cst.If) -> None:
            self.calls.append(("visit_If_body", ""))

        def leave_If_body(self, node: cst.If) -> None:
            self.calls.append(("leave_If_body", ""))

        def leave_Name(self, original_node: cst.Name) -> None:
            self.calls.append(("leave_Name", original_node.value))

    return Recorder


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_same_hooks_in_the_same_order_as_libcst(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    plain, cached = _recorder(cst.CSTVisitor)(), _recorder(CachedVisitor)()
    module.visit(plain)
    module.visit(cached)
    assert cached.calls == plain.calls and len(plain.calls) > 10
