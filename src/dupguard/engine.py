"""Files → diagnostics: read, prefilter, parse once, build the model, run the rules.

The engine knows nothing about any rule's logic. Per file: decode (BOM, coding cookie),
skip files that cannot matter (no libcst import at all when none passes), parse once,
build the semantic model in one traversal, let every enabled rule query it, turn reported
nodes into positions, drop ``noqa``-suppressed findings. Files fan out to worker processes
and results are cached by content hash.
"""

from __future__ import annotations

import io
import os
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Iterable

from . import __version__
from .cache import Cache
from .config import Settings, code_matches
from .diagnostics import Diagnostic, FileError
from .prefilter import might_matter
from .suppression import file_is_exempt, line_suppresses

# below this many files to parse, worker start-up costs more than it saves
PARALLEL_THRESHOLD = 16


@dataclass
class Result:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files_checked: int = 0


def decode(data: bytes, filename: str) -> str:
    """Source bytes → text, honouring a BOM or PEP 263 coding cookie (UTF-8 otherwise)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise ValueError(f"cannot detect the source encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise ValueError(f"cannot decode as {encoding}: {reason}") from None
    return text[1:] if text.startswith("\ufeff") else text


def extra_modules(settings: Settings) -> tuple[str, ...]:
    names = settings.extend_stateful_agents + settings.extend_memory_classes
    return tuple(sorted({n.split(".")[0] for n in names}))


def lint_text(
    filename: str, text: str, settings: Settings, codes: frozenset[str], *, apply_noqa: bool = True
) -> list[Diagnostic]:
    """Diagnostics for one file's text. Raises ValueError with a clear reason on bad input.

    ``apply_noqa=False`` leaves ``# noqa`` to the host (flake8 applies its own).
    """
    if not codes or file_is_exempt(text) or not might_matter(text, extra_modules(settings)):
        return []
    import libcst as cst

    from .rules import RuleContext, load
    from .semantic.builder import build_model
    from .semantic.catalog_loader import catalog_for
    from .semantic.positions import Positions

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message}") from None
    except RecursionError:
        raise ValueError("too deeply nested to parse") from None
    model = build_model(module, catalog_for(settings), settings)
    ctx = RuleContext(Positions(module))
    rules = load()
    lines = text.splitlines()
    out: list[Diagnostic] = []
    for code in sorted(codes):
        for finding in rules[code](model, ctx):
            row, col, end_row, end_col = ctx.positions.range(finding.node)
            if apply_noqa and row <= len(lines) and line_suppresses(lines[row - 1], code):
                continue
            fix = None
            if finding.replacement is not None:  # the JSON report's ``fix``: edits from the replacement
                from .fixer import fix_for

                fix = fix_for(module, code, finding)
            out.append(Diagnostic(filename, row, col, code, finding.message, end_row, end_col, fix))
    return sorted(set(out))


def _lint_one(job: tuple[str, str, Settings, frozenset[str]]) -> tuple[str, list[Diagnostic] | None, str | None]:
    filename, text, settings, codes = job
    try:
        return filename, lint_text(filename, text, settings, codes), None
    except ValueError as exc:
        return filename, None, str(exc)
    except Exception as exc:  # a bug in dupguard must not hide the other files' results
        return filename, None, f"internal error while linting ({type(exc).__name__}: {exc}); please report it"


def codes_for_file(path: str, settings: Settings, codes: frozenset[str]) -> frozenset[str]:
    """Apply ``per-file-ignores`` (globs relative to the project root, or basenames)."""
    if not settings.per_file_ignores:
        return codes
    try:
        rel = Path(path).resolve().relative_to(Path(settings.root).resolve()).as_posix()
    except ValueError:
        rel = Path(path).as_posix()
    ignored: list[str] = []
    for pattern, prefixes in settings.per_file_ignores:
        if fnmatch(rel, pattern) or fnmatch(Path(path).name, pattern) or rel.startswith(pattern.rstrip("/") + "/"):
            ignored.extend(prefixes)
    return frozenset(c for c in codes if not code_matches(c, ignored))


def lint_paths(
    files: Iterable[Path],
    settings: Settings,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    stdin: tuple[str, bytes] | None = None,
) -> Result:
    result = Result()
    enabled = settings.enabled_codes()
    cache = Cache(Path(settings.root) / settings.cache_dir if not os.path.isabs(settings.cache_dir)
                  else Path(settings.cache_dir), settings.lint_hash(), __version__) if use_cache else None
    pending: list[tuple[str, str, Settings, frozenset[str]]] = []
    keys: dict[str, str] = {}
    sources: list[tuple[str, bytes | None, str | None]] = []
    for path in files:
        try:
            sources.append((str(path), path.read_bytes(), None))
        except IsADirectoryError:
            sources.append((str(path), None, "is a directory"))
        except PermissionError:
            sources.append((str(path), None, "permission denied"))
        except OSError as exc:
            sources.append((str(path), None, exc.strerror or str(exc)))
    if stdin is not None:
        sources.append((stdin[0], stdin[1], None))
    for filename, data, error in sources:
        if error is not None or data is None:
            result.errors.append(FileError(filename, error or "unreadable"))
            continue
        result.files_checked += 1
        codes = codes_for_file(filename, settings, enabled)
        if cache is not None:
            key = cache.key(data, codes)
            cached = cache.get(key)
            if cached is not None:
                result.diagnostics.extend(Diagnostic.from_cache(filename, d) for d in cached)
                continue
            keys[filename] = key
        try:
            text = decode(data, filename)
        except ValueError as exc:
            result.errors.append(FileError(filename, str(exc)))
            continue
        if not codes or file_is_exempt(text) or not might_matter(text, extra_modules(settings)):
            if cache is not None:
                cache.put(keys[filename], [])
            continue
        pending.append((filename, text, settings, codes))
    for filename, diagnostics, error in _run(pending, jobs):
        if error is not None:
            result.errors.append(FileError(filename, error))
            continue
        assert diagnostics is not None
        result.diagnostics.extend(diagnostics)
        if cache is not None:
            cache.put(keys[filename], [d.to_cache() for d in diagnostics])
    if cache is not None:
        cache.save()
    result.diagnostics.sort()
    return result


def _run(pending: list, jobs: int | None):
    workers = min(jobs or os.cpu_count() or 1, len(pending) // PARALLEL_THRESHOLD or 1)
    if workers <= 1:
        return [_lint_one(job) for job in pending]
    chunk = max(1, len(pending) // (workers * 8))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_lint_one, pending, chunksize=chunk))
