"""``[tool.dupguard]`` (or ``dupguard.toml``) → validated ``Settings``.

The vocabulary is ruff's, so that users already know it. Every problem names the key and
the allowed values and ends the run with exit code 2 (``ConfigError``): a typo in a config
file must never silently turn a rule off.

No ``from __future__ import annotations`` here: ``NamedTuple`` turns string annotations into
``ForwardRef``s, compiling each one (≈ 25 µs a field, on every start; see diagnostics.py).
"""

from pathlib import Path
from typing import Any, NamedTuple

# tomllib, hashlib and json are imported where they are used: a run without a config file on
# one irrelevant file (the pre-commit case) needs none of them (bench/RESULTS.md, one-file start-up)

OUTPUT_FORMATS = ("full", "concise", "grouped", "json", "json-lines", "sarif", "github", "gitlab")
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytype",
    ".ruff_cache",
    ".dupguard_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)


# a generated module past this size costs seconds and hundreds of MB to parse (bench/RESULTS.md);
# hand-written agent code is far below it
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024


class ConfigError(Exception):
    """A bad configuration value; the message names the key and what is allowed."""


class Settings(NamedTuple):
    """Validated settings. A NamedTuple (immutable, picklable to workers, ``_replace``) rather
    than a dataclass, for start-up time: see diagnostics.py."""

    select: tuple[str, ...] = ("DUP",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    fixable: tuple[str, ...] = ("DUP",)
    unfixable: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    # lint test modules too (pipeline.is_test_module); off: test modules are not served code
    check_test_modules: bool = False
    output_format: str | None = None
    cache_dir: str = ".dupguard_cache"
    # files larger than this many bytes are skipped and reported (0: no limit)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    extend_stateful_agents: tuple[str, ...] = ()
    extend_stateless: tuple[str, ...] = ()
    extend_memory_classes: tuple[str, ...] = ()
    extend_handler_decorators: tuple[str, ...] = ()
    extend_idempotency_guards: tuple[str, ...] = ()
    # import roots, relative to the project root: where ``import app.agent`` finds ``app/agent.py``
    # (the project index resolves imports between the project's own modules; ruff's ``src``)
    src: tuple[str, ...] = (".", "src")
    # where the config came from; relative paths in the file are resolved against it
    root: str = "."
    config_file: str | None = None
    # not a config key: the report needs the fixes' edits (json, json-lines, sarif)
    with_fixes: bool = False

    def enabled_codes(self) -> frozenset[str]:
        """The rule codes that run: selected, minus ignored (longest prefix wins, like ruff)."""
        return frozenset(
            code for code in known_codes() if _selected(code, self.select + self.extend_select, self.ignore)
        )

    def lint_hash(self) -> str:
        """What the cached results of one file depend on, besides its content and the version."""
        relevant = {
            "codes": sorted(self.enabled_codes()),
            "catalog": [
                self.extend_stateful_agents,
                self.extend_stateless,
                self.extend_memory_classes,
                self.extend_handler_decorators,
                self.extend_idempotency_guards,
            ],
            # the fixes themselves, or only their marks (pipeline.fix_mark)
            "fixes": "edits" if self.with_fixes else "marks",
        }
        import hashlib
        import json

        return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()[:16]


def known_codes() -> tuple[str, ...]:
    from .rulemeta import rule_codes

    return rule_codes()


def _selected(code: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    best_select = max((len(p) for p in select if code.startswith(p)), default=-1)
    best_ignore = max((len(p) for p in ignore if code.startswith(p)), default=-1)
    return best_select >= 0 and best_select > best_ignore


def code_matches(code: str, prefixes: tuple[str, ...] | list[str]) -> bool:
    return any(code.startswith(p) for p in prefixes)


# ----------------------------------------------------------------------------- validation

_CODE_LIST_KEYS = ("select", "extend-select", "ignore", "fixable", "unfixable")
_STR_LIST_KEYS = (
    "src",
    "exclude",
    "extend-exclude",
    "extend-stateful-agents",
    "extend-stateless",
    "extend-memory-classes",
    "extend-handler-decorators",
    "extend-idempotency-guards",
)
_BOOL_KEYS = ("respect-gitignore", "force-exclude", "unsafe-fixes", "check-test-modules")
_STR_KEYS = ("cache-dir",)
_PATTERN_KEYS = ("exclude", "extend-exclude")
ALL_KEYS = (
    _CODE_LIST_KEYS
    + _STR_LIST_KEYS
    + _BOOL_KEYS
    + _STR_KEYS
    + ("per-file-ignores", "output-format", "max-file-size", "extend")
)

# a gitignore pattern that is a plain path: no wildcard, escape, negation or comment
# (discovery.py matches these without pathspec)
LITERAL_PATTERN = r"/?[\w.-]+(?:/[\w.-]+)*/?"


def _check_codes(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{key}: expected a list of rule codes or prefixes such as ["DUP1", "DUP301"], got {value!r}')
    codes = known_codes()
    for item in value:
        if item == "ALL":
            continue
        if item.startswith("DUP0"):
            from .diagnostics import RESERVED_CODES

            raise ConfigError(
                f"{key}: {item!r}: {' and '.join(RESERVED_CODES)} report files that could not be checked; they are "
                "always reported and cannot be selected, ignored or made fixable (docs/ci.md)"
            )
        if not any(code.startswith(item) for code in codes) or not item.startswith("DUP"):
            raise ConfigError(
                f"{key}: unknown rule code or prefix {item!r}; allowed: a prefix of one of {', '.join(codes)} (or ALL)"
            )
    return tuple("DUP" if v == "ALL" else v for v in value)


def _check_strs(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key}: expected a list of strings, got {value!r}")
    return tuple(value)


def is_literal_pattern(pattern: str) -> bool:
    """A plain-path gitignore pattern (``build``, ``tests/corpus``, ``dist/``), without ``.``/``..`` parts."""
    import re

    return re.fullmatch(LITERAL_PATTERN, pattern) is not None and not {".", ".."} & set(pattern.strip("/").split("/"))


def _check_patterns(key: str, value: Any) -> tuple[str, ...]:
    """gitignore patterns, each one that pathspec would refuse (``!``, ``[z-a]``) named here
    rather than when discovery first matches a path against it."""
    patterns = _check_strs(key, value)
    for pattern in patterns:
        if "\0" in pattern:
            raise ConfigError(f"{key}: {pattern!r} contains a NUL character")
        if is_literal_pattern(pattern):
            continue
        import pathspec

        try:
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # pathspec raises its own error or re.error, depending on the pattern
            raise ConfigError(f"{key}: {pattern!r} is not a valid gitignore pattern ({exc})") from None
    return patterns


_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def _check_size(key: str, value: Any) -> int:
    """Bytes: an integer, or a string such as ``"512KB"`` or ``"2MB"`` (1024-based); 0 means no limit."""
    expected = f'{key}: expected a number of bytes such as 2097152 or "2MB" (0: no limit), got {value!r}'
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str):
        import re

        match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)B?\s*", value.upper())
        if match is None:
            raise ConfigError(expected)
        size = int(match.group(1)) * _SIZE_UNITS[match.group(2)]
    else:
        raise ConfigError(expected)
    if size < 0:
        raise ConfigError(expected)
    return size


def _check_cache_dir(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key}: expected a path string, got {value!r}")
    if "\0" in value:
        raise ConfigError(f"{key}: {value!r} contains a NUL character")
    return value


def check_project_cache_dir(value: str) -> str:
    """A ``cache-dir`` from a project's config file stays inside the project: a repository's
    config must not make ``check`` write elsewhere (an absolute path, or ``..`` out of the
    project). One given on the command line may point anywhere."""
    import posixpath

    if Path(value).is_absolute() or value.startswith(("/", "\\")):
        raise ConfigError(f"cache-dir: {value!r} is absolute; in a config file it must be a path inside the project")
    normal = posixpath.normpath(value.replace("\\", "/"))
    if normal == ".." or normal.startswith("../"):
        raise ConfigError(f"cache-dir: {value!r} leads out of the project; in a config file it must stay inside it")
    return value


def _check_dotted(key: str, value: Any) -> tuple[str, ...]:
    items = _check_strs(key, value)
    for item in items:
        if not all(part.isidentifier() for part in item.split(".")):
            raise ConfigError(f'{key}: {item!r} is not a qualified name such as "mypkg.agents.SupportAgent"')
    return items


def _check_per_file_ignores(key: str, value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a table of glob = [codes], got {value!r}")
    return tuple((glob, _check_codes(f"{key}.{glob!r}", codes)) for glob, codes in value.items())


def parse_table(table: dict[str, Any], *, source: str) -> dict[str, Any]:
    """Validate a ``[tool.dupguard]`` table and return Settings field values."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        attr = key.replace("-", "_")
        try:
            if key in _CODE_LIST_KEYS:
                out[attr] = _check_codes(key, value)
            elif key.startswith("extend-") and key in _STR_LIST_KEYS and key not in ("extend-exclude",):
                out[attr] = _check_dotted(key, value)
            elif key in _PATTERN_KEYS:
                out[attr] = _check_patterns(key, value)
            elif key in _STR_LIST_KEYS:
                out[attr] = _check_strs(key, value)
            elif key in _BOOL_KEYS:
                if not isinstance(value, bool):
                    raise ConfigError(f"{key}: expected true or false, got {value!r}")
                out[attr] = value
            elif key in _STR_KEYS:
                out[attr] = _check_cache_dir(key, value)
            elif key == "max-file-size":
                out[attr] = _check_size(key, value)
            elif key == "output-format":
                if value not in OUTPUT_FORMATS:
                    raise ConfigError(f"{key}: {value!r} is not one of {', '.join(OUTPUT_FORMATS)}")
                out[attr] = value
            elif key == "per-file-ignores":
                out[attr] = _check_per_file_ignores(key, value)
            elif key == "extend" and source != "command line":
                if not isinstance(value, str) or not value or "\0" in value:
                    raise ConfigError(f'{key}: expected the path of another config file such as "../pyproject.toml"')
                out[attr] = value
            else:
                raise ConfigError(f"unknown key {key!r}; allowed keys: {', '.join(sorted(ALL_KEYS))}")
        except ConfigError as exc:
            raise ConfigError(f"{source}: [tool.dupguard] {exc}") from None
    return out


# ----------------------------------------------------------------------------- discovery


# in one directory, the first of these that exists wins (ruff: .ruff.toml, ruff.toml, pyproject.toml);
# a pyproject.toml counts only with a [tool.dupguard] table
CONFIG_NAMES = (".dupguard.toml", "dupguard.toml", "pyproject.toml")


def config_in(directory: Path) -> Path | None:
    """The config file of ``directory`` itself, if it has one (see ``CONFIG_NAMES``)."""
    for name in CONFIG_NAMES:
        candidate = directory / name
        try:
            found = candidate.is_file()
        except OSError:  # a directory this user may not search: no config to be had there
            found = False
        if found and (name != "pyproject.toml" or _has_table(candidate)):
            return candidate
    return None


def find_config(start: Path) -> Path | None:
    """The nearest config file at or above ``start`` (``config_in`` of each directory upward)."""
    for directory in (start, *start.parents):
        found = config_in(directory)
        if found is not None:
            return found
    return None


def _has_table(pyproject: Path) -> bool:
    try:
        return "[tool.dupguard" in pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def load_file(path: Path) -> dict[str, Any]:
    from .rulemeta import toml_loads

    try:
        data = toml_loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    except ValueError as exc:  # invalid TOML or not UTF-8
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool: expected a table, got {tool!r}")
    if path.name == "pyproject.toml":
        table = tool.get("dupguard", {})
    else:
        table = tool.get("dupguard", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.dupguard] must be a table, got {table!r}")
    values = parse_table(table, source=str(path))
    if "cache_dir" in values:
        try:
            check_project_cache_dir(values["cache_dir"])
        except ConfigError as exc:
            raise ConfigError(f"{path}: [tool.dupguard] {exc}") from None
    return values


# ----------------------------------------------------------------------------- extend

# lists that an extending file adds to rather than replaces (ruff joins its ``extend-*`` lists too)
_JOINED = (
    "extend_exclude",
    "extend_stateful_agents",
    "extend_stateless",
    "extend_memory_classes",
    "extend_handler_decorators",
    "extend_idempotency_guards",
)


def load_chain(path: Path) -> dict[str, Any]:
    """Settings values of ``path`` and of every file it ``extend``s, merged (ruff's ``extend``).

    ``extend`` is relative to the directory of the file that says it (``~`` and environment
    variables are expanded). Paths and patterns of an extended file (``src``, ``cache-dir``,
    anchored ``exclude`` patterns, ``per-file-ignores`` globs with a ``/``) keep meaning what
    they meant in that file's directory, as in ruff: they are rebased onto the directory of
    ``path``, the project root. A loop is a ``ConfigError`` naming the file and the chain.
    """
    import os

    chain: list[tuple[Path, dict[str, Any]]] = []
    seen: set[str] = set()
    current = Path(os.path.abspath(path))
    while True:
        real = os.path.realpath(current)
        if real in seen:
            names = " extends ".join([*(str(file) for file, _ in chain), str(current)])
            raise ConfigError(f"{chain[-1][0]}: [tool.dupguard] extend: circular configuration: {names}")
        seen.add(real)
        if chain and not current.is_file():
            raise ConfigError(f"{chain[-1][0]}: [tool.dupguard] extend: {current}: no such file")
        values = load_file(current)
        target = values.pop("extend", None)
        chain.append((current, values))
        if target is None:
            break
        target = os.path.expandvars(os.path.expanduser(target))
        current = Path(os.path.normpath(os.path.join(current.parent, target)))
    root = os.path.realpath(chain[0][0].parent)
    merged: dict[str, Any] = {}
    for file, values in reversed(chain):
        merged = _merge(merged, _rebase(values, os.path.realpath(file.parent), root))
    return merged


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """``child`` (the extending file) over ``base``. A key it sets replaces the base's, except the
    ``extend-*`` lists, which are joined. Rule selection reads as ruff's: without a ``select`` of
    its own the child adds its ``extend-select`` and ``ignore`` to the base's; with one, it starts
    afresh (the base's ``extend-select`` and ``ignore`` no longer apply)."""
    out = dict(base)
    if "select" in child:
        out.pop("extend_select", None)
        out.pop("ignore", None)
    for key, value in child.items():
        joined = key in _JOINED or (key in ("extend_select", "ignore") and "select" not in child)
        out[key] = tuple(base.get(key, ())) + tuple(value) if joined else value
    return out


def _posix_rel(path: str, start: str) -> str:
    import os

    return os.path.relpath(path, start).replace(os.sep, "/")


def _rebase(values: dict[str, Any], directory: str, root: str) -> dict[str, Any]:
    """The values of a config file in ``directory``, with their relative paths made relative to ``root``."""
    if directory == root:
        return values
    import os

    out = dict(values)
    for key in ("src", "cache_dir"):
        if key in out:
            items = (out[key],) if key == "cache_dir" else out[key]
            rebased = tuple(_posix_rel(os.path.normpath(os.path.join(directory, item)), root) for item in items)
            out[key] = rebased[0] if key == "cache_dir" else rebased
    for key in ("exclude", "extend_exclude"):
        if key in out:
            out[key] = tuple(p for p in (_rebase_pattern(p, directory, root) for p in out[key]) if p is not None)
    if "per_file_ignores" in out:
        out["per_file_ignores"] = tuple(
            (_anchor_glob(glob, directory), codes) for glob, codes in out["per_file_ignores"]
        )
    return out


def _glob_escape(path: str) -> str:
    """``path`` as an fnmatch glob matching itself (``[``, ``*``, ``?`` bracketed)."""
    import re

    return re.sub(r"([*?\[])", r"[\1]", path)


def _gitignore_escape(path: str) -> str:
    """``path`` as a gitignore pattern part matching itself (wildcards backslash-escaped)."""
    import re

    return re.sub(r"([*?\[\\])", r"\\\1", path)


def _rebase_pattern(pattern: str, directory: str, root: str) -> str | None:
    """A gitignore pattern of a file in ``directory``, for a project rooted at ``root``; None when
    it can match nothing under ``root``. Unanchored patterns (no inner ``/``) mean the same anywhere."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if "/" not in body.rstrip("/") or body.startswith("**/"):
        return pattern
    rel = body.lstrip("/")
    down = _posix_rel(directory, root)  # the directory below the root: anchor the pattern there
    if down == ".":
        return pattern
    if not down.startswith(".."):
        rebased = f"/{_gitignore_escape(down)}/{rel}"
    else:
        up = _posix_rel(root, directory)  # the root below the directory: strip its path
        if up.startswith(".."):
            return None  # neither contains the other
        if rel.startswith(up + "/"):
            rebased = "/" + rel[len(up) + 1 :]
        elif any(c in rel.split("/")[0] for c in "*?["):
            rebased = "/" + rel  # a wildcard where the root's path is: kept relative to the root
        else:
            return None
    return ("!" if negated else "") + rebased


def _anchor_glob(glob: str, directory: str) -> str:
    """A ``per-file-ignores`` glob of a file in ``directory``: a glob with a ``/`` is anchored
    there (made absolute); a bare name (``__init__.py``, ``*_test.py``) means the same anywhere."""
    if "/" not in glob.rstrip("/"):
        return glob
    return _glob_escape(directory) + "/" + glob.lstrip("/")


def settings_for_file(path: Path, overrides: dict[str, Any] | None = None) -> Settings:
    """The settings of one config file (and what it extends), with command-line ``overrides``."""
    values = load_chain(path)
    settings = Settings(root=str(path.resolve().parent), config_file=str(path), **values)
    if overrides:
        settings = settings._replace(**{k: v for k, v in overrides.items() if v is not None})
    return settings


def resolve(
    *,
    cwd: Path | None = None,
    config_path: str | None = None,
    isolated: bool = False,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """Settings from the nearest config file (or ``config_path``), then CLI overrides."""
    cwd = cwd or Path.cwd()
    values: dict[str, Any] = {}
    root = cwd
    config_file = None
    if not isolated:
        path = Path(config_path) if config_path else find_config(cwd)
        if config_path and not Path(config_path).is_file():
            raise ConfigError(f"--config: {config_path}: no such file")
        if path is not None:
            values = load_chain(path)
            root = path.resolve().parent
            config_file = str(path)
    settings = Settings(root=str(root), config_file=config_file, **values)
    if overrides:
        settings = settings._replace(**{k: v for k, v in overrides.items() if v is not None})
    return settings
