"""GitLab Code Quality: the JSON array a job hands to ``artifacts:reports:codequality``.

Each item has what GitLab's documentation asks of a custom tool (docs.gitlab.com, "Code
Quality", report format): ``description``, ``check_name``, ``fingerprint``, ``severity`` and
``location.path`` with ``location.lines.begin``. GitLab shows ``description`` alone, so it starts
with the code, as ruff's ``gitlab`` format does.

Paths are relative to ``$CI_PROJECT_DIR`` (the checkout, in a GitLab job) or else the working
directory, with ``/`` separators.

The fingerprint is how GitLab tells a new finding from one it already knew when it compares a
merge request with its target branch, so it must not change when lines move: it is a hash of
the code, the path, the text the finding points at (whitespace collapsed) and the message
without its digits (messages name other lines: "(line 9)"), and, for findings that agree on
all of these, the number of such findings before it in the file. An edit elsewhere in the
file keeps it; an edit of the flagged code gives a new one, as it should.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..diagnostics import RESERVED_CODES, Diagnostic, FileError
from . import findings

if TYPE_CHECKING:
    from ..config import Settings

# a rule's finding would fail the job (exit 1) and is a real defect: major; a file that no rule
# could check hides whatever it holds: critical
SEVERITY = "major"
RESERVED_SEVERITY = "critical"


def _relative(filename: str, root: str) -> str:
    path = os.path.abspath(filename)
    relative = os.path.relpath(path, root)
    return Path(path if relative.split(os.sep, 1)[0] == os.pardir else relative).as_posix()


class _Sources:
    """The flagged text of findings, one read per file (never for a file that could not be read)."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}

    def flagged(self, d: Diagnostic) -> str:
        if d.code in RESERVED_CODES:
            return ""
        lines = self.lines.get(d.filename)
        if lines is None:
            try:
                with open(d.filename, encoding="utf-8", errors="replace", newline="") as handle:
                    lines = self.lines[d.filename] = handle.read().splitlines()
            except OSError:
                lines = self.lines[d.filename] = []
        end_row, end_column = (d.end_row, d.end_column) if d.end_row else (d.row, d.column)
        if not 1 <= d.row <= end_row <= len(lines):
            return ""
        chunk = lines[d.row - 1 : end_row]
        chunk[-1] = chunk[-1][:end_column] if end_row > d.row or end_column > d.column else chunk[-1]
        chunk[0] = chunk[0][d.column :]
        return " ".join(" ".join(chunk).split())


def fingerprint(code: str, path: str, flagged: str, message: str, occurrence: int) -> str:
    """The stable identity of one finding (see the module docstring)."""
    key = "\0".join((code, path, flagged, re.sub(r"\d+", "", message), str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def to_items(diagnostics: list[Diagnostic], errors: list[FileError], root: str) -> list[dict[str, Any]]:
    sources = _Sources()
    seen: dict[tuple[str, str, str, str], int] = {}
    items = []
    for d in findings(diagnostics, errors):
        path = _relative(d.filename, root)
        key = (d.code, path, sources.flagged(d), re.sub(r"\d+", "", d.message))
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        items.append(
            {
                "description": f"{d.code}: {d.message}",
                "check_name": d.code,
                "fingerprint": fingerprint(d.code, path, key[2], d.message, occurrence),
                "severity": RESERVED_SEVERITY if d.code in RESERVED_CODES else SEVERITY,
                "location": {"path": path, "lines": {"begin": d.row, "end": d.end_row or d.row}},
            }
        )
    return items


def gitlab(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    root = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    json.dump(to_items(diagnostics, errors, os.path.abspath(root)), out, indent=2)
    out.write("\n")
