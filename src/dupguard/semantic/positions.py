"""Line and column numbers, computed only when a file has something to report.

LibCST's PositionProvider costs about three parses' worth of time on every file; a linter
needs positions only for the few nodes it reports. So positions come from one code
generation pass over the module, run on the first request and only in files with findings.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata.position_provider import PositionProvidingCodegenState


class _Sink:
    """Stands in for the metadata provider: the codegen state only writes to ``_computed``."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, object] = {}


class Positions:
    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._computed: dict[cst.CSTNode, object] | None = None

    def range(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        """(row, column, end_row, end_column): rows 1-based, columns 0-based."""
        if self._computed is None:
            sink = _Sink()
            state = PositionProvidingCodegenState(
                default_indent=self._module.default_indent,
                default_newline=self._module.default_newline,
                provider=sink,  # type: ignore[arg-type]
            )
            self._module._codegen(state)
            self._computed = sink._computed
        code_range = self._computed[node]
        return (code_range.start.line, code_range.start.column,  # type: ignore[attr-defined]
                code_range.end.line, code_range.end.column)  # type: ignore[attr-defined]

    def line(self, node: cst.CSTNode) -> int:
        return self.range(node)[0]
