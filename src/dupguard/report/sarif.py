"""SARIF 2.1.0 for code-scanning upload, with every rule's metadata in ``tool.driver.rules``.

Locations are relative to the ``%SRCROOT%`` base (SARIF §3.4.4, a ``uriBaseId`` whose absolute
``file://`` URI, ending in ``/``, is in ``originalUriBaseIds``): the checkout in a GitHub job
(``$GITHUB_WORKSPACE``, which code scanning resolves relative paths against, whatever the
step's working directory), else the working directory; the log does not depend on where the
checkout was. Each path is percent-encoded (RFC 3986: a space is ``%20``, ``#`` ``%23``); a
file outside that directory gets its absolute ``file://`` URI. Columns count code points
(``columnKind``), as libcst does. A file that could not be processed is a result under DUP000
or DUP001 (report.findings) and a tool execution notification, and the run is then not
``executionSuccessful``. Each finding whose fix the report carries (``check
--output-format sarif`` builds them) has it as a SARIF ``fix``: the replacement of a region.
tests/test_outputs.py validates the log against the SARIF 2.1.0 schema.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote

from .. import __version__
from ..diagnostics import RESERVED_CODES, Diagnostic, FileError
from ..rulemeta import all_rules
from . import RESERVED_SUMMARIES, RESERVED_URL, findings

if TYPE_CHECKING:
    from ..config import Settings

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _first_paragraph(doc: str, heading: str) -> str:
    lines = doc.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip().lower() == f"## {heading}".lower())
    except StopIteration:
        return ""
    paragraph: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if not line.strip() and paragraph:
            break
        if line.strip():
            paragraph.append(line.strip())
    return " ".join(paragraph)


class Locations:
    """File names → SARIF artifact locations, relative to ``%SRCROOT%`` (``root``) when inside it."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.base = {SRCROOT: {"uri": Path(self.root).as_uri().rstrip("/") + "/"}}

    def artifact(self, filename: str) -> dict[str, str]:
        path = os.path.abspath(filename)
        relative = os.path.relpath(path, self.root)
        if relative == os.curdir or relative.split(os.sep, 1)[0] == os.pardir:
            return {"uri": Path(path).as_uri()}
        return {"uri": quote(Path(relative).as_posix(), safe="/"), "uriBaseId": SRCROOT}


def _span(row: int, column: int, end_row: int, end_column: int) -> dict[str, int]:
    return {"startLine": row, "startColumn": column + 1, "endLine": end_row, "endColumn": end_column + 1}


def _region(d: Diagnostic) -> dict[str, int]:
    """The finding's region in the file. A notebook's cell row is no line of the ``.ipynb``
    file: like ruff's structured formats, line 1 as a fallback (the message and the result's
    ``properties`` give the cell and row)."""
    if d.cell:
        return {"startLine": 1, "startColumn": 1}
    return _span(d.row, d.column, d.end_row or d.row, d.end_column if d.end_row else d.column)


def _rules() -> list[dict[str, Any]]:
    rules = []
    for code, meta in sorted(all_rules().items()):
        doc = meta.doc
        rules.append(
            {
                "id": code,
                "name": meta.name,
                "shortDescription": {"text": meta.summary},
                "fullDescription": {"text": _first_paragraph(doc, "What it does") or meta.summary},
                "help": {"text": _first_paragraph(doc, "Why is this bad?") or meta.summary, "markdown": doc},
                "helpUri": meta.url,
                "properties": {"fix": meta.fix, "runtimeFix": meta.runtime_fix},
                "defaultConfiguration": {"level": "error"},
            }
        )
    for code, name in RESERVED_CODES.items():
        text = RESERVED_SUMMARIES[code]
        rules.append(
            {
                "id": code,
                "name": name,
                "shortDescription": {"text": text},
                "fullDescription": {"text": text},
                "help": {"text": text},
                "helpUri": RESERVED_URL,
                "properties": {"fix": "none"},
                "defaultConfiguration": {"level": "error"},
            }
        )
    return sorted(rules, key=lambda rule: rule["id"])


def _result(d: Diagnostic, index: dict[str, int], where: Locations) -> dict[str, Any]:
    artifact = where.artifact(d.filename)
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": index[d.code],
        "level": "error",
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact,
                    "region": _region(d),
                }
            }
        ],
    }
    if d.cell:  # where in the notebook, since the region cannot say it
        result["message"] = {"text": f"cell {d.cell}, line {d.row}, column {d.column + 1}: {d.message}"}
        result["properties"] = {"cell": d.cell, "cellLine": d.row, "cellColumn": d.column + 1}
    elif d.fix is not None and d.fix.edits:  # a notebook's edits are not the .ipynb file's
        replacements = [
            {
                "deletedRegion": _span(e.row, e.column, e.end_row, e.end_column),
                "insertedContent": {"text": e.content},
            }
            for e in d.fix.edits
        ]
        result["fixes"] = [
            {
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}],
            }
        ]
    return result


def sarif(
    diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO, settings: Settings | None = None
) -> None:
    where = Locations(os.environ.get("GITHUB_WORKSPACE") or os.curdir)
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [{"physicalLocation": {"artifactLocation": where.artifact(e.filename)}}],
        }
        for e in errors
    ]
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dupguard",
                        "version": __version__,
                        "informationUri": "https://github.com/dupguard/dupguard",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": where.base,
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index, where) for d in findings(diagnostics, errors)],
                "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
            }
        ],
    }
    json.dump(document, out, indent=2)
    out.write("\n")
