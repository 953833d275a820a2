"""Paths on the command line → the Python files to lint.

Walking never stops at a bad entry: an unreadable directory, a broken symlink or a symlink
loop becomes one ``FileError`` naming the path, and the walk goes on.

Symbolic links never lead out of the tree: ``fix`` rewrites what discovery finds, and a
repository can commit a link to any path on the machine. A link met while walking is
followed only to a target inside the directory being walked or the project root (others
are skipped, as excluded paths are); a path named on the command line that is, or passes
through, a link in the project is followed only to a target inside the project root.
Anything that is not a regular file or a directory (a FIFO, a socket, a device) is listed
as it is met and refused by the pipeline's ``read`` without being opened.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings, is_literal_pattern
from .diagnostics import FileError

if TYPE_CHECKING:
    import pathspec

# Jupyter notebooks too, by default, as ruff does since 0.6 (``extend-exclude = ["*.ipynb"]``
# leaves them out): dupguard lints their code cells (notebook.py)
PY_SUFFIXES = (".py", ".pyi", ".ipynb")


class Discovered:
    def __init__(self) -> None:
        self.files: list[Path] = []
        self.errors: list[FileError] = []


class LiteralSpec:
    """gitignore matching for plain-path patterns (``build``, ``tests/corpus``, ``dist/``).

    Why: pre-commit runs ``dupguard --force-exclude FILE...``, so every run matches the exclude
    list, and importing pathspec (with ``dataclasses`` and ``inspect``) costs about a third of
    that run's start-up budget (bench/RESULTS.md, target 6). The default list and typical
    ``extend-exclude`` values are plain paths, whose gitignore meaning is simple: a pattern
    without an inner ``/`` matches any path component, one with it is anchored at the base;
    a trailing ``/`` matches directories only. Anything else goes to pathspec, and a test
    checks both agree.
    """

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._rules = []
        for pattern in patterns:
            dir_only = pattern.endswith("/")
            body = pattern.rstrip("/")
            self._rules.append(("/" in body, tuple(body.lstrip("/").split("/")), dir_only))

    def match_file(self, candidate: str) -> bool:
        is_dir = candidate.endswith("/")
        parts = candidate.rstrip("/").split("/")
        for anchored, words, dir_only in self._rules:
            n = len(words)
            starts = [0] if anchored else range(len(parts) - n + 1)
            for i in starts:
                if tuple(parts[i : i + n]) == words and (i + n < len(parts) or is_dir or not dir_only):
                    return True
        return False


def _spec(patterns: tuple[str, ...]) -> LiteralSpec | pathspec.PathSpec:
    if all(is_literal_pattern(p) for p in patterns):
        return LiteralSpec(patterns)
    import pathspec  # imported only when needed: see LiteralSpec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _gitignore_spec(lines: tuple[str, ...]) -> LiteralSpec | pathspec.PathSpec:
    """A ``.gitignore``'s patterns; lines pathspec refuses (``!``, ``[z-a]``) are left out, as
    git ignores a pattern it cannot use, rather than stopping the walk."""
    try:
        return _spec(lines)
    except Exception:  # pathspec raises its own error or re.error, depending on the pattern
        return _spec(tuple(line for line in lines if _valid_pattern(line)))


def _valid_pattern(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:
        return False
    return True


def _inside(path: str, trees: tuple[str, ...]) -> bool:
    """Is ``path`` (absolute, normalised) one of ``trees`` or below one?"""
    return any(path == tree or path.startswith(tree.rstrip(os.sep) + os.sep) for tree in trees)


class _Walker:
    def __init__(self, settings: Settings) -> None:
        self.root = Path(settings.root).resolve()
        self._patterns = settings.exclude + settings.extend_exclude
        self.respect_gitignore = settings.respect_gitignore
        self.force_exclude = settings.force_exclude
        self._base = self.root  # exclusion patterns are relative to this
        self.result = Discovered()
        self._seen_dirs: set[tuple[int, int]] = set()
        # where links met while walking may lead: the project, and the directory being walked
        self._trees: tuple[str, ...] = (str(self.root),)

    @cached_property
    def exclude(self) -> LiteralSpec | pathspec.PathSpec:
        return _spec(self._patterns)

    def _rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self._base).as_posix()
        except ValueError:
            return path.as_posix()

    def excluded(self, path: Path, is_dir: bool) -> bool:
        rel = self._rel(path)
        candidates = [rel + "/" if is_dir else rel, path.name + ("/" if is_dir else "")]
        return any(self.exclude.match_file(c) for c in candidates)

    def add_path(self, arg: str) -> None:
        path = Path(arg)
        if path.is_symlink() and not path.exists():
            self.result.errors.append(FileError(arg, "broken symbolic link"))
        elif not path.exists():
            self.result.errors.append(FileError(arg, "no such file or directory"))
        elif self._leaves_project(arg):
            self.result.errors.append(FileError(arg, "symbolic link to a path outside the project, not followed"))
        elif path.is_dir():
            if not (self.force_exclude and self.excluded(path, True)):
                # like ruff: a directory named on the command line is linted even when it is
                # excluded; what lies inside is matched relative to it (and to the root when
                # the directory is the root or contains it)
                resolved = path.resolve()
                self._base = self.root if self.root.is_relative_to(resolved) else resolved
                self._trees = (str(self.root), str(resolved))
                self.walk(path, [])
                self._base = self.root
                self._trees = (str(self.root),)
        elif not (self.force_exclude and self.excluded(path, False)):
            # like ruff: a file named on the command line is linted even when excluded,
            # unless force-exclude is set (pre-commit passes every file explicitly)
            self.result.files.append(path)

    def _leaves_project(self, arg: str) -> bool:
        """Is ``arg`` a link (or a path through one) that leads out of the project? A path
        outside the project that the user named without a link is theirs to name."""
        absolute = os.path.abspath(arg)
        real = os.path.realpath(arg)
        if real == absolute or _inside(real, (str(self.root),)):
            return False
        return os.path.islink(arg) or _inside(absolute, (str(self.root),))

    def walk(self, directory: Path, ignores: list[tuple[Path, LiteralSpec | pathspec.PathSpec]]) -> None:
        try:
            st = directory.stat()
        except OSError as exc:
            self.result.errors.append(FileError(str(directory), _reason(exc)))
            return
        key = (st.st_dev, st.st_ino)
        if key in self._seen_dirs:
            if directory.is_symlink():
                self.result.errors.append(FileError(str(directory), "symbolic link loop, skipped"))
            return
        self._seen_dirs.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            self.result.errors.append(FileError(str(directory), _reason(exc)))
            return
        if self.respect_gitignore:
            gitignore = directory / ".gitignore"
            if gitignore.is_file():
                try:
                    lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
                    ignores = ignores + [(directory, _gitignore_spec(tuple(lines)))]
                except OSError:
                    pass
        for entry in entries:
            path = Path(entry.path)
            try:
                is_link = entry.is_symlink()
                if is_link and not _inside(os.path.realpath(entry.path), self._trees):
                    continue  # never out of the tree (fix would rewrite what lies there)
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError as exc:
                self.result.errors.append(FileError(entry.path, _reason(exc)))
                continue
            if self.excluded(path, is_dir) or self._gitignored(path, is_dir, ignores):
                continue
            if is_dir:
                self.walk(path, ignores)
            elif path.suffix not in PY_SUFFIXES:
                continue
            elif is_file or not is_link or os.path.exists(entry.path):
                # a regular file, or a FIFO, socket or device (or a link to one), which the
                # pipeline's ``read`` refuses with a message, without opening it
                self.result.files.append(path)
            else:
                self.result.errors.append(FileError(entry.path, "broken symbolic link"))

    @staticmethod
    def _gitignored(path: Path, is_dir: bool, ignores: list[tuple[Path, LiteralSpec | pathspec.PathSpec]]) -> bool:
        for base, spec in ignores:
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == 40:  # ELOOP
        return "symbolic link loop, skipped"
    return exc.strerror or str(exc)


def discover(paths: list[str], settings: Settings) -> Discovered:
    walker = _Walker(settings)
    for arg in paths:
        walker.add_path(arg)
    return walker.result
