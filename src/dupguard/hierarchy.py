"""Which settings a file uses: the nearest config file above it (ruff's hierarchical configuration).

Every file is linted under the nearest ``.dupguard.toml``, ``dupguard.toml`` or ``pyproject.toml``
with a ``[tool.dupguard]`` table in its directory or above (``config.CONFIG_NAMES``), not the
working directory's, so a monorepo can hold several projects, each with its own config, and be
linted from its root. Settings are not merged across files: the nearest one wins, and shares
with others only what it ``extend``s (``config.load_chain``). A file with no config above it
uses the working directory's settings (or the defaults), as in ruff.

``--config FILE`` uses that file for every file and ``--isolated`` none (ruff's fixed strategy);
command-line options override every file's settings.

Settings that belong to the run rather than to a file come from the working directory's config
(the *root* settings), as in ruff: ``cache-dir`` (one cache for the run, found from the working
directory), ``output-format`` (one report), ``respect-gitignore`` and ``force-exclude`` (one walk
of the tree). ``--jobs`` is a command-line option only.

The lookup is cached per directory: a file's directory and each directory above it are asked
once per run, so a thousand files in one directory cost one lookup, and the one-file run of the
pre-commit hook costs the same ``stat`` calls as before (bench/RESULTS.md, target 6).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .config import Settings, config_in, resolve, settings_for_file

# settings of the run, taken from the root settings whatever a file's own config says
GLOBAL_KEYS = ("cache_dir", "output_format", "respect_gitignore", "force_exclude")


class Resolver:
    """One run's settings: ``root`` (the working directory's), and ``for_file`` / ``for_directory``
    for the settings each file is linted under. ``ConfigError`` from the first lookup that
    meets a bad config file."""

    def __init__(
        self,
        *,
        cwd: Path | None = None,
        config_path: str | None = None,
        isolated: bool = False,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.overrides = overrides
        self.hierarchical = not isolated and config_path is None
        self._nearest: dict[str, str | None] = {}  # directory → its nearest config file (None: none)
        self._settings: dict[str | None, Settings] = {}  # config file → settings
        if self.hierarchical:
            config = self.nearest(self.cwd)
            if config is None:
                self.root = resolve(cwd=Path(self.cwd), isolated=True, overrides=overrides)
            else:
                self.root = settings_for_file(Path(config), overrides)
            # a file with no config above it is linted under the root settings, as in ruff
            self._settings[config] = self._settings[None] = self.root
        else:
            self.root = resolve(cwd=Path(self.cwd), config_path=config_path, isolated=isolated, overrides=overrides)

    def nearest(self, directory: str) -> str | None:
        """The config file nearest to ``directory`` (absolute), each directory on the way asked once."""
        visited = []
        found: str | None = None
        current = directory
        while True:
            if current in self._nearest:
                found = self._nearest[current]
                break
            visited.append(current)
            config = config_in(Path(current))
            if config is not None:
                found = str(config)
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for seen in visited:
            self._nearest[seen] = found
        return found

    def _for_config(self, config: str | None) -> Settings:
        settings = self._settings.get(config)
        if settings is None:
            assert config is not None  # None (no config file) is the root settings
            settings = self._globalise(settings_for_file(Path(config), self.overrides))
            self._settings[config] = settings
        return settings

    def _globalise(self, settings: Settings) -> Settings:
        root = self.root
        cache_dir = root.cache_dir
        if not os.path.isabs(cache_dir):  # the root's cache, named from this file's root
            cache_dir = os.path.relpath(os.path.join(root.root, cache_dir), settings.root)
        values = {key: getattr(root, key) for key in GLOBAL_KEYS}
        return settings._replace(**{**values, "cache_dir": cache_dir})

    def for_directory(self, directory: str | Path) -> Settings:
        """The settings of the files in ``directory``."""
        if not self.hierarchical:
            return self.root
        return self._for_config(self.nearest(os.path.abspath(directory)))

    def for_file(self, path: str | Path) -> Settings:
        """The settings ``path`` is linted under."""
        if not self.hierarchical:
            return self.root
        return self.for_directory(os.path.dirname(os.path.abspath(path)))

    def group(self, files: list[Path]) -> list[tuple[Settings, list[Path]]]:
        """``files`` by the settings each uses, in order of first appearance."""
        groups: dict[int, tuple[Settings, list[Path]]] = {}  # by identity: one object per config file
        for path in files:
            settings = self.for_file(path)
            groups.setdefault(id(settings), (settings, []))[1].append(path)
        return list(groups.values())

    def config_files(self) -> list[str]:
        """Every config file this run has read (for ``--watch``: a change to one re-runs)."""
        return sorted(c for c in self._settings if c is not None)


def groups_of(
    resolver: Resolver, files: list[Path], stdin: tuple[str, bytes] | None = None
) -> list[tuple[Settings, list[Path], tuple[str, bytes] | None]]:
    """The run split by settings: each group's settings, files and (for one group) the stdin
    source, which is linted under the settings of its ``--stdin-filename`` (the root's without one)."""
    groups = resolver.group(files)
    if stdin is None:
        return [(settings, group, None) for settings, group in groups]
    settings_of_stdin = resolver.for_file(stdin[0]) if stdin[0] != "-" else resolver.root
    out: list[tuple[Settings, list[Path], tuple[str, bytes] | None]] = []
    for settings, group in groups:
        out.append((settings, group, stdin if settings == settings_of_stdin else None))
    if not any(settings == settings_of_stdin for settings, _ in groups):
        out.append((settings_of_stdin, [], stdin))
    return out
