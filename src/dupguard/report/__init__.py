"""Diagnostics → text for people (full, concise, grouped), tools (json, json-lines, sarif)
and CI (github annotations, gitlab Code Quality). Reporters only format; they never decide
what is a finding.

Every reporter takes the findings, the files and paths that could not be processed, the
stream, and (optionally) the run's settings, which the text formats read to mark fixable
findings and the CI formats ignore. A file that could not be processed is a finding too
(:func:`findings`), in every format: DUP001 for a syntax error, DUP000 otherwise
(``diagnostics.RESERVED_CODES``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..diagnostics import RESERVED_CODES, Diagnostic, FileError

Reporter = Callable[..., None]  # (diagnostics, errors, out, settings=None)


# format → (module, function); only the chosen module is imported (json is start-up time)
REPORTERS = {
    "full": ("text", "full"),
    "concise": ("text", "concise"),
    "grouped": ("text", "grouped"),
    "json": ("machine", "json_list"),
    "json-lines": ("machine", "json_lines"),
    "sarif": ("sarif", "sarif"),
    "github": ("github", "github"),
    "gitlab": ("gitlab", "gitlab"),
}

# where the reserved codes are explained (the rules' pages are rulemeta.DOCS_URL), and in brief
RESERVED_URL = "https://github.com/dupguard/dupguard/blob/main/docs/ci.md#files-that-could-not-be-checked"
RESERVED_SUMMARIES = {
    "DUP000": "A file or path that could not be read, decoded, analysed or written: no rule checked it.",
    "DUP001": "A file that does not parse as Python: no rule checked it.",
}


def get(name: str) -> Reporter:
    from importlib import import_module

    module, function = REPORTERS[name]
    reporter: Reporter = getattr(import_module(f"{__name__}.{module}"), function)
    return reporter


def findings(diagnostics: list[Diagnostic], errors: list[FileError]) -> list[Diagnostic]:
    """The findings and the files that could not be processed (``FileError.as_diagnostic``), in
    one order: by file, then position."""
    if not errors:
        return diagnostics
    return sorted([*diagnostics, *(error.as_diagnostic() for error in errors)])


def rule_name(code: str) -> str | None:
    """A code's name: the rule's, or a reserved code's."""
    from ..rulemeta import all_rules

    meta = all_rules().get(code)
    return meta.name if meta is not None else RESERVED_CODES.get(code)


def rule_url(code: str) -> str | None:
    """Where a code is documented: the rule's page, or the section on files not checked."""
    from ..rulemeta import all_rules

    meta = all_rules().get(code)
    if meta is not None:
        return meta.url
    return RESERVED_URL if code in RESERVED_CODES else None
