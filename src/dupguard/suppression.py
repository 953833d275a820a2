"""``# noqa`` comments, flake8/ruff style, and the file-level ``# dupguard: noqa``.

Reads raw source lines instead of the tree: suppression is a text convention, and this
keeps it identical between ``dupguard check`` and the flake8 plugin (where flake8 itself
applies ``noqa``).
"""

from __future__ import annotations

import re

# compiled on first use (``re`` caches them), not at import: the one-file start-up never
# needs them, since no file reaches them before passing the prefilter
_NOQA = r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[,\s]+[A-Z]+[0-9]*)*))?"
_FILE_NOQA = r"^\s*#\s*dupguard\s*:\s*noqa\s*$"


def file_is_exempt(text: str) -> bool:
    return "noqa" in text and re.search(_FILE_NOQA, text, re.IGNORECASE | re.MULTILINE) is not None


def line_suppresses(line: str, code: str) -> bool:
    """Does this source line carry a ``noqa`` that covers ``code`` (exact code or prefix)?"""
    if "noqa" not in line.lower():
        return False
    match = re.search(_NOQA, line, re.IGNORECASE)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(code.startswith(c.upper()) for c in re.split(r"[,\s]+", codes.strip()) if c)
