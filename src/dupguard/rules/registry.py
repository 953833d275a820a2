"""The registry's values: a rule (``Rule``, declared with ``@rule``), what it receives
(``RuleContext``) and what it reports (``Finding``).

They live apart from the package ``dupguard.rules`` so that imports flow one way: the package's
``load()`` imports the family modules, and the family modules import this module, never the
package (tests/test_pipeline.py: ``test_no_import_cycle_in_the_package``).

A finding's fix is not built by the rule. The rule says which fix applies and with what
arguments, ``ctx.fix(*args)``, which costs nothing; the pipeline asks for the fix itself, a
``dupguard.fixes.FixProposal``, only when the caller wants fixes (the report formats that show
them, ``fix``, ``check --fix``): building one can cost more than the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import libcst as cst

    from ..fixes import FixContext, FixProposal
    from ..semantic.model import Model
    from ..semantic.positions import Positions

Safety = Literal["safe", "unsafe"]


class ProposesFix(Protocol):
    """Whatever builds a finding's fix: the rule's declared fix (:class:`DeclaredFix`), or a
    ready ``FixProposal`` (which proposes itself)."""

    def propose(self, ctx: FixContext) -> FixProposal: ...


@dataclass(frozen=True)
class Finding:
    """What a rule found: the node to report, the message, and how to build the fix (None:
    no fix for this finding)."""

    node: cst.CSTNode
    message: str
    fix: ProposesFix | None = None


@dataclass(frozen=True)
class DeclaredFix:
    """A rule's declared fix, ``dupguard.codemods.<fix>.fix(ctx, *args)``, not built yet.

    The codemod module is imported only by :meth:`propose`: ``libcst.codemod`` (≈ 0.5 s) is
    something plain ``check`` never needs."""

    rule: Rule
    args: tuple[object, ...]

    def propose(self, ctx: FixContext) -> FixProposal:
        from importlib import import_module

        proposal: FixProposal = import_module(f"dupguard.codemods.{self.rule.fix}").fix(ctx, *self.args)
        return proposal


@dataclass(frozen=True)
class RuleContext:
    """What a rule may use besides the model: line numbers for its messages, and the rule being
    run (set by the registry), whose declared fix :meth:`fix` names."""

    positions: Positions
    rule: Rule | None = None

    def line(self, node: cst.CSTNode) -> int:
        return self.positions.line(node)

    def fix(self, *args: object) -> DeclaredFix:
        """The running rule's declared fix, to be built with ``args`` if and when fixes are wanted."""
        if self.rule is None or self.rule.fix is None:
            raise LookupError(f"{self.rule.code if self.rule else 'this rule'} declares no fix in its @rule(...)")
        return DeclaredFix(self.rule, args)


Check = Callable[["Model", RuleContext], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """One registered rule. Calling it runs its check with a context bound to it, so that
    ``ctx.fix(...)`` names the fix this rule declared."""

    code: str
    name: str
    check: Check
    fix: str | None  # module under dupguard.codemods; None when the rule has no automatic fix
    safety: Safety | None  # None exactly when fix is None; a fix may say otherwise for itself

    def __call__(self, model: Model, ctx: RuleContext) -> Iterable[Finding]:
        if ctx.rule is not self:
            ctx = RuleContext(ctx.positions, self)
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
