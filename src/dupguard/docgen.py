"""Generate ``docs/rules/`` and ``dupguard/_ruleindex.py`` from the rules, and check that the
rule folders and the registry agree.

A rule's facts come from two places, each fact from one: ``@rule(code, name=, fix=, safety=)``
in its module under ``dupguard/rules/``, and its folder ``rules/<CODE>-<name>/`` at the
repository root (``rule.toml`` with ``summary`` and ``runtime_fix``, ``doc.md``, and the
``bad.py``/``good.py``/``fixed.py`` fixtures). Run ``python -m dupguard.docgen`` from a source
checkout after adding or editing a rule; ``tests/test_rule_registry.py`` fails while the generated
files are stale or the folders and the registry disagree.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .rulemeta import RuleMeta, toml_loads

if TYPE_CHECKING:
    from .rules import Rule

SOURCE_ROOT = Path(__file__).resolve().parent.parent.parent  # the checkout: src/dupguard/docgen.py
INDEX_MODULE = Path(__file__).resolve().parent / "_ruleindex.py"
TOML_KEYS = {"summary", "runtime_fix"}  # everything else about a rule is declared in its @rule(...)
FIXTURES = ("bad.py", "good.py")


class Source(NamedTuple):
    meta: RuleMeta
    folder: Path
    module: str  # dotted name of the module that defines the rule
    fix: str | None  # the codemod module under dupguard.codemods


def rules_dir() -> Path:
    folder = SOURCE_ROOT / "rules"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is missing: docgen runs from a source checkout")
    return folder


def rule_folders(root: Path | None = None) -> dict[str, Path]:
    """``rules/<CODE>-<name>/`` folders by code."""
    root = rules_dir() if root is None else root
    return {f.name.partition("-")[0]: f for f in sorted(root.iterdir()) if (f / "rule.toml").is_file()}


def disagreements(root: Path | None = None, registry: Mapping[str, Rule] | None = None) -> list[str]:
    """Every way the rule folders (``rules/`` of the checkout unless ``root`` is given) and the
    registry disagree; empty when they agree."""
    if registry is None:
        from .rules import load

        registry = load()
    folders = rule_folders(root)
    problems = [f"{code} is registered but has no rules/{code}-<name>/ folder" for code in registry.keys() - folders]
    problems += [f"rules/{folders[code].name}/ has no @rule({code!r}, ...)" for code in folders.keys() - registry]
    for code in sorted(registry.keys() & folders.keys()):
        rule, folder = registry[code], folders[code]
        if folder.name != f"{code}-{rule.name}":
            problems.append(f"rules/{folder.name}/ should be named {code}-{rule.name} (the name in its @rule)")
        try:
            keys = set(toml_loads((folder / "rule.toml").read_text(encoding="utf-8")))
        except ValueError as exc:
            problems.append(f"rules/{folder.name}/rule.toml is not valid TOML: {exc}")
            keys = TOML_KEYS
        if keys != TOML_KEYS:
            problems.append(f"rules/{folder.name}/rule.toml has keys {sorted(keys)}, expected {sorted(TOML_KEYS)}")
        for name in ("doc.md", *FIXTURES):
            if not (folder / name).is_file():
                problems.append(f"rules/{folder.name}/{name} is missing")
        has_fixed = (folder / "fixed.py").is_file()
        if rule.safety == "safe" and not has_fixed:
            problems.append(f"rules/{folder.name}/ needs fixed.py: its fix is safe")
        if rule.fix is None and has_fixed:
            problems.append(f"rules/{folder.name}/fixed.py exists but {code} declares no fix")
    return sorted(problems)


def sources() -> dict[str, Source]:
    """Every rule's metadata from the registry and its folder, in code order."""
    from .rules import load

    problems = disagreements()
    if problems:
        raise ValueError("the rule folders and the registry disagree:\n  " + "\n  ".join(problems))
    registry = load()
    folders = rule_folders()
    out = {}
    for code in sorted(registry):
        rule, folder = registry[code], folders[code]
        data = toml_loads((folder / "rule.toml").read_text(encoding="utf-8"))
        meta = RuleMeta(
            code=code,
            name=rule.name,
            fix=rule.safety or "none",
            summary=data["summary"],
            runtime_fix=data["runtime_fix"],
            doc=(folder / "doc.md").read_text(encoding="utf-8"),
        )
        out[code] = Source(meta, folder, rule.module, rule.fix)
    return out


