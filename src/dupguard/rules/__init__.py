"""The rule registry: every rule declares itself here with ``@rule`` where it is defined.

One module per rule (or per pair of rules that share their detection and their message),
grouped by family, one package per code range::

    rules/shared_state/   DUP1xx  agents, memories and session keys shared by every request
    rules/fanout/         DUP2xx  one agent run by many tasks; results applied out of order
    rules/tools/          DUP3xx  tools given twice, names reused, tool lists that grow
    rules/handlers/       DUP4xx  handlers registered per call or twice; tools run from two callbacks
    rules/retries/        DUP5xx  retries, replays, redelivered jobs and tool loops that run tools again

A rule is a function ``check(model, ctx) -> Iterable[Finding]`` that only queries the
semantic model. Its module also holds the detection no other rule uses; what several rules
share stays in ``dupguard.semantic``. The decorator declares the facts the code owns::

    @rule("DUP101", name="shared-agent-singleton", fix="shared_agent_singleton", safety="unsafe")
    def shared_agent_singleton(model, ctx): ...

``fix`` names the module under ``dupguard.codemods`` that builds the rule's replacements, by
name and not by import: the codemods import ``libcst.codemod`` (≈ 0.5 s), which plain
``check`` never needs. Inside the rule, ``ctx.fix(*args)`` calls that module's ``fix(*args)``.

The rest of a rule lives in its folder ``rules/<CODE>-<name>/`` at the repository root:
``rule.toml`` (summary, runtime fix), ``doc.md``, and the ``bad.py``/``good.py``/``fixed.py``
fixtures the tests and ``docs/rules/`` are generated from. ``tests/test_rule_registry.py`` keeps the
folders, this registry and the docs in agreement.

Importing this registry imports the semantic layer and libcst, so what only needs a rule's
code, name or docs (start-up, ``dupguard rules``, the reports) reads ``dupguard.rulemeta``
instead, generated from the registry by ``python -m dupguard.docgen``.

Adding a rule: its folder ``rules/<CODE>-<name>/`` (``rule.toml``, ``doc.md``, ``bad.py``,
``good.py``, and ``fixed.py`` when it has a fix) and one module in its family package holding
the ``@rule`` function and the detection no other rule needs (``load()`` finds it); for an
automatic fix, also the codemod module its ``fix=`` names, with ``fix(...)`` and the command
class ``Fix<Name>``. Then ``python -m dupguard.docgen`` regenerates ``docs/rules/`` and
``dupguard/_ruleindex.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import libcst as cst

    from ..semantic.model import Model
    from ..semantic.positions import Positions


@dataclass(frozen=True)
class Finding:
    node: cst.CSTNode
    message: str
    # the fix, as a LibCST replacement owned by the rule: (node to replace, new node or
    # libcst.RemoveFromParent()), applied by the fixer, never by the rule
    replacement: tuple[cst.CSTNode, object] | None = None
    fix_message: str = ""


@dataclass(frozen=True)
class RuleContext:
    """What a rule may use besides the model: line numbers for its messages, whether the
    caller wants fixes (building a replacement can cost more than the rule itself, and plain
    ``check`` output never shows it), and the rule being run (set by the registry), whose
    declared fix ``fix()`` calls."""

    positions: Positions
    want_fixes: bool = True
    rule: Rule | None = None

    def line(self, node: cst.CSTNode) -> int:
        return self.positions.line(node)

    def fix(self, *args: object) -> tuple:
        """``(replacement, fix_message)`` from the running rule's codemod module,
        ``dupguard.codemods.<fix>.fix(*args)``, or ``(None, "")`` when fixes are unwanted."""
        if not self.want_fixes:
            return None, ""
        if self.rule is None or self.rule.fix is None:
            raise LookupError(f"{self.rule.code if self.rule else 'this rule'} declares no fix in its @rule(...)")
        from importlib import import_module

        return import_module(f"dupguard.codemods.{self.rule.fix}").fix(*args)


Check = Callable[["Model", RuleContext], Iterable[Finding]]
Safety = Literal["safe", "unsafe"]


@dataclass(frozen=True)
class Rule:
    """One registered rule. Calling it runs its check with a context bound to it, so that
    ``ctx.fix(...)`` reaches the fix this rule declared."""

    code: str
    name: str
    check: Check
    fix: str | None  # module under dupguard.codemods; None when the rule has no automatic fix
    safety: Safety | None  # None exactly when fix is None

    def __call__(self, model: Model, ctx: RuleContext) -> Iterable[Finding]:
        if ctx.rule is not self:
            ctx = RuleContext(ctx.positions, ctx.want_fixes, self)
        return self.check(model, ctx)

    @property
    def command(self) -> str | None:
        """The ``libcst.codemod`` command class in the fix module, named after the rule:
        ``shared-agent-singleton`` → ``FixSharedAgentSingleton``."""
        if self.fix is None:
            return None
        return "Fix" + "".join(word.capitalize() for word in self.name.split("-"))

    @property
    def module(self) -> str:
        """Where the rule is defined (``dupguard.rules.retries.queue_without_lease``)."""
        return self.check.__module__


RULES: dict[str, Rule] = {}


def rule(code: str, *, name: str, fix: str | None = None, safety: Safety | None = None) -> Callable[[Check], Check]:
    """Register ``check`` as rule ``code``; returns it unchanged."""
    if (fix is None) != (safety is None) or safety not in (None, "safe", "unsafe"):
        raise ValueError(f"rule {code}: give fix= and safety= ('safe' or 'unsafe') together, or neither")

    def register(check: Check) -> Check:
        if code in RULES:
            raise ValueError(f"rule {code} registered twice")
        RULES[code] = Rule(code, name, check, fix, safety)
        return check

    return register


_loaded = False


def load() -> dict[str, Rule]:
    """Import every rule module (each registers its rules) and return the registry, code →
    rule; a rule is called as ``rules[code](model, ctx)``. The modules are found by walking
    this package, so adding a rule module needs no edit here."""
    global _loaded
    if not _loaded:
        from importlib import import_module
        from pkgutil import walk_packages

        for info in walk_packages(__path__, prefix=f"{__name__}."):
            import_module(info.name)
        _loaded = True
    return RULES
