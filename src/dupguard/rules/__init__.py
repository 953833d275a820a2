"""Rule implementations, one module per family; each rule only queries the semantic model.

A rule is a function ``check(model, ctx) -> Iterable[Finding]`` registered under its code.
Names, summaries, docs and fix safety live in the ``rules/<CODE>-<name>/`` folders, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    import libcst as cst

    from ..semantic.model import Model
    from ..semantic.positions import Positions


@dataclass(frozen=True)
class Finding:
    node: "cst.CSTNode"
    message: str
    # the fix, as a LibCST replacement owned by the rule: (node to replace, new node or
    # libcst.RemoveFromParent()), applied by the fixer, never by the rule
    replacement: "tuple[cst.CSTNode, object] | None" = None
    fix_message: str = ""


@dataclass(frozen=True)
class RuleContext:
    """What a rule may use besides the model: line numbers for its messages, and whether
    the caller wants fixes (building a replacement can cost more than the rule itself, and
    plain ``check`` output never shows it)."""

    positions: "Positions"
    want_fixes: bool = True

    def line(self, node: "cst.CSTNode") -> int:
        return self.positions.line(node)

    def fix(self, codemod: str, *args: object) -> tuple:
        """``(replacement, fix_message)`` from ``dupguard.codemods.<codemod>.fix(*args)``, or
        nothing when unwanted. Named, not imported by the rule: the codemods import
        ``libcst.codemod`` (≈ 0.5 s), which plain ``check`` never needs."""
        if not self.want_fixes:
            return None, ""
        from importlib import import_module

        return import_module(f"dupguard.codemods.{codemod}").fix(*args)


Check = Callable[["Model", RuleContext], Iterable[Finding]]
RULES: dict[str, Check] = {}


def rule(code: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        if code in RULES:
            raise ValueError(f"rule {code} registered twice")
        RULES[code] = check
        return check

    return register


def load() -> dict[str, Check]:
    """Import every family module (they register themselves) and return the registry."""
    from . import fanout, handlers, retries, shared_state, tools  # noqa: F401

    return RULES
