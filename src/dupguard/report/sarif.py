"""SARIF 2.1.0 for code-scanning upload, with every rule's metadata in ``tool.driver.rules``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from .. import __version__
from ..diagnostics import Diagnostic, FileError
from ..rulemeta import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


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


def _region(d: Diagnostic) -> dict[str, int]:
    """The finding's region in the file. A notebook's cell row is no line of the ``.ipynb``
    file: like ruff's structured formats, line 1 as a fallback (the message and the result's
    ``properties`` give the cell and row)."""
    if d.cell:
        return {"startLine": 1, "startColumn": 1}
    return {
        "startLine": d.row,
        "startColumn": d.column + 1,
        "endLine": d.end_row or d.row,
        "endColumn": (d.end_column if d.end_row else d.column) + 1,
    }


def sarif(diagnostics: list[Diagnostic], errors: list[FileError], out: TextIO) -> None:
    metas = all_rules()
    codes = sorted(metas)
    rules = []
    for code in codes:
        meta = metas[code]
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
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for d in diagnostics:
        result = {
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, -1),
            "level": "error",
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(d.filename).as_posix()},
                        "region": _region(d),
                    }
                }
            ],
        }
        if d.cell:  # where in the notebook, since the region cannot say it
            result["message"] = {"text": f"cell {d.cell}, line {d.row}, column {d.column + 1}: {d.message}"}
            result["properties"] = {"cell": d.cell, "cellLine": d.row, "cellColumn": d.column + 1}
        results.append(result)
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": Path(e.filename).as_posix()}}}],
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
                "results": results,
                "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
            }
        ],
    }
    json.dump(document, out, indent=2)
    out.write("\n")
