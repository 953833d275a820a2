"""The ``libcst.codemod`` face of a rule's fix: run the dupguard fix loop for one rule."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
from libcst.codemod import SkipFile, VisitorBasedCodemodCommand


class RuleCodemod(VisitorBasedCodemodCommand):
    """Apply every fix of rule ``CODE`` (safe and unsafe: running a codemod is the opt-in).

    The work is the fixer's loop, so a codemod run and ``dupguard fix --select CODE`` make
    the same edits and refuse the same files (a result that would not parse, or no fixed
    point after ten passes, leaves the file untouched: ``SkipFile``).
    """

    CODE: ClassVar[str] = ""  # set from the registry: the rule whose declared fix command this is

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Find the rule this command fixes: the one whose ``@rule(fix=...)`` names this module
        and whose name gives this class's name (``shared-agent-singleton`` →
        ``FixSharedAgentSingleton``), so the code is written once, in the rule's decorator."""
        super().__init_subclass__(**kwargs)
        from ..rules import load

        module = cls.__module__.rpartition(".")[2]
        codes = [r.code for r in load().values() if r.fix == module and r.command == cls.__name__]
        if len(codes) != 1:
            raise LookupError(f"no rule declares fix={module!r} with a name that makes {cls.__name__}")
        cls.CODE = codes[0]
        cls.DESCRIPTION = f"{cls.CODE}: {cls.DESCRIPTION}"

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        from ..config import Settings
        from ..fixer import fix_module

        outcome = fix_module(
            self.context.filename or "<codemod>", tree, Settings(), frozenset({self.CODE}), unsafe=True
        )
        if outcome.error is not None:
            raise SkipFile(outcome.error)
        if outcome.applied:
            self.context.scratch.setdefault("dupguard_fixed", []).extend(outcome.applied)
        return outcome.module
