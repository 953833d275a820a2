"""The values that flow from rules to reports: what was found, where, and how to fix it.

They are ``NamedTuple``s, not dataclasses: every run imports this module, and ``dataclasses``
(through ``inspect``) costs about a third of the start-up budget for one file (bench/RESULTS.md,
one-file start-up). Immutability, ordering and equality come with the tuple.

No ``from __future__ import annotations`` here: ``NamedTuple`` turns string annotations
into ``ForwardRef``s, compiling each one (≈ 25 µs a field, on every start).
"""

from typing import Any, NamedTuple


class Edit(NamedTuple):
    """Replace the text between two (row, column) positions (1-based rows, 0-based columns)."""

    content: str
    row: int
    column: int
    end_row: int
    end_column: int

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "location": {"row": self.row, "column": self.column + 1},
            "end_location": {"row": self.end_row, "column": self.end_column + 1},
        }


class Fix(NamedTuple):
    applicability: str  # "safe" | "unsafe"
    message: str
    edits: tuple[Edit, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [e.to_json() for e in self.edits],
        }


class Diagnostic(NamedTuple):
    """One finding. Rows are 1-based, columns 0-based (reports add 1 where tools expect it).

    Sorted by file and position; ``fix`` comes last, so it only breaks ties between findings
    that are otherwise identical (and those carry the same fix). ``cell``: in a Jupyter
    notebook, the 1-based index of the cell the finding is in, whose rows ``row`` and
    ``end_row`` then count (notebook.py; 0 for any other file). Until the run reports it, a
    notebook's finding has ``cell`` 0 and rows of its joined code cells, as the cache keeps it.
    """

    filename: str
    row: int
    column: int
    code: str
    message: str
    end_row: int = 0
    end_column: int = 0
    fix: Fix | None = None
    cell: int = 0

    def to_cache(self) -> list[Any]:
        return [
            self.row,
            self.column,
            self.end_row,
            self.end_column,
            self.code,
            self.message,
            self.fix.to_json() if self.fix else None,
        ]

    @classmethod
    def from_cache(cls, filename: str, data: list[Any]) -> "Diagnostic":
        row, column, end_row, end_column, code, message, fix = data
        return cls(filename, row, column, code, message, end_row, end_column, _fix_from_json(fix) if fix else None)


def _fix_from_json(data: dict[str, Any]) -> Fix:
    edits = tuple(
        Edit(
            e["content"],
            e["location"]["row"],
            e["location"]["column"] - 1,
            e["end_location"]["row"],
            e["end_location"]["column"] - 1,
        )
        for e in data["edits"]
    )
    return Fix(data["applicability"], data["message"], edits)


# A file or path that could not be checked is reported like a finding, in every output format,
# under one of two reserved codes that are not rules (docs/ci.md, "Files that could not be
# checked"): no ``select``, ``ignore``, ``per-file-ignores`` or noqa comment hides them (naming
# one in a configuration is an error, config.py), because a run that skipped a file must not
# look clean. DUP001 is ruff's ``invalid-syntax``, DUP000 its ``io-error`` (E902) and the rest.
NOT_PROCESSED = "DUP000"
INVALID_SYNTAX = "DUP001"
RESERVED_CODES = {NOT_PROCESSED: "file-not-processed", INVALID_SYNTAX: "invalid-syntax"}

_SYNTAX_ERROR = "syntax error at line "


def syntax_error(row: int, column: int, reason: str) -> str:
    """The words for a file that does not parse (1-based ``row``, 0-based ``column``): the one
    form ``pipeline.parse`` writes and :meth:`FileError.as_diagnostic` reads back."""
    return f"{_SYNTAX_ERROR}{row}, column {column + 1}: {reason}"


class FileError(NamedTuple):
    """A file that could not be linted: named with the reason, never a traceback."""

    filename: str
    message: str

    def __str__(self) -> str:
        return f"{self.filename}: {self.message}"

    def as_diagnostic(self) -> Diagnostic:
        """This error as a finding: DUP001 where the parser stopped, DUP000 at line 1, column 1
        (the file as a whole: it could not be read, decoded, parsed safely, analysed or written)."""
        if self.message.startswith(_SYNTAX_ERROR):
            where, _, reason = self.message[len(_SYNTAX_ERROR) :].partition(": ")
            row, _, column = where.partition(", column ")
            if row.isdigit() and column.isdigit():
                return Diagnostic(self.filename, int(row), int(column) - 1, INVALID_SYNTAX, f"syntax error: {reason}")
        return Diagnostic(self.filename, 1, 0, NOT_PROCESSED, self.message)
