"""Line and column numbers, computed only when a file has something to report.

LibCST's PositionProvider costs about three parses' worth of time on every file; a linter
needs positions only for the few nodes it reports. So positions are computed on the first
request, which comes only in files with findings, and they are exactly ``PositionProvider``'s
(tests/test_positions.py checks every node of real files).

By default they come from one code-generation pass that records character offsets
(``dupguard.cstfast.offsets``, a shortcut through libcst's internals): libcst's own position
state splits every token with a regular expression and builds two objects per node, which
made this pass cost as much as the model builder on files with findings (bench/RESULTS.md).
Offsets become (line, column) by bisecting the line starts of the generated code, which is
the source text itself, for the few nodes asked about. With ``DUPGUARD_PLAIN_LIBCST=1`` they
come from ``MetadataWrapper(...).resolve(PositionProvider)``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

import libcst as cst

from .. import cstfast

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst counts as a line break

Range = tuple[int, int, int, int]


class Positions:
    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._find: Callable[[cst.CSTNode], Range] | None = None

    def range(self, node: cst.CSTNode) -> Range:
        """(row, column, end_row, end_column): rows 1-based, columns 0-based."""
        find = self._find if self._find is not None else self._compute()
        return find(node)

    def line(self, node: cst.CSTNode) -> int:
        return self.range(node)[0]

    def _compute(self) -> Callable[[cst.CSTNode], Range]:
        found = cstfast.offsets(self._module) if cstfast.enabled() else None
        self._find = self._from_offsets(*found) if found is not None else self._from_position_provider()
        return self._find

    @staticmethod
    def _from_offsets(computed: dict[int, tuple[int, int]], code: str) -> Callable[[cst.CSTNode], Range]:
        line_starts = [0] + [m.end() for m in _NEWLINE.finditer(code)]

        def point(offset: int) -> tuple[int, int]:
            line = bisect_right(line_starts, offset)
            return line, offset - line_starts[line - 1]

        def find(node: cst.CSTNode) -> Range:
            start, end = computed[id(node)]
            return point(start) + point(end)

        return find

    def _from_position_provider(self) -> Callable[[cst.CSTNode], Range]:
        from libcst.metadata import MetadataWrapper, PositionProvider

        ranges = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)

        def find(node: cst.CSTNode) -> Range:
            r = ranges[node]
            return r.start.line, r.start.column, r.end.line, r.end.column

        return find
