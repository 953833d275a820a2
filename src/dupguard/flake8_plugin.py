"""flake8 entry point ``DUP``: a thin adapter over the file pipeline.

flake8 applies its own ``--select``/``--ignore``/``# noqa``; this class only reports what
``dupguard check`` would report for the same file under the project's ``[tool.dupguard]``
settings (so catalog extensions are honoured). Nothing is imported from libcst unless the
file passes the prefilter.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from . import __version__
from .config import ConfigError, Settings, resolve


@lru_cache(maxsize=4)
def _settings(cwd: str) -> Settings:
    try:
        return resolve(cwd=Path(cwd))
    except ConfigError:
        return Settings()


class Plugin:
    name = "dupguard"
    version = __version__

    def __init__(self, tree: ast.AST, lines: list[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from .pipeline import lint_text

        settings = _settings(str(Path.cwd()))
        text = "".join(self.lines)
        try:
            diagnostics = lint_text(self.filename, text, settings, settings.enabled_codes(), apply_noqa=False)
        except ValueError:
            return  # flake8 reports syntax errors itself (E999)
        for d in diagnostics:
            yield d.row, d.column, f"{d.code} {d.message}", type(self)
