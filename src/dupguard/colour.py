"""Colour for the ``full`` and ``concise`` reports on a terminal, as ruff colours its own.

When: ``NO_COLOR`` set and not empty turns it off (https://no-color.org); otherwise
``FORCE_COLOR`` set and not empty turns it on, even in a pipe (https://force-color.org: CI logs
show colour); otherwise colour only when the stream is a terminal and ``TERM`` is not ``dumb``.
A report written with ``--output-file`` never has colour, whatever the environment says.

How: the reporters write plain text (report/text.py); :class:`ColourWriter` colours each line
as it passes, by its shape (a finding's headline, a caret line, the closing line), so the
reporters stay free of terminal concerns and a line it does not recognise passes unchanged.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

BOLD = "\x1b[1m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
CYAN = "\x1b[36m"
RESET = "\x1b[0m"

# path:row:col: CODE [*] message  (``[*]``: a finding with a fix)
_HEADLINE = re.compile(r"(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>DUP\d+)(?P<fix> \[\*\])?(?P<rest> .*)?")
# the caret line under a code frame: "  <pad> | <spaces>^^^"
_CARETS = re.compile(r"(?P<frame>\s+\|\s*?)(?P<carets>\^+)\s*")
_FOUND = re.compile(r"(Found \d+ errors?\.|Fixed \d+ findings?.*|Would fix \d+ findings?.*)")


def wanted(stream: TextIO, environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Should a text report to ``stream`` be coloured? (See the module's docstring.)"""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def colour_line(line: str) -> str:
    """One report line (without its newline), coloured by its shape."""
    match = _HEADLINE.fullmatch(line)
    if match is not None:
        fix = f" {CYAN}[*]{RESET}" if match.group("fix") else ""
        return (
            f"{BOLD}{match.group('path')}{RESET}{CYAN}:{RESET}{match.group('row')}{CYAN}:{RESET}"
            f"{match.group('col')}{CYAN}:{RESET} {BOLD}{RED}{match.group('code')}{RESET}{fix}{match.group('rest') or ''}"
        )
    match = _CARETS.fullmatch(line)
    if match is not None and line.lstrip().startswith("|"):
        return f"{match.group('frame')}{RED}{match.group('carets')}{RESET}"
    if line == "All checks passed!":
        return f"{BOLD}{GREEN}{line}{RESET}"
    if _FOUND.match(line):
        return f"{BOLD}{line}{RESET}"
    return line


class ColourWriter:
    """A text stream that colours each line it is given (:func:`colour_line`) and writes it on."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            self.stream.write(colour_line(line) + "\n")
        return len(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._pending:
            self.stream.write(colour_line(self._pending))
            self._pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()
