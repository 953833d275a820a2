"""The seeds' BROKEN snippets are reported with the intended code; their FIXED snippets are clean.

Snippets are in ``tests/data/seeds/``, verbatim where the seed gives whole code, and placed in
the smallest realistic setting (a route, a consumer function) where the seed gives a fragment;
each file says which. Expected findings are marked ``# error: DUPxxx``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dupguard.config import Settings
from dupguard.pipeline import lint_text
from linthelpers import ROOT, expected_markers

SEEDS = sorted((ROOT / "tests" / "data" / "seeds").glob("*.py"))


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_snippet(path: Path) -> None:
    settings = Settings()
    found = {(d.row, d.code) for d in lint_text(str(path), path.read_text(), settings, settings.enabled_codes())}
    expected = expected_markers(path)
    if "_fixed_" in path.name:
        assert not expected and found == set()
    else:
        assert expected, "a BROKEN snippet must mark what it expects"
        assert found == expected
