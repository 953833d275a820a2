"""GitHub Actions workflow commands: one ``::error`` annotation per finding, and per file that
could not be processed (DUP000/DUP001, report.findings), shown on the pull request's diff.

The format is GitHub's (docs.github.com, "Workflow commands for GitHub Actions", setting an
error message): ``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=T::MESSAGE``, with
``%``, CR and LF escaped in the message and, in the properties, ``:`` and ``,`` as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..diagnostics import Diagnostic, FileError
from . import findings

if TYPE_CHECKING:
    from ..config import Settings


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def github(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    out.writelines(
        f"::error file={_escape(d.filename, prop=True)},line={d.row},col={d.column + 1},"
        f"endLine={d.end_row or d.row},endColumn={(d.end_column if d.end_row else d.column) + 1},"
        f"title={d.code}::{_escape(f'{d.filename}:{d.row}:{d.column + 1}: {d.code} {d.message}')}\n"
        for d in findings(diagnostics, errors)
    )
