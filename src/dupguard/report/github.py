"""GitHub Actions workflow commands: one ``::error`` annotation per finding."""

from __future__ import annotations

from typing import TextIO

from ..diagnostics import Diagnostic, FileError


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _where(d: Diagnostic) -> str:
    """The annotation's position. A notebook's cell row is no line of the ``.ipynb`` file, so
    like ruff it points at line 1 (clearly a fallback); the message names the cell and row."""
    if d.cell:
        return "line=1,col=1,endLine=1,endColumn=1"
    return (
        f"line={d.row},col={d.column + 1},"
        f"endLine={d.end_row or d.row},endColumn={(d.end_column if d.end_row else d.column) + 1}"
    )


def github(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    from .text import position

    out.writelines(
        f"::error file={_escape(d.filename, prop=True)},{_where(d)},"
        f"title={d.code}::{_escape(f'{position(d)}: {d.code} {d.message}')}\n"
        for d in diagnostics
    )
