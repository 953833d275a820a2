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
import re
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings, is_literal_pattern
from .diagnostics import FileError

if TYPE_CHECKING:
    import pathspec

    from .hierarchy import Resolver

# Jupyter notebooks too, by default, as ruff does since 0.6 (``extend-exclude = ["*.ipynb"]``
# leaves them out): dupguard lints their code cells (notebook.py)
PY_SUFFIXES = (".py", ".pyi", ".ipynb")


class Discovered:
    def __init__(self) -> None:
        self.files: list[Path] = []
        self.errors: list[FileError] = []


class LiteralSpec:
    """gitignore matching for plain-path patterns (``build``, ``tests/corpus``, ``dist/``), whose
    components may hold the wildcards ``*`` and ``?`` (``*.pyc``, ``.env*``: see ``_is_simple``).

    Why: pre-commit runs ``dupguard --force-exclude FILE...``, so every run matches the exclude
    list, and importing pathspec (with ``dataclasses`` and ``inspect``) costs about a third of
    that run's start-up budget (bench/RESULTS.md, one-file start-up). The default list and typical
    ``extend-exclude`` values are plain paths, whose gitignore meaning is simple: a pattern
    without an inner ``/`` matches any path component, one with it is anchored at the base;
    a trailing ``/`` matches directories only; a wildcard matches within one component, as
    gitignore's do. Anything else (``**``, brackets, escapes, negation) goes to pathspec, and
    tests/test_discovery.py checks both agree. Most ``.gitignore`` files (read with
    ``respect-gitignore`` for the directories above the linted root too) need no pathspec.
    """

    def __init__(self, patterns: tuple[str, ...]) -> None:
        # The common case, a single unanchored component without wildcards (the whole default
        # list: ``.git``, ``venv``, ``build``...), is a set lookup per path component: matching
        # every path against every pattern component by component was most of a warm-cache
        # run (bench/RESULTS.md, target 4). ``_names`` maps such a name to whether it matches
        # directories only (False when any of its patterns matches files too).
        self._names: dict[str, bool] = {}
        self._rules = []
        for pattern in patterns:
            dir_only = pattern.endswith("/")
            body = pattern.rstrip("/")
            anchored = "/" in body
            words = tuple(body.lstrip("/").split("/"))
            if not anchored and not any(c in body for c in "*?["):
                self._names[body] = self._names.get(body, True) and dir_only
            else:
                self._rules.append((anchored, words, dir_only))

    def match_file(self, candidate: str) -> bool:
        is_dir = candidate.endswith("/")
        parts = candidate.rstrip("/").split("/")
        last = len(parts) - 1
        names = self._names
        for i, part in enumerate(parts):
            dir_only = names.get(part)
            if dir_only is not None and (not dir_only or i < last or is_dir):
                return True
        for anchored, words, dir_only in self._rules:
            n = len(words)
            starts = [0] if anchored else range(len(parts) - n + 1)
            for i in starts:
                if _words_match(parts[i : i + n], words) and (i + n < len(parts) or is_dir or not dir_only):
                    return True
        return False


def _words_match(parts: list[str], words: tuple[str, ...]) -> bool:
    """Path components against pattern words: equal, or (a word with ``*``, ``?`` or ``[...]``) an
    fnmatch of one component, which is what gitignore's wildcards mean (never across a ``/``)."""
    if len(parts) != len(words):
        return False
    for part, word in zip(parts, words):
        if part != word and not (("*" in word or "?" in word or "[" in word) and _fnmatchcase(part, word)):
            return False
    return True


