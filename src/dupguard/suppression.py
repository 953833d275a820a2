"""``# noqa`` comments, flake8/ruff style, and the file-level ``# dupguard: noqa``.

Reads raw source lines instead of the tree: suppression is a text convention, and this
keeps it identical between ``dupguard check`` and the flake8 plugin (where flake8 itself
applies ``noqa``).
"""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*dupguard\s*:\s*noqa\s*$", re.IGNORECASE | re.MULTILINE)
_SPLIT = re.compile(r"[,\s]+")


def file_is_exempt(text: str) -> bool:
    return "noqa" in text and _FILE_NOQA.search(text) is not None


def line_suppresses(line: str, code: str) -> bool:
    """Does this source line carry a ``noqa`` that covers ``code`` (exact code or prefix)?"""
    if "noqa" not in line.lower():
        return False
    match = _NOQA.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(code.startswith(c.upper()) for c in _SPLIT.split(codes.strip()) if c)
