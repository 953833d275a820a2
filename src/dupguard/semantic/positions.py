"""Line and column numbers, computed only when a file has something to report.

LibCST's PositionProvider costs about three parses' worth of time on every file; a linter
needs positions only for the few nodes it reports. So positions come from one code
generation pass over the module, run on the first request and only in files with findings.

That pass records character offsets, not LibCST's ``CodePosition`` objects: libcst's own
position state splits every token with a regular expression and builds two objects per
node, which made this pass cost as much as the model builder on files with findings
(bench/RESULTS.md). Offsets become (line, column) by bisecting the line starts of the
generated code, which is the source text itself, for the few nodes asked about.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst counts as a line break


class _Syntactic:
    """``record_syntactic_position``: the node's range without its surrounding whitespace
    (what libcst's ``PositionProvider`` reports), optionally hoisted from child nodes."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self, state: _OffsetState, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc: object) -> None:
        computed = self.state.computed
        start = computed[id(self.start_node)][0] if self.start_node is not None else self.start
        end = computed[id(self.end_node)][1] if self.end_node is not None else self.state.offset
        computed[id(self.node)] = (start, end)


class _OffsetState(CodegenState):
    """A codegen state that keeps the running character offset and each node's (start, end).

    Keyed by ``id(node)``: a CSTNode's ``__hash__`` is a Python method (identity anyway), and
    this pass hashes every node twice. The tree outlives the table, so ids are not reused."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.computed: dict[int, tuple[int, int]] = {}
        self._stack: list[int] = []
        self.popped = ""

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        # like libcst: the token goes, the position stays (the module's range ends after it)
        if self.tokens:
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        key = id(node)
        if key not in self.computed:  # a syntactic position recorded inside wins, as in libcst
            self.computed[key] = (start, self.offset)

    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class Positions:
    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._computed: dict[int, tuple[int, int]] | None = None
        self._line_starts: list[int] = []

    def _compute(self) -> dict[int, tuple[int, int]]:
        state = _OffsetState(self._module)
        self._module._codegen(state)
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer("".join(state.tokens) + state.popped)]
        self._computed = state.computed
        return state.computed

    def _point(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1]

    def range(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        """(row, column, end_row, end_column): rows 1-based, columns 0-based."""
        computed = self._computed if self._computed is not None else self._compute()
        start, end = computed[id(node)]
        return self._point(start) + self._point(end)

    def line(self, node: cst.CSTNode) -> int:
        return self.range(node)[0]