def _module_path(module: str) -> str:
    return "src/" + module.replace(".", "/") + ".py"


def rule_page(source: Source) -> str:
    meta, folder = source.meta, source.folder
    bad = (folder / "bad.py").read_text(encoding="utf-8")
    good = (folder / "good.py").read_text(encoding="utf-8")
    fix = f"**{meta.fix}**" + (f" (`{_module_path('dupguard.codemods.' + source.fix)}`)" if source.fix else "")
    parts = [
        f"# {meta.name} ({meta.code})\n",
        f"{meta.summary}.\n",
        f"- Fix: {fix}",
        f"- Runtime fix: {meta.runtime_fix}" if meta.runtime_fix else "",
        f"- Defined in: `{_module_path(source.module)}`; fixtures and docs in `rules/{folder.name}/`\n",
        meta.doc.rstrip() + "\n",
        "## Flagged examples (`bad.py`)\n",
        f"```python\n{bad.rstrip()}\n```\n",
        "## Near-misses that stay clean (`good.py`)\n",
        f"```python\n{good.rstrip()}\n```\n",
    ]
    return "\n".join(p for p in parts if p)


def index_page(found: dict[str, Source]) -> str:
    lines = [
        "# Rules\n",
        (
            "Generated from the `@rule` declarations in `src/dupguard/rules/` and the `rules/*/` folders "
            "by `python -m dupguard.docgen`; do not edit by hand.\n"
        ),
        "| code | name | summary | fix | runtime fix | defined in |",
        "|---|---|---|---|---|---|",
    ]
    for source in found.values():
        meta = source.meta
        module = _module_path(source.module).removeprefix("src/dupguard/")
        lines.append(
            f"| [{meta.code}]({meta.code}.md) | {meta.name} | {meta.summary} | {meta.fix} | {meta.runtime_fix} "
            f"| `{module}` |"
        )
    return "\n".join(lines) + "\n"


def _literal(text: str) -> str:
    """A Python string literal in the quotes ``ruff format`` keeps (double, unless the text
    holds more double quotes than single ones), so the generated module is format-clean."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    body = json.dumps(text, ensure_ascii=False)[1:-1]  # escapes \\, \n, control characters and "
    if quote == "'":
        body = body.replace('\\"', '"').replace("'", "\\'")
    return quote + body + quote


def index_module(metas: dict[str, RuleMeta]) -> str:
    lines = [
        '"""Rule metadata for start-up, ``dupguard rules``, ``dupguard rule CODE`` and the reports.',
        "",
        "Generated by ``python -m dupguard.docgen`` from the ``@rule`` declarations in ``dupguard/rules/``",
        "and the ``rules/<CODE>-<name>/`` folders; do not edit by hand. Read through ``dupguard.rulemeta``.",
        '"""',
        "",
        f"# one row per rule, in code order: {', '.join(RuleMeta._fields)}",
        "RULES = (",
    ]
    for meta in metas.values():
        lines.append("    (")
        lines.extend(f"        {_literal(value)}," for value in meta)
        lines.append("    ),")
    lines.append(")")
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    """The generated files, by path relative to the checkout."""
    found = sources()
    metas = {code: source.meta for code, source in found.items()}
    pages = {f"docs/rules/{code}.md": rule_page(source) for code, source in found.items()}
    pages["docs/rules/index.md"] = index_page(found)
    pages[INDEX_MODULE.relative_to(SOURCE_ROOT).as_posix()] = index_module(metas)
    return pages


def main() -> int:
    try:
        files = render()
    except (ValueError, FileNotFoundError) as exc:
        print(f"dupguard.docgen: {exc}", file=sys.stderr)
        return 1
    docs = SOURCE_ROOT / "docs" / "rules"
    docs.mkdir(parents=True, exist_ok=True)
    for stale in docs.glob("*.md"):
        if f"docs/rules/{stale.name}" not in files:
            stale.unlink()
    for name, text in files.items():
        (SOURCE_ROOT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files: docs/rules/ and {INDEX_MODULE.relative_to(SOURCE_ROOT).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
