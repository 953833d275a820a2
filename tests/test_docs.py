"""Codes, docs and the registry agree; generated docs are up to date."""

from __future__ import annotations

from dupguard.docgen import render
from dupguard.rulemeta import all_rules
from dupguard.rules import load
from linthelpers import ROOT, rule_folders


def test_generated_rule_docs_are_up_to_date() -> None:
    docs = ROOT / "docs" / "rules"
    pages = render()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in docs.glob("*.md")}
    stale = sorted(name for name in set(pages) | set(on_disk) if pages.get(name) != on_disk.get(name))
    assert not stale, f"docs/rules is stale ({', '.join(stale)}): run `python -m dupguard.docgen`"


def test_every_folder_has_an_implementation_and_back() -> None:
    implemented = set(load())
    documented = set(all_rules())
    assert implemented == documented
    assert len(rule_folders()) == len(documented)


def test_readme_commands_are_the_ci_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = "python -m pip install -e '.[test]' && python -m pytest"
    assert test_command in readme and test_command in ci
    assert "dupguard check examples/" in readme
