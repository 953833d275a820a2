"""Positions agree with libcst's PositionProvider on every node of real files, with the libcst
shortcuts on (one offset-recording codegen pass, ``dupguard.cstfast``) and off."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from cstmodes import libcst_mode  # noqa: F401
from dupguard.semantic.positions import Positions

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "rules").glob("*/bad.py")) + sorted((ROOT / "tests" / "corpus").glob("*/*.py"))[::10]
VARIANTS = {
    "as is": lambda s: s,
    "CRLF, no final newline": lambda s: s.replace("\n", "\r\n").rstrip(),
    "CR, tabs": lambda s: s.replace("    ", "\t").replace("\n", "\r"),
}


@pytest.mark.usefixtures("libcst_mode")
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


def test_a_libcst_without_codegenstate_gets_libcsts_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offsets pass subclasses a private class; a libcst that moved it costs speed, not
    correctness: positions come from PositionProvider."""
    import libcst._nodes.internal

    from dupguard import cstfast

    module = cst.parse_module(FILES[0].read_text(encoding="utf-8"))
    monkeypatch.setattr(cstfast, "_enabled", True)
    assert cstfast.offsets(module) is not None
    monkeypatch.delattr(libcst._nodes.internal, "CodegenState")
    cstfast._offset_state_type.cache_clear()
    try:
        assert cstfast.offsets(module) is None
        call = module.body[-1]
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)[call]
        assert Positions(module).range(call) == (
            expected.start.line,
            expected.start.column,
            expected.end.line,
            expected.end.column,
        )
    finally:
        cstfast._offset_state_type.cache_clear()
