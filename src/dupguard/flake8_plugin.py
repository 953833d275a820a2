"""flake8 entry point ``DUP``: a thin adapter over the file pipeline.

flake8 applies its own ``--select``/``--ignore``/``# noqa``; this class only reports what
``dupguard check`` would report for the same file under the project's ``[tool.dupguard]``
settings: catalog extensions, ``per-file-ignores``, and ``exclude``/``extend-exclude``. flake8
hands the plugin every file it checks, whether named on its command line or found in a
directory, so a file dupguard excludes is skipped either way, as ``dupguard check
--force-exclude`` does (the mode pre-commit uses), and as flake8's own ``--exclude`` holds for
named files too. (flake8's ``--isolated`` does not reach plugins: ``[tool.dupguard]`` is read
all the same.)

A configuration dupguard cannot use is an error, not a reason to lint with the defaults: the
plugin raises ``DupguardConfigError`` when flake8 sets it up for a file, and flake8 stops the
run, prints ``<file>: "dupguard[DUP]" failed during execution due to dupguard configuration
error: <what is wrong and where>`` and exits 1 (even with ``--exit-zero``). A ``DUP000``
finding was the alternative, but flake8's ``--select``, ``--extend-ignore`` and ``# noqa``
would hide it again. tests/test_flake8.py checks all of this with real flake8 processes.

Cross-module facts (the project index, ``dupguard.project``): flake8 hands the plugin one file,
but the plugin knows what ``dupguard check`` knows about the names that file imports from the
project's other modules, because it builds the same index, once per flake8 process, from the
whole tree under the project root (the directory of the file's nearest ``[tool.dupguard]`` config, or
the current directory), reusing ``.dupguard_cache`` when it is writable. What it cannot know: modules outside
that root (a file flake8 checks elsewhere is linted on its own), and the state of a file that an
editor has changed but not saved (the index reads the files on disk; the file being linted is
read from what flake8 passes).

Nothing is imported from libcst unless the file passes the prefilter.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .config import ConfigError, Settings
from .hierarchy import Resolver

if TYPE_CHECKING:
    from .project import ProjectLink


class DupguardConfigError(Exception):
    """dupguard's configuration is invalid; the message names the file, the key and what is allowed."""

    def __repr__(self) -> str:  # flake8 shows the plugin's exception with ``repr``
        return f"dupguard configuration error: {self}"


@lru_cache(maxsize=32)
def _project(settings: Settings) -> ProjectLink:
    """The project index for this process's runs under ``settings`` (built on first need)."""
    from .pipeline import _open_cache, project_link

    try:
        cache = _open_cache(settings, [])
    except ConfigError:  # a cache-dir the CLI would refuse: no cache, the index still works
        cache = None
    return project_link(settings, cache)


@lru_cache(maxsize=4)
def _resolver(cwd: str) -> Resolver:
    try:
        return Resolver(cwd=Path(cwd))
    except ConfigError as exc:
        raise DupguardConfigError(str(exc)) from None


def _settings(cwd: str, filename: str) -> Settings:
    """The settings ``filename`` is linted under: the nearest config above it, as for ``dupguard
    check`` (hierarchy.py); looked up once per directory per flake8 process."""
    try:
        return _resolver(cwd).for_file(Path(cwd) / filename)
    except ConfigError as exc:
        raise DupguardConfigError(str(exc)) from None


def _excluded(filename: str, settings: Settings) -> bool:
    """Does dupguard's ``exclude``/``extend-exclude`` cover this file? The CLI's own matching,
    as for a file named with ``--force-exclude``. (flake8's stdin, which is no file, is not.)"""
    from .discovery import discover

    found = discover([filename], settings._replace(force_exclude=True))
    return not found.files and not found.errors


class Plugin:
    name = "dupguard"
    version = __version__

    def __init__(self, tree: ast.AST, lines: list[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename
        # here rather than in ``run``: flake8 turns an exception from the constructor into one
        # clear message and a failed run (one from ``run`` would be a bare traceback)
        self.settings = _settings(str(Path.cwd()), filename)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from .pipeline import codes_for_file, lint_text

        settings = self.settings
        if _excluded(self.filename, settings):
            return
        text = "".join(self.lines)
        codes = codes_for_file(self.filename, settings, settings.enabled_codes(), text)
        project = _project(settings)
        # flake8's text may be an editor's buffer or stdin: not the answer a run kept for the file
        facts = project.facts_for(Path(self.filename), text, on_disk=False) if codes else None
        project.save()
        try:
            diagnostics = lint_text(self.filename, text, settings, codes, apply_noqa=False, project=facts)
        except ValueError:
            return  # flake8 reports syntax errors itself (E999)
        for d in diagnostics:
            yield d.row, d.column, f"{d.code} {d.message}", type(self)
