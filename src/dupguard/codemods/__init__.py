"""LibCST codemods: the fixes that rules declare with ``@rule(..., fix="<module>", safety=...)``.

One module per fix (``shared_agent_singleton`` serves DUP101 and DUP102, ``fanout_shared_agent``
DUP201 and DUP202). A rule names its fix with ``Finding(..., fix=ctx.fix(*args))``; when fixes
are wanted the pipeline calls the module's ``fix(fix_context, *args)``, which returns a
``dupguard.fixes.FixProposal``: a title and the node replacements that make the fix (as small
as the change: an added import replaces or follows the import statements it changes, not the
module), or the reason there is none. The fix context (``dupguard.fixes.FixContext``) holds
the module, its model and positions, and the parent map and scope analysis shared by every
fix of the pass. The fixer (``dupguard.fixer``) applies the proposals, re-parses, re-lints and
repeats until the file is stable. Each module also exposes, per rule, a ``libcst.codemod``
command named after the rule (``Fix`` + its name in CamelCase: duplicate-tool →
``FixDuplicateTool``) that runs that rule's fixes, so the same transformation works from
LibCST's own runner::

    python -m libcst.tool codemod --no-format -x dupguard.codemods.duplicate_tool.FixDuplicateTool src/

Modules are imported only when a finding needs its fix: ``libcst.codemod`` is slow to import.
"""

from ..rules import load

# rule code → "module.CommandClass" (the libcst.tool spelling, relative to this package), from
# the registry: each fixable rule's declared fix module and the command named after the rule
COMMANDS = {r.code: f"{r.fix}.{r.command}" for r in sorted(load().values(), key=lambda r: r.code) if r.fix}
