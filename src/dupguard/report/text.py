"""Human formats: ``full`` (code frame + fix hint), ``concise``, ``grouped``, statistics."""

from __future__ import annotations

from collections import Counter
from itertools import groupby
from typing import TextIO

from ..diagnostics import Diagnostic, FileError
from ..rulemeta import all_rules


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


def position(d: Diagnostic) -> str:
    """``path:row:col``, or ``path:cell N:row:col`` in a notebook (ruff's notation)."""
    cell = f"cell {d.cell}:" if d.cell else ""
    return f"{d.filename}:{cell}{d.row}:{d.column + 1}"


def _headline(d: Diagnostic) -> str:
    return f"{position(d)}: {d.code} {d.message}"


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


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


def with_notes(diagnostics: list[Diagnostic], notes: dict[tuple[str, int, int, str], str], out: TextIO) -> None:
    """Concise lines, each followed by why the finding has no automatic fix when there is a reason."""
    for d in diagnostics:
        out.write(_headline(d) + "\n")
        why = notes.get((d.filename, d.row, d.column, d.code))
        if why:
            out.write(f"  note: no automatic fix: {why}\n")


def _summary(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    line = summary(len(diagnostics), len(errors))
    if line:
        out.write(line + "\n")


def full(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    metas = all_rules()
    lines_by_file: dict[tuple[str, int], list[str]] = {}
    for d in diagnostics:
        key = (d.filename, d.cell)
        if key not in lines_by_file:
            lines_by_file[key] = _read_lines(*key)
        lines = lines_by_file[key]
        out.write(_headline(d) + "\n")
        width = len(str(d.row + 1))
        for row in range(max(1, d.row - 1), min(len(lines), d.row + 1) + 1):
            out.write(f"  {row:>{width}} | {lines[row - 1]}\n")
            if row == d.row:
                end = d.end_column if d.end_row == d.row and d.end_column > d.column else len(lines[row - 1])
                out.write(f"  {'':>{width}} | {' ' * d.column}{'^' * max(1, end - d.column)}\n")
        meta = metas.get(d.code)
        if meta is not None:
            hint = f"help: {meta.runtime_fix}; " if meta.runtime_fix else ""
            out.write(f"  = {hint}see `dupguard rule {d.code}` ({meta.name})\n")
        out.write("\n")
    _summary(diagnostics, errors, out)


def concise(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    out.writelines(_headline(d) + "\n" for d in diagnostics)
    _summary(diagnostics, errors, out)


def grouped(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    for filename, items in groupby(diagnostics, key=lambda d: d.filename):
        out.write(f"{filename}:\n")
        out.writelines(
            f"  {f'cell {d.cell}:' if d.cell else ''}{d.row}:{d.column + 1} {d.code} {d.message}\n" for d in items
        )
        out.write("\n")
    _summary(diagnostics, errors, out)


def statistics(diagnostics: list[Diagnostic], out: TextIO) -> None:
    metas = all_rules()
    counts = Counter(d.code for d in diagnostics)
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        name = metas[code].name if code in metas else ""
        out.write(f"{count:>5}\t{code}\t{name}\n")
