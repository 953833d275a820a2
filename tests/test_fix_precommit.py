"""The ``dupguard-fix`` pre-commit hook, through real ``pre-commit try-repo`` (the fixtures of
``test_precommit.py``): it fixes a throwaway repository's bad file and says it changed it."""

from __future__ import annotations

from pathlib import Path

from linthelpers import RULES_DIR
from test_fix import unmarked_bad
from test_precommit import _target, _try_repo, pytestmark, repo_under_test  # noqa: F401  (fixture)


def test_dupguard_fix_hook_fixes_the_file_and_reports_the_change(tmp_path: Path, repo_under_test: Path) -> None:  # noqa: F811
    folder = RULES_DIR / "DUP301-duplicate-tool"
    target = _target(
        tmp_path,
        {
            # the example also trips DUP302 (both tools are named "search"), which has no fix
            "pyproject.toml": '[tool.dupguard]\nselect = ["DUP301"]\n',
            "tools_app.py": unmarked_bad(folder),
            "clean_app.py": (folder / "good.py").read_text(),
        },
    )
    first = _try_repo(repo_under_test, target, "dupguard-fix", "tools_app.py", "clean_app.py")
    out = first.stdout.decode()
    assert first.returncode == 1, out + first.stderr.decode()
    assert "files were modified by this hook" in out
    assert "Fixed 4 findings:" in out and "tools_app.py:13:23: DUP301 Remove the repeated `search_tool`" in out
    assert (target / "tools_app.py").read_text() == (folder / "fixed.py").read_text()
    assert (target / "clean_app.py").read_text() == (folder / "good.py").read_text()
    second = _try_repo(repo_under_test, target, "dupguard-fix", "tools_app.py", "clean_app.py")
    assert second.returncode == 0 and "Passed" in second.stdout.decode(), second.stdout.decode()
