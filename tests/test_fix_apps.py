"""The tutorial-style apps of bench/e2e/apps/, fixed by ``dupguard fix --unsafe-fixes`` alone:
nothing left for ``dupguard check``, nothing new for ruff's default rules, and the fixed code the
docs show (the rule docs' ``## Fix safety`` sections, docs/runtime.md section 6) is what the fix makes.

The apps are fixed in-process with every rule, as ``fix --unsafe-fixes --isolated`` does;
bench/e2e/run.py and tests/test_e2e.py then serve them (OpenAI Agents here, both frameworks in
the full matrix).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from dupguard.config import Settings
from dupguard.pipeline import lint_text
from dupguard.rulemeta import rule_codes

ROOT = Path(__file__).resolve().parent.parent
APPS = sorted((ROOT / "bench" / "e2e" / "apps").glob("*_before.py"))
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


@cache
def fixed(app: Path) -> str:
    from dupguard.fixer import fix_bytes

    _outcome, data, error = fix_bytes(app.name, app.read_bytes(), Settings(), frozenset(rule_codes()), unsafe=True)
    assert error is None
    return data.decode("utf-8")


def _ruff(path: Path) -> list[str]:
    """The codes ``ruff check --isolated`` (its default rules) reports on ``path``, run from the
    file's directory as in a user's project (where ``dupguard`` is an installed package, not
    this checkout's first-party code), sorted."""
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--output-format", "json", path.name],
        capture_output=True,
        text=True,
        cwd=path.parent,
    )
    return sorted(finding["code"] for finding in json.loads(out.stdout))


@pytest.mark.parametrize("app", APPS, ids=lambda p: p.stem)
def test_the_fixed_app_lints_clean_and_adds_nothing_ruff_flags(app: Path, tmp_path: Path) -> None:
    text = fixed(app)
    assert text != app.read_text(encoding="utf-8")
    compile(text, app.name, "exec")
    assert lint_text(app.name, text, Settings(), frozenset(rule_codes())) == []
    (tmp_path / "fixed").mkdir()
    (tmp_path / "before").mkdir()
    (tmp_path / "fixed" / app.name).write_text(text, encoding="utf-8")
    (tmp_path / "before" / app.name).write_text(app.read_text(encoding="utf-8"), encoding="utf-8")
    # the tutorial's own `except Exception:` (and, for one, its import layout) are the author's
    assert _ruff(tmp_path / "fixed" / app.name) == _ruff(tmp_path / "before" / app.name)


RULE_EXAMPLES = sorted((ROOT / "rules").glob("DUP*/bad.py"))


@pytest.mark.parametrize("bad", RULE_EXAMPLES, ids=lambda p: p.parent.name.split("-")[0])
def test_no_fix_adds_anything_ruff_flags(bad: Path, tmp_path: Path) -> None:
    """Every rule's example, fixed with every rule as ``fix --unsafe-fixes`` does: ruff's default
    rules find nothing in the fixed file that they did not find in the original (an unused
    variable or import, a ``global`` nothing assigns, an ``if`` nested in another)."""
    from collections import Counter

    text = fixed(bad)
    for where, code in (("before", bad.read_text(encoding="utf-8")), ("fixed", text)):
        (tmp_path / where).mkdir()
        (tmp_path / where / "app.py").write_text(code, encoding="utf-8")
    added = Counter(_ruff(tmp_path / "fixed" / "app.py")) - Counter(_ruff(tmp_path / "before" / "app.py"))
    assert not added, dict(added)


def _statements(code: str) -> list[str]:
    """Each top-level statement of ``code``, as an AST dump (layout and comments ignored)."""
    return [ast.dump(node) for node in ast.parse(code).body]


def _doc_blocks() -> list[tuple[str, str, Path | None]]:
    """(where, code, the rule's fixed.py or None) for every python block the fix docs show."""
    out = []
    for folder in ("DUP101-shared-agent-singleton", "DUP102-shared-memory-singleton", "DUP501-naive-agent-retry"):
        doc = (ROOT / "rules" / folder / "doc.md").read_text(encoding="utf-8")
        section = doc[doc.index("## Fix safety\n") : doc.index("\n## ", doc.index("## Fix safety\n") + 1)]
        out += [(f"{folder}/doc.md", code, ROOT / "rules" / folder / "fixed.py") for code in BLOCK.findall(section)]
    runtime = (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    start = runtime.index("## 6. What `dupguard fix` makes")
    section = runtime[start : runtime.index("\n---\n", start)]
    out += [("docs/runtime.md §6", code, None) for code in BLOCK.findall(section)]
    return out


@pytest.mark.parametrize(("where", "code", "rule_fixed"), _doc_blocks(), ids=lambda v: str(v)[:40])
def test_the_fixed_code_in_the_docs_is_what_the_fix_makes(where: str, code: str, rule_fixed: Path | None) -> None:
    made = {dump for app in APPS for dump in _statements(fixed(app))}
    if rule_fixed is not None:
        made |= set(_statements(rule_fixed.read_text(encoding="utf-8")))
    shown = _statements(code)
    assert shown, where
    missing = [dump[:120] for dump in shown if dump not in made]
    assert missing == [], f"{where}: statements the fix does not make"


def test_the_runtime_doc_shows_each_fixed_app_whole() -> None:
    """docs/runtime.md section 6 shows each fixed app complete (its module docstring aside), in
    order, and it lints clean: the reader sees the whole handler the fix makes, not excerpts."""
    shown = [code for where, code, _ in _doc_blocks() if where.startswith("docs/runtime.md")]
    assert len(shown) == len(APPS)
    for app, code in zip(sorted(APPS, key=lambda p: p.stem != "openai_agents_before"), shown):
        whole = _statements(fixed(app))
        assert ast.get_docstring(ast.parse(fixed(app))) is not None
        assert _statements(code) == whole[1:], app.name
        assert lint_text(app.name, code, Settings(), frozenset(rule_codes())) == []


def test_the_docs_show_both_frameworks() -> None:
    blocks = _doc_blocks()
    runtime = "\n".join(code for where, code, _ in blocks if where.startswith("docs/runtime.md"))
    assert "OpenAIAgentsGuard" in runtime and "LlamaIndexGuard" in runtime
    rule_docs = [code for where, code, _ in blocks if where.startswith("DUP501")]
    assert any("_guard.run(agent, req.message" in code for code in rule_docs)
    assert any("_guard.run(agent, user_msg=req.message" in code for code in rule_docs)
