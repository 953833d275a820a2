"""``dupguard check --watch``: lint, then lint again whenever a file changes (ruff's ``--watch``).

Polling with the standard library rather than an event API (inotify, FSEvents) that would need
a dependency: every ``INTERVAL`` seconds the watched trees are listed with ``os.scandir`` and
each Python file's, config file's and ignore file's size and modification time, and each
directory's modification time (a file added or removed), are compared with the last listing.
Directories that discovery never enters (``.git``, ``.venv``, the cache, the other defaults of
``exclude``) are not listed, so the cost of a poll is one ``stat`` per watched file. A config
file above the watched paths that the run read (the nearest one, found upward) is watched too.

On a change the screen is cleared (on a terminal) and the run starts again, configuration
included: an edited ``pyproject.toml`` takes effect, and a broken one prints its error and the
watch goes on until it is fixed. Ctrl-C ends the watch with exit code 0, as in ruff.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from .config import CONFIG_NAMES, DEFAULT_EXCLUDE

INTERVAL = 0.5
# what a change to re-lint for: Python sources, config and ignore files
WATCHED_SUFFIXES = (".py", ".pyi", ".toml")
WATCHED_NAMES = frozenset({".gitignore", *CONFIG_NAMES})
_SKIPPED_DIRECTORIES = frozenset(DEFAULT_EXCLUDE)

CLEAR = "\x1b[2J\x1b[H"

Snapshot = dict[str, tuple[int, int]]


def snapshot(paths: list[str], extra: list[str]) -> Snapshot:
    """Size and modification time of every watched file under ``paths`` (and of ``extra`` files),
    and the modification time of every directory listed."""
    seen: Snapshot = {}
    pending = [os.path.abspath(p) for p in paths]
    for path in extra:
        _stat_into(seen, path)
    while pending:
        path = pending.pop()
        try:
            st = os.stat(path)
        except OSError:
            continue
        seen[path] = (st.st_size, st.st_mtime_ns)
        if not os.path.isdir(path):
            continue
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in _SKIPPED_DIRECTORIES:
                                pending.append(entry.path)
                        elif entry.name in WATCHED_NAMES or entry.name.endswith(WATCHED_SUFFIXES):
                            _stat_into(seen, entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return seen


def _stat_into(seen: Snapshot, path: str) -> None:
    try:
        st = os.stat(path)
    except OSError:
        return
    seen[os.path.abspath(path)] = (st.st_size, st.st_mtime_ns)


def watch(
    run: Callable[[], list[str]],
    paths: list[str],
    out: TextIO | None = None,
    interval: float = INTERVAL,
) -> int:
    """Call ``run`` (one lint; it returns the config files it read), then again after each
    change under ``paths``, until interrupted (exit 0)."""
    out = out or sys.stdout
    clear = out.isatty()
    configs: list[str] = []
    try:
        out.write("Starting linter in watch mode...\n")
        while True:
            # the listing the next change is measured against is taken before the run, so an
            # edit made while it runs starts another
            before = snapshot(paths, configs)
            configs = run()
            for config in configs:
                if os.path.abspath(config) not in before:
                    _stat_into(before, config)
            out.write("Watching for file changes.\n")
            out.flush()
            while snapshot(paths, configs) == before:
                time.sleep(interval)
            if clear:
                out.write(CLEAR)
            out.write("File change detected...\n")
    except KeyboardInterrupt:
        return 0
