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
share stays in ``dupguard.semantic``. The decorator (``dupguard.rules.registry``, which rule
modules import: never this package) declares the facts the code owns::

    @rule("DUP101", name="shared-agent-singleton", fix="shared_agent_singleton", safety="unsafe")
    def shared_agent_singleton(model, ctx): ...

``fix`` names the module under ``dupguard.codemods`` that builds the rule's fixes, by name
and not by import: the codemods import ``libcst.codemod`` (≈ 0.5 s), which plain ``check``
never needs. Inside the rule, ``Finding(node, message, fix=ctx.fix(*args))`` says which fix
applies; the pipeline calls that module's ``fix(fix_context, *args)`` for a
``dupguard.fixes.FixProposal`` only when fixes are wanted. ``safety`` is the applicability of
the rule's fixes unless a proposal decides otherwise for itself (as ruff decides per fix).

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

from .registry import RULES, DeclaredFix, Finding, Rule, RuleContext, Safety, rule

__all__ = ["RULES", "DeclaredFix", "Finding", "Rule", "RuleContext", "Safety", "load", "rule"]

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
