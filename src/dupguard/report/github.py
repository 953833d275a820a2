"""GitHub Actions workflow commands: one ``::error`` annotation per finding, and per file that
could not be processed (DUP000/DUP001, report.findings), shown on the pull request's diff.

The format is GitHub's (docs.github.com, "Workflow commands for GitHub Actions", setting an
error message): ``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=T::MESSAGE``, with
``%``, CR and LF escaped in the message and, in the properties, ``:`` and ``,`` as well. GitHub
resolves ``file`` against the checkout (``$GITHUB_WORKSPACE``), so a file inside it is named
relative to it, whatever the step's working directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..diagnostics import Diagnostic, FileError
from . import findings

if TYPE_CHECKING:
    from ..config import Settings


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _file(filename: str, workspace: str | None) -> str:
    if not workspace:
        return filename
    path = os.path.abspath(filename)
    relative = os.path.relpath(path, os.path.abspath(workspace))
    return filename if relative.split(os.sep, 1)[0] == os.pardir else Path(relative).as_posix()


def _where(d: Diagnostic) -> str:
    """The annotation's position. A notebook's cell row is no line of the ``.ipynb`` file, so
    like ruff it points at line 1 (clearly a fallback); the message names the cell and row."""
    if d.cell:
        return "line=1,col=1,endLine=1,endColumn=1"
    return (
        f"line={d.row},col={d.column + 1},"
        f"endLine={d.end_row or d.row},endColumn={(d.end_column if d.end_row else d.column) + 1}"
    )


def github(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    from .text import position

    workspace = os.environ.get("GITHUB_WORKSPACE")
    out.writelines(
        f"::error file={_escape(_file(d.filename, workspace), prop=True)},{_where(d)},"
        f"title={d.code}::{_escape(f'{position(d)}: {d.code} {d.message}')}\n"
        for d in findings(diagnostics, errors)
    )
