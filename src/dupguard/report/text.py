"""Human formats: ``full`` (code frame + fix hint), ``concise``, ``grouped``, statistics.

A finding with a fix that ``dupguard fix`` would apply under the run's settings is marked
``[*]`` after its code, and the summary ends with how many there are, as ruff does ("[*] 2
fixable with `dupguard fix` (1 hidden fix can be enabled with `--unsafe-fixes`)."). A file
that could not be processed is listed among the findings (DUP000/DUP001, report.findings)
and counted apart in the summary ("1 file could not be processed.").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import groupby
from typing import TYPE_CHECKING, TextIO

from ..diagnostics import NOT_PROCESSED, RESERVED_CODES, Diagnostic, FileError
from ..rulemeta import all_rules
from . import findings

if TYPE_CHECKING:
    from ..config import Settings


def _read_lines(filename: str, cell: int = 0) -> list[str]:
    """The lines the finding's rows count: the file's, or a notebook cell's (as written)."""
    try:
        if cell:
            from ..notebook import load

            with open(filename, "rb") as binary:
                return load(binary.read()).cell_lines(cell)
        with open(filename, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except (OSError, ValueError):  # gone, or no longer a notebook (SourceError is a ValueError)
        return []


class FixMarks:
    """Which findings ``dupguard fix`` would fix with the run's settings: a fix (``Diagnostic.fix``,
    built or only marked: pipeline.fix_mark), a code that ``fixable``/``unfixable`` allow, and
    safe, or unsafe with ``--unsafe-fixes``. An unsafe fix without it is *hidden*."""

    def __init__(self, settings: Settings | None) -> None:
        from ..config import Settings, _selected

        self.settings = settings if settings is not None else Settings()
        self._selected = _selected

    def _fix(self, d: Diagnostic) -> str | None:
        if d.fix is None or not self._selected(d.code, self.settings.fixable, self.settings.unfixable):
            return None
        return d.fix.applicability

    def marked(self, d: Diagnostic) -> bool:
        applicability = self._fix(d)
        return applicability == "safe" or (applicability is not None and self.settings.unsafe_fixes)

    def hidden(self, d: Diagnostic) -> bool:
        return self._fix(d) == "unsafe" and not self.settings.unsafe_fixes

    def summary(self, diagnostics: Iterable[Diagnostic]) -> str:
        """The closing line about fixes (empty: none to speak of)."""
        items = list(diagnostics)
        fixable = sum(self.marked(d) for d in items)
        hidden = sum(self.hidden(d) for d in items)
        extra = f" ({_n(hidden, 'hidden fix', 'hidden fixes')} can be enabled with `--unsafe-fixes`)" if hidden else ""
        if fixable:
            command = "dupguard fix --unsafe-fixes" if self.settings.unsafe_fixes else "dupguard fix"
            return f"[*] {fixable} fixable with `{command}`{extra}."
        return f"No fixes available{extra}." if hidden else ""


def position(d: Diagnostic) -> str:
    """``path:row:col``, or ``path:cell N:row:col`` in a notebook (ruff's notation)."""
    cell = f"cell {d.cell}:" if d.cell else ""
    return f"{d.filename}:{cell}{d.row}:{d.column + 1}"


def _headline(d: Diagnostic, marks: FixMarks | None = None) -> str:
    mark = "[*] " if marks is not None and marks.marked(d) else ""
    return f"{position(d)}: {d.code} {mark}{d.message}"


def _lines(lines_by_file: dict[tuple[str, int], list[str]], d: Diagnostic) -> list[str]:
    """The lines a finding's rows count (a notebook cell's in a notebook), read once per run."""
    key = (d.filename, d.cell)
    if key not in lines_by_file:
        lines_by_file[key] = _read_lines(*key)
    return lines_by_file[key]


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def summary(found: int, errors: int, *, fixed: int | None = None, diff: bool = False, unsafe_hidden: int = 0) -> str:
    """The closing line of a text report, for ``check`` and ``fix`` alike (empty: nothing to say).

    ``found``: findings (for ``fix``, those that remain); ``errors``: files and paths that
    could not be processed; ``fixed``: None for ``check``, else fixes made (or, with ``diff``,
    that would be made); ``unsafe_hidden``: findings whose fix needs ``--unsafe-fixes``.
    "All checks passed!" only when nothing was found and every file was processed.
    """
    if fixed is None:
        parts = [f"Found {_n(found, 'error')}."] if found else []
    elif fixed or found:
        verb, remain = ("Would fix", "would remain") if diff else ("Fixed", "remaining")
        parts = [f"{verb} {_n(fixed, 'finding')}, {_n(found, 'finding')} {remain}."]
    else:
        parts = []
    if not parts and not errors:
        parts.append("All checks passed!")
    if unsafe_hidden:
        parts.append(
            f"{unsafe_hidden} more fix{'es' if unsafe_hidden != 1 else ''} available with `--unsafe-fixes`"
            f" ({'it' if unsafe_hidden == 1 else 'they'} may change behaviour; review the diff)."
        )
    if errors:
        parts.append(f"{_n(errors, 'file')} could not be processed.")
    return " ".join(parts)


def file_errors(errors: list[FileError], err: TextIO) -> None:
    """One line per file or path that could not be processed, naming it and why."""
    err.writelines(f"dupguard: error: {error}\n" for error in errors)


def with_notes(
    diagnostics: list[Diagnostic],
    notes: dict[tuple[str, int, int, str], str],
    out: TextIO,
    errors: list[FileError] | None = None,
) -> None:
    """Concise lines (with the files that could not be processed, when ``errors`` are given),
    each followed by why the finding has no automatic fix when there is a reason."""
    for d in findings(diagnostics, errors or []):
        out.write(_headline(d) + "\n")
        why = notes.get((d.filename, d.row, d.column, d.code))
        if why:
            out.write(f"  note: no automatic fix: {why}\n")


def _summary(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, marks: FixMarks) -> None:
    for line in (summary(len(diagnostics), len(errors)), marks.summary(diagnostics)):
        if line:
            out.write(line + "\n")


def full(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None) -> None:
    metas = all_rules()
    marks = FixMarks(settings)
    lines_by_file: dict[tuple[str, int], list[str]] = {}
    for d in findings(diagnostics, errors):
        out.write(_headline(d, marks) + "\n")
        if d.code in RESERVED_CODES:
            if d.code != NOT_PROCESSED:  # a file that could not be read is not read again for a frame
                _frame(d, _lines(lines_by_file, d), out)
            out.write(f"  = no rule could check this file; see `dupguard rule {d.code}` ({RESERVED_CODES[d.code]})\n\n")
            continue
        _frame(d, _lines(lines_by_file, d), out)
        meta = metas.get(d.code)
        if meta is not None:
            hint = f"help: {meta.runtime_fix}; " if meta.runtime_fix else ""
            out.write(f"  = {hint}see `dupguard rule {d.code}` ({meta.name})\n")
        out.write("\n")
    _summary(diagnostics, errors, out, marks)


def _frame(d: Diagnostic, lines: list[str], out: TextIO) -> None:
    """The lines around a finding, with a caret under it."""
    width = len(str(d.row + 1))
    for row in range(max(1, d.row - 1), min(len(lines), d.row + 1) + 1):
        out.write(f"  {row:>{width}} | {lines[row - 1]}\n")
        if row == d.row:
            end = d.end_column if d.end_row == d.row and d.end_column > d.column else len(lines[row - 1])
            out.write(f"  {'':>{width}} | {' ' * d.column}{'^' * max(1, end - d.column)}\n")


def concise(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    marks = FixMarks(settings)
    out.writelines(_headline(d, marks) + "\n" for d in findings(diagnostics, errors))
    _summary(diagnostics, errors, out, marks)


def grouped(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    marks = FixMarks(settings)
    for filename, items in groupby(findings(diagnostics, errors), key=lambda d: d.filename):
        out.write(f"{filename}:\n")
        out.writelines(
            f"  {f'cell {d.cell}:' if d.cell else ''}{d.row}:{d.column + 1} {d.code} {'[*] ' if marks.marked(d) else ''}"
            f"{d.message}\n"
            for d in items
        )
        out.write("\n")
    _summary(diagnostics, errors, out, marks)


def statistics(diagnostics: list[Diagnostic], out: TextIO) -> None:
    metas = all_rules()
    counts = Counter(d.code for d in diagnostics)
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        name = metas[code].name if code in metas else ""
        out.write(f"{count:>5}\t{code}\t{name}\n")
