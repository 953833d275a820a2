"""Human formats: ``full`` (code frame + fix hint), ``concise``, ``grouped``, statistics."""

from __future__ import annotations

from collections import Counter
from itertools import groupby
from typing import TextIO

from ..diagnostics import Diagnostic, FileError
from ..rulemeta import all_rules


def _read_lines(filename: str) -> list[str]:
    try:
        with open(filename, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def _headline(d: Diagnostic) -> str:
    return f"{d.filename}:{d.row}:{d.column + 1}: {d.code} {d.message}"


def _summary(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    if diagnostics:
        out.write(f"Found {len(diagnostics)} error{'s' if len(diagnostics) != 1 else ''}.\n")
    elif not errors:
        out.write("All checks passed!\n")


def full(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    metas = all_rules()
    lines_by_file: dict[str, list[str]] = {}
    for d in diagnostics:
        lines = lines_by_file.setdefault(d.filename, _read_lines(d.filename))
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
        out.writelines(f"  {d.row}:{d.column + 1} {d.code} {d.message}\n" for d in items)
        out.write("\n")
    _summary(diagnostics, errors, out)


def statistics(diagnostics: list[Diagnostic], out: TextIO) -> None:
    metas = all_rules()
    counts = Counter(d.code for d in diagnostics)
    for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        name = metas[code].name if code in metas else ""
        out.write(f"{count:>5}\t{code}\t{name}\n")
