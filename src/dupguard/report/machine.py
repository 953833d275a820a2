"""Machine formats shaped like ruff's JSON, so existing tooling reads them unchanged."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

from ..diagnostics import Diagnostic, FileError
from ..rulemeta import all_rules


def to_dict(d: Diagnostic) -> dict[str, Any]:
    meta = all_rules().get(d.code)
    return {
        "code": d.code,
        "name": meta.name if meta else None,
        "message": d.message,
        "filename": os.path.abspath(d.filename),
        "location": {"row": d.row, "column": d.column + 1},
        "end_location": {"row": d.end_row or d.row, "column": (d.end_column if d.end_row else d.column) + 1},
        "fix": d.fix.to_json() if d.fix else None,
        "noqa_row": d.row,
        "url": meta.url if meta else None,
        # ruff's notebook field: the 1-based cell that ``location``'s row counts in (null elsewhere)
        "cell": d.cell or None,
    }


def json_list(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    json.dump([to_dict(d) for d in diagnostics], out, indent=2)
    out.write("\n")


def json_lines(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    out.writelines(json.dumps(to_dict(d)) + "\n" for d in diagnostics)