def _fnmatchcase(name: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase(name, pattern)


# a plain path whose components may hold ``*``, ``?`` and a plain bracket class (``*.pyc``, ``.env*``,
# ``build/*.log``, ``*.py[cod]``): what most .gitignore lines are; ``**``, negated classes
# (``[!x]``, ``[^x]``), escapes and negation go to pathspec
_COMPONENT = r"(?:[\w.*?-]|\[[\w.-]+\])+"
_SIMPLE_GLOB = re.compile(rf"/?{_COMPONENT}(?:/{_COMPONENT})*/?")


def _is_simple(pattern: str) -> bool:
    if is_literal_pattern(pattern):
        return True
    if "**" in pattern or _SIMPLE_GLOB.fullmatch(pattern) is None:
        return False
    return not {".", ".."} & set(pattern.strip("/").split("/"))


def _spec(patterns: tuple[str, ...]) -> LiteralSpec | pathspec.PathSpec:
    if all(_is_simple(p) for p in patterns):
        return LiteralSpec(patterns)
    import pathspec  # imported only when needed: see LiteralSpec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _gitignore_spec(lines: tuple[str, ...]) -> LiteralSpec | pathspec.PathSpec:
    """A ``.gitignore``'s patterns; lines pathspec refuses (``!``, ``[z-a]``) are left out, as
    git ignores a pattern it cannot use, rather than stopping the walk. Blank lines and
    comments mean nothing to git: left out here, so that a file of plain patterns and comments
    needs no pathspec."""
    lines = tuple(line for line in lines if line.strip() and not line.startswith("#"))
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


Ignores = list[tuple[Path, "LiteralSpec | pathspec.PathSpec"]]


class _Walker:
    """One discovery. ``settings``: the run's (root) settings, whose ``respect-gitignore`` and
    ``force-exclude`` hold for the whole walk; ``resolver``: the settings of each directory,
    whose ``exclude``/``extend-exclude`` apply to what lies in it, relative to that
    directory's project root (without one, ``settings`` everywhere)."""

    def __init__(self, settings: Settings, resolver: Resolver | None = None) -> None:
        self.settings = settings
        self.resolver = resolver
        self.root = Path(settings.root).resolve()
        self.respect_gitignore = settings.respect_gitignore
        self.force_exclude = settings.force_exclude
        self._walked: Path | None = None  # the command-line directory being walked
        self.result = Discovered()
        self._seen_dirs: set[tuple[int, int]] = set()
        # where links met while walking may lead: the project, and the directory being walked
        self._trees: tuple[str, ...] = (str(self.root),)
        self._specs: dict[tuple[str, ...], LiteralSpec | pathspec.PathSpec] = {}
        self._roots: dict[str, Path] = {}
        self._ignore_files: dict[Path, LiteralSpec | pathspec.PathSpec | None] = {}
        self._repository: dict[Path, Path | None] = {}
        self._repository_ignores: dict[Path, Ignores] = {}

    def settings_for(self, directory: Path) -> Settings:
        return self.settings if self.resolver is None else self.resolver.for_directory(directory)

    def _spec_of(self, settings: Settings) -> LiteralSpec | pathspec.PathSpec:
        patterns = settings.exclude + settings.extend_exclude
        spec = self._specs.get(patterns)
        if spec is None:
            spec = self._specs[patterns] = _spec(patterns)
        return spec

    def _base_of(self, settings: Settings) -> Path:
        """What exclusion patterns are relative to: the project root of ``settings``; inside a
        directory named on the command line that lies below that root, the directory (like
        ruff, a directory named on the command line is linted even when excluded)."""
        root = self._roots.get(settings.root)
        if root is None:
            root = self._roots[settings.root] = Path(settings.root).resolve()
        if self._walked is None or root.is_relative_to(self._walked):
            return root
        return self._walked

    def _rel(self, path: Path, base: Path) -> str:
        try:
            return path.resolve().relative_to(base).as_posix()
        except ValueError:
            return path.as_posix()

    def excluded(self, path: Path, is_dir: bool, settings: Settings | None = None, rel: str | None = None) -> bool:
        """``rel``: ``path`` resolved, relative to the exclusion base, when the caller knows it."""
        settings = settings or self.settings_for(path.parent)
        if rel is None:
            rel = self._rel(path, self._base_of(settings))
        candidates = [rel + "/" if is_dir else rel, path.name + ("/" if is_dir else "")]
        spec = self._spec_of(settings)
        return any(spec.match_file(c) for c in candidates)

    def add_path(self, arg: str) -> None:
        path = Path(arg)
        if path.is_symlink() and not path.exists():
            self.result.errors.append(FileError(arg, "broken symbolic link"))
        elif not path.exists():
            self.result.errors.append(FileError(arg, "no such file or directory"))
        elif self._leaves_project(arg):
            self.result.errors.append(FileError(arg, "symbolic link to a path outside the project, not followed"))
        elif path.is_dir():
            if not (self.force_exclude and self.excluded(path, True, self.settings_for(path))):
                # like ruff: a directory named on the command line is linted even when it is
                # excluded; what lies inside is matched relative to it (and to its project
                # root when the directory is that root or contains it)
                resolved = path.resolve()
                self._walked = resolved
                self._trees = (str(self.root), str(resolved))
                self.walk(path, self._parent_ignores(resolved) if self.respect_gitignore else [])
                self._walked = None
                self._trees = (str(self.root),)
        elif not (self.force_exclude and (self.excluded(path, False) or self._named_file_gitignored(path))):
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

    # ------------------------------------------------------------------ gitignore

    def _ignore_file(self, path: Path) -> LiteralSpec | pathspec.PathSpec | None:
        """The patterns of one ignore file (``.gitignore``, ``info/exclude``, the global one), read once."""
        if path not in self._ignore_files:
            spec = None
            try:
                if path.is_file():
                    spec = _gitignore_spec(tuple(path.read_text(encoding="utf-8", errors="replace").splitlines()))
            except OSError:
                pass
            self._ignore_files[path] = spec
        return self._ignore_files[path]

    def _repository_of(self, directory: Path) -> Path | None:
        if directory not in self._repository:
            self._repository[directory] = repository_root(directory)
        return self._repository[directory]

    def _parent_ignores(self, directory: Path, *, itself: bool = False) -> Ignores:
        """The ignore files that hold for what lies in ``directory`` (resolved) besides its own
        and its subdirectories' ``.gitignore`` (read during the walk; ``itself``: its own too):
        the ``.gitignore`` of every directory above it up to the repository root, the
        repository's ``info/exclude`` and git's global excludes file, as git applies them. Outside
        a git repository there are none (git has no repository to apply them to)."""
        repository = self._repository_of(directory)
        if repository is None:
            return []
        ignores = self._repository_ignores.get(repository)
        if ignores is None:
            ignores = []
            for path in repository_excludes(repository):
                spec = self._ignore_file(path)
                if spec is not None:
                    ignores.append((repository, spec))
            self._repository_ignores[repository] = ignores
        ignores = list(ignores)
        chain = [directory, *directory.parents] if itself else list(directory.parents)
        for parent in chain:
            if not parent.is_relative_to(repository):
                break
            spec = self._ignore_file(parent / ".gitignore")
            if spec is not None:
                ignores.append((parent, spec))
        return ignores

    def _named_file_gitignored(self, path: Path) -> bool:
        """With ``force-exclude``, a named file that git ignores is left out like an excluded one."""
        if not self.respect_gitignore:
            return False
        resolved = path.resolve()
        ignores = self._parent_ignores(resolved.parent, itself=True)
        if self._gitignored(resolved, False, ignores):
            return True
        # a directory above it that git ignores (``build/`` ignores ``build/x.py`` only through its directory)
        return any(self._gitignored(parent, True, ignores) for parent in resolved.parents if ignores)

    # ------------------------------------------------------------------ the walk

    def walk(self, directory: Path, ignores: Ignores) -> None:
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
        settings = self.settings_for(directory)  # the exclusions of what lies here
        # what ``_rel`` gives an entry that is not a link, without resolving each entry: the
        # directory resolved once, then its name (one ``resolve`` per file was a third of a
        # warm-cache run)
        here = self._rel(directory, self._base_of(settings))
        # outside the base ``_rel`` keeps the path as given: each entry goes through it
        prefix = None if here.startswith(("/", "../")) else "" if here == "." else here + "/"
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
            rel = None if is_link or prefix is None else prefix + entry.name
            if self.excluded(path, is_dir, settings, rel) or self._gitignored(path, is_dir, ignores):
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
    def _gitignored(path: Path, is_dir: bool, ignores: Ignores) -> bool:
        for base, spec in ignores:
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if rel.startswith("../") or rel == "..":
                continue
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


# ----------------------------------------------------------------------------- git's own files


def repository_root(directory: Path) -> Path | None:
    """The root of the git work tree holding ``directory``: the nearest directory with a ``.git``
    (a directory, or the file of a linked work tree or submodule)."""
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def git_dir(repository: Path) -> Path | None:
    """Where the repository's own files are: ``.git``, or, for a linked work tree, the common
    directory its ``.git`` file leads to (``gitdir:`` then ``commondir``), where git keeps ``info/exclude``."""
    dot = repository / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text[len("gitdir:") :].strip())
    gitdir = gitdir if gitdir.is_absolute() else repository / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return gitdir
    common_dir = Path(common)
    return common_dir if common_dir.is_absolute() else Path(os.path.normpath(gitdir / common_dir))


