"""What the command line and the reports know about each rule: code, name, fix safety, summary,
runtime fix and documentation.

Every fact has one source: the code, name and fix safety are declared with ``@rule(...)`` in
the rule's module (``dupguard.rules``); the summary, runtime fix and documentation live in the
rule's folder ``rules/<CODE>-<name>/`` (``rule.toml``, ``doc.md``). Reading them there would
import every rule (and with them the semantic layer and libcst) or parse TOML, so
``python -m dupguard.docgen`` compiles them into the plain-data module ``dupguard._ruleindex``,
which is all this module reads at run time: start-up costs one small import, and an installed
wheel needs no rule folders. ``tests/test_rule_registry.py`` fails when that module is stale.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

DOCS_URL = "https://github.com/dupguard/dupguard/blob/main/docs/rules/{code}.md"


class RuleMeta(NamedTuple):
    code: str
    name: str
    fix: str  # "none" | "safe" | "unsafe"
    summary: str
    runtime_fix: str
    doc: str  # the rule folder's doc.md

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)


_RULES: dict[str, RuleMeta] | None = None


def all_rules() -> dict[str, RuleMeta]:
    """Every rule, by code, in code order."""
    global _RULES
    if _RULES is None:
        from ._ruleindex import RULES

        _RULES = {row[0]: RuleMeta(*row) for row in RULES}
    return _RULES


def rule_codes() -> tuple[str, ...]:
    """The codes alone, sorted: what ``select``/``ignore`` choose from."""
    return tuple(all_rules())


def toml_loads(text: str) -> dict:
    """``tomllib.loads`` (tomli before 3.11), imported on first use: most runs read no TOML.

    Raises ``ValueError`` (``TOMLDecodeError`` is one) on invalid TOML.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)
