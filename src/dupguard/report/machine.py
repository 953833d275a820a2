"""Machine formats shaped like ruff's JSON, so existing tooling reads them unchanged. A file
that could not be processed is an item like any finding (DUP000/DUP001, report.findings)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, TextIO

from ..diagnostics import Diagnostic, FileError
from . import findings, rule_name, rule_url

if TYPE_CHECKING:
    from ..config import Settings


def to_dict(d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code,
        "name": rule_name(d.code),
        "message": d.message,
        "filename": os.path.abspath(d.filename),
        "location": {"row": d.row, "column": d.column + 1},
        "end_location": {"row": d.end_row or d.row, "column": (d.end_column if d.end_row else d.column) + 1},
        "fix": d.fix.to_json() if d.fix else None,
        "noqa_row": d.row,
        "url": rule_url(d.code),
        # ruff's notebook field: the 1-based cell that ``location``'s row counts in (null elsewhere)
        "cell": d.cell or None,
    }


def json_list(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    json.dump([to_dict(d) for d in findings(diagnostics, errors)], out, indent=2)
    out.write("\n")


def json_lines(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    out.writelines(json.dumps(to_dict(d)) + "\n" for d in findings(diagnostics, errors))
