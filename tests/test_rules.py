"""Tests generated from the ``rules/<CODE>-<name>/`` folders.

Every folder's ``bad.py`` must report exactly its ``# error: DUPxxx`` lines (and only that
rule's code), ``good.py`` must be clean, a ``# noqa`` copy of ``bad.py`` must be clean, and
``fixed.py`` (when present) must be clean for its rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dupguard.config import Settings
from dupguard.pipeline import lint_text
from linthelpers import expected_markers, rule_folders

FOLDERS = rule_folders()
IDS = [f.name for f in FOLDERS]


def _code(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


def _lint(path: Path, text: str | None = None, codes: frozenset[str] | None = None):
    text = path.read_text(encoding="utf-8") if text is None else text
    settings = Settings()
    return lint_text(str(path), text, settings, codes or settings.enabled_codes())


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_bad_reports_exactly_the_marked_lines(folder: Path) -> None:
    code = _code(folder)
    expected = {(row, c) for row, c in expected_markers(folder / "bad.py") if c == code}
    assert expected, f"{folder.name}/bad.py has no '# error: {code}' marker"
    found = {(d.row, d.code) for d in _lint(folder / "bad.py", codes=frozenset({code}))}
    assert found == expected


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_good_is_clean(folder: Path) -> None:
    assert _lint(folder / "good.py", codes=frozenset({_code(folder)})) == []


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_noqa_copy_of_bad_is_clean(folder: Path) -> None:
    code = _code(folder)
    lines = (folder / "bad.py").read_text(encoding="utf-8").splitlines()
    marked = {row for row, c in expected_markers(folder / "bad.py") if c == code}
    text = (
        "\n".join(
            line.split("# error:")[0].rstrip() + f"  # noqa: {code}" if row in marked else line
            for row, line in enumerate(lines, start=1)
        )
        + "\n"
    )
    assert _lint(folder / "bad.py", text, frozenset({code})) == []


@pytest.mark.parametrize(
    "folder",
    [f for f in FOLDERS if (f / "fixed.py").exists()],
    ids=[f.name for f in FOLDERS if (f / "fixed.py").exists()],
)
def test_fixed_is_clean_and_compiles(folder: Path) -> None:
    source = (folder / "fixed.py").read_text(encoding="utf-8")
    compile(source, str(folder / "fixed.py"), "exec")
    assert _lint(folder / "fixed.py", codes=frozenset({_code(folder)})) == []


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_folder_doc_has_every_section(folder: Path) -> None:
    doc = (folder / "doc.md").read_text(encoding="utf-8")
    for heading in (
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "Options",
        "References",
    ):
        assert f"## {heading}" in doc, f"{folder.name}/doc.md lacks '## {heading}'"