def _config_home() -> Path | None:
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(base):  # the XDG spec: a relative value is to be ignored
        return Path(base)
    home = os.path.expanduser("~")
    return Path(home) / ".config" if os.path.isabs(home) else None


def _excludes_file_setting(config: Path) -> str | None:
    """``core.excludesFile`` in one git config file (None when it does not set it)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section = None
    value = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = line[1 : line.find("]")].strip() if "]" in line else ""
            section = header.lower() if header and not any(c in header for c in ' "') else None
            continue
        if section != "core":
            continue
        key, sep, rest = line.partition("=")
        if sep and key.strip().lower() == "excludesfile":
            value = _config_value(rest)
    return value


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, a ``#``/``;`` comment outside quotes cut off."""
    out = []
    quoted = False
    escaped = False
    for char in raw.strip():
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()


def global_excludes_file(repository: Path | None = None) -> Path | None:
    """git's global excludes file: ``core.excludesFile`` (from ``$XDG_CONFIG_HOME/git/config``,
    ``~/.gitconfig`` or the repository's own config, the last one that sets it, as git reads
    them), else ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    config_home = _config_home()
    configs = []
    if os.environ.get("GIT_CONFIG_GLOBAL"):
        configs.append(Path(os.environ["GIT_CONFIG_GLOBAL"]))
    else:
        if config_home is not None:
            configs.append(config_home / "git" / "config")
        home = os.path.expanduser("~")
        if os.path.isabs(home):
            configs.append(Path(home) / ".gitconfig")
    if repository is not None:
        directory = git_dir(repository)
        if directory is not None:
            configs.append(directory / "config")
    value = None
    for config in configs:
        setting = _excludes_file_setting(config)
        if setting is not None:
            value = setting
    if value:
        path = Path(os.path.expanduser(value))
        return path if path.is_absolute() else (repository or Path.cwd()) / path
    return config_home / "git" / "ignore" if config_home is not None else None


def repository_excludes(repository: Path) -> list[Path]:
    """The repository-wide ignore files: ``info/exclude`` and the global excludes file."""
    files = []
    directory = git_dir(repository)
    if directory is not None:
        files.append(directory / "info" / "exclude")
    excludes = global_excludes_file(repository)
    if excludes is not None:
        files.append(excludes)
    return files


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == 40:  # ELOOP
        return "symbolic link loop, skipped"
    return exc.strerror or str(exc)


def discover(paths: list[str], settings: Settings, resolver: Resolver | None = None) -> Discovered:
    """The Python files under ``paths`` (and what could not be walked). ``settings``: the run's;
    ``resolver``: each directory's own settings (hierarchy.py), for their exclusions."""
    walker = _Walker(settings, resolver)
    for arg in paths:
        walker.add_path(arg)
    return walker.result
