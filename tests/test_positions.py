"""Positions agree with libcst's PositionProvider on every node of real files."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dupguard.semantic.positions import Positions

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "rules").glob("*/bad.py")) + sorted((ROOT / "tests" / "corpus").glob("*/*.py"))[::10]
VARIANTS = {
    "as is": lambda s: s,
    "CRLF, no final newline": lambda s: s.replace("\n", "\r\n").rstrip(),
    "CR, tabs": lambda s: s.replace("    ", "\t").replace("\n", "\r"),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_every_node_has_libcst_position(path: Path, variant: str) -> None:
    module = cst.parse_module(VARIANTS[variant](path.read_text(encoding="utf-8")))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    ours = Positions(module)
    assert len(expected) > 100
    for node, code_range in expected.items():
        want = (code_range.start.line, code_range.start.column, code_range.end.line, code_range.end.column)
        assert ours.range(node) == want, (type(node).__name__, cst.Module([]).code_for_node(node)[:60])
