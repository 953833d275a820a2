"""GitHub Actions workflow commands: one ``::error`` annotation per finding."""

from __future__ import annotations

from typing import TextIO

from ..diagnostics import Diagnostic, FileError


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def github(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    out.writelines(
        f"::error file={_escape(d.filename, prop=True)},line={d.row},col={d.column + 1},"
        f"endLine={d.end_row or d.row},endColumn={(d.end_column if d.end_row else d.column) + 1},"
        f"title={d.code}::{_escape(f'{d.filename}:{d.row}:{d.column + 1}: {d.code} {d.message}')}\n"
        for d in diagnostics
    )
