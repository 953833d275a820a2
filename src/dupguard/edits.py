"""Replacements → text edits → new text: the one way a rule's fix becomes a change.

Rules return fixes as LibCST replacements, ``(node, new node or libcst.RemoveFromParent())``;
they never edit text. Here a replacement is applied to the tree, the result printed, and the
difference to the original turned into minimal text edits. Those edits are what ``fix``
applies (fixer.py) and what ``check --output-format json`` shows as each finding's ``fix``
(:class:`ReportFixes`), so the two cannot disagree (tests/test_fix.py:
``test_json_edits_reproduce_fixed``).
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from .diagnostics import Edit, Fix

if TYPE_CHECKING:
    import libcst as cst

    from .rules import Finding


class TextEdit(NamedTuple):
    """Replace ``code[start:end]`` with ``content`` (offsets into ``module.code``)."""

    start: int
    end: int
    content: str


def applicability(code: str) -> str | None:
    """``"safe"``, ``"unsafe"`` or None (no fix), from the rule's ``rule.toml``."""
    from .rulemeta import all_rules

    meta = all_rules().get(code)
    return meta.fix if meta is not None and meta.fix in ("safe", "unsafe") else None


def replacement_edits(module: cst.Module, replacement: tuple, old_code: str | None = None) -> tuple[TextEdit, ...]:
    """The minimal text edits that turn ``module`` into ``module`` with ``replacement`` applied
    (``old_code``: ``module.code`` when the caller has it, to print the module once)."""
    import libcst as cst

    node, new = replacement
    if node is module:
        new_module = new
    elif isinstance(new, cst.RemovalSentinel):
        new_module = module.deep_remove(node)
    else:
        new_module = module.deep_replace(node, new)
    if not isinstance(new_module, cst.Module):
        raise TypeError("the replacement removed the whole module")
    old = module.code if old_code is None else old_code
    return text_edits(old, new_module.code)


def text_edits(old: str, new: str) -> tuple[TextEdit, ...]:
    """Line-level diff, each changed hunk trimmed to the characters that differ."""
    if old == new:
        return ()
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    starts = line_starts(old)
    edits = []
    matcher = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[head + i1], starts[head + i2]
        old_part, new_part = old[start:end], "".join(b[head + j1 : head + j2])
        prefix = 0
        limit = min(len(old_part), len(new_part))
        while prefix < limit and old_part[prefix] == new_part[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and old_part[-1 - suffix] == new_part[-1 - suffix]:
            suffix += 1
        edits.append(TextEdit(start + prefix, end - suffix, new_part[prefix : len(new_part) - suffix]))
    return tuple(edits)


def conflicts(edits: Iterable[TextEdit], taken: set[TextEdit]) -> bool:
    """Does any of ``edits`` touch (overlap or abut) an edit already taken? An identical edit,
    such as the same import added by two fixes, is no conflict: it is applied once."""
    for edit in edits:
        for other in taken:
            if edit == other:
                continue
            if edit.start <= other.end and other.start <= edit.end:
                return True
    return False


def apply_edits(code: str, edits: Iterable[TextEdit]) -> str:
    """``code`` with non-conflicting ``edits`` applied (each distinct edit once)."""
    for edit in sorted(set(edits), reverse=True):
        code = code[: edit.start] + edit.content + code[edit.end :]
    return code


def line_starts(code: str) -> list[int]:
    """The offset at which each line of ``code`` starts, plus one past the end."""
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def row_col(starts: list[int], offset: int) -> tuple[int, int]:
    """An offset → (1-based row, 0-based column), given :func:`line_starts`."""
    index = bisect.bisect_right(starts, offset) - 1
    index = min(index, len(starts) - 1)
    return index + 1, offset - starts[index]


class ReportFixes:
    """The report's ``Fix`` for each finding of one parsed module.

    One per module: the module's text and line starts are computed once for all its
    findings (printing a module costs about as much as a rule), and nothing outlives it.
    """

    def __init__(self, module: cst.Module, code: str | None = None) -> None:
        self.module = module
        self._code = code
        self._starts: list[int] | None = None

    @property
    def code(self) -> str:
        if self._code is None:
            self._code = self.module.code
        return self._code

    def fix(self, code: str, finding: Finding) -> Fix | None:
        """Applicability, message and row/column edits; None when the rule has no fix here."""
        kind = applicability(code)
        if kind is None or finding.replacement is None:
            return None
        try:
            edits = replacement_edits(self.module, finding.replacement, self.code)
        except Exception:
            return None
        if not edits:
            return None
        if self._starts is None:
            self._starts = line_starts(self.code)
        out = []
        for edit in edits:
            row, col = row_col(self._starts, edit.start)
            end_row, end_col = row_col(self._starts, edit.end)
            out.append(Edit(edit.content, row, col, end_row, end_col))
        return Fix(kind, finding.fix_message or "Apply the fix", tuple(out))
