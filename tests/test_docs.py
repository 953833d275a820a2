"""Generated docs are up to date; the README and CI run the same test command."""

from __future__ import annotations

from dupguard.docgen import render
from linthelpers import ROOT


def test_generated_rule_docs_are_up_to_date() -> None:
    files = render()
    pages = {name: text for name, text in files.items() if name.startswith("docs/rules/")}
    on_disk = {f"docs/rules/{p.name}": p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "rules").glob("*.md")}
    stale = sorted(name for name in set(pages) | set(on_disk) if pages.get(name) != on_disk.get(name))
    assert not stale, f"docs/rules is stale ({', '.join(stale)}): run `python -m dupguard.docgen`"


def test_readme_commands_are_the_ci_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = "python -m pip install -e '.[test]' && python -m pytest"
    assert test_command in readme and test_command in ci
    assert "dupguard check examples/" in readme
