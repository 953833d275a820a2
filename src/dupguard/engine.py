"""Files → diagnostics: read, prefilter, parse once, build the model, run the rules.

The engine knows nothing about any rule's logic. Per file: decode (BOM, coding cookie),
skip files that cannot matter (no libcst import at all when none passes), parse once,
build the semantic model in one traversal, let every enabled rule query it, turn reported
nodes into positions, drop ``noqa``-suppressed findings. Files fan out to worker processes
and results are cached by content hash.

Performance notes (measured in bench/RESULTS.md): files are read, hashed, decoded and
prefiltered in one streaming pass; relevant files go to the workers in small batches as soon as
there are enough of them to be worth a pool, so the workers' ``import libcst`` overlaps the
rest of that pass; the pool forks (Linux) from a parent that has not imported libcst, and
gets the settings once per worker, not once per file; nothing about processes is imported
unless a pool is started.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .config import Settings, code_matches
from .diagnostics import Diagnostic, FileError
from .prefilter import might_matter
from .suppression import file_is_exempt, line_suppresses

if TYPE_CHECKING:
    from .cache import Cache

# below this many files to parse, worker start-up costs more than it saves
PARALLEL_THRESHOLD = 16
# files per task sent to a worker (or fewer, once a batch holds this much text)
BATCH_FILES = 8
BATCH_CHARS = 64_000


class Result:
    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.errors: list[FileError] = []
        self.files_checked = 0


def decode(data: bytes, filename: str) -> str:
    """Source bytes → text, honouring a BOM or PEP 263 coding cookie (UTF-8 otherwise).

    A cookie sits on the first or second line; when neither says "coding" the answer is
    UTF-8 without asking ``tokenize`` (whose import is ≈ 4 ms of the one-file start-up).
    """
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" not in (data if second < 0 else data[:second]):
        encoding = "utf-8"
    else:
        import tokenize

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise ValueError(f"cannot detect the source encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise ValueError(f"cannot decode as {encoding}: {reason}") from None
    return text.removeprefix("\ufeff")


def extra_modules(settings: Settings) -> tuple[str, ...]:
    names = settings.extend_stateful_agents + settings.extend_memory_classes
    return tuple(sorted({n.split(".")[0] for n in names}))


def lint_text(
    filename: str, text: str, settings: Settings, codes: frozenset[str], *, apply_noqa: bool = True
) -> list[Diagnostic]:
    """Diagnostics for one file's text. Raises ValueError with a clear reason on bad input.

    ``apply_noqa=False`` leaves ``# noqa`` to the host (flake8 applies its own).
    """
    if not codes or not might_matter(text, extra_modules(settings)) or file_is_exempt(text):
        return []
    return _lint_relevant(filename, text, settings, codes, apply_noqa=apply_noqa)


def _lint_relevant(
    filename: str, text: str, settings: Settings, codes: frozenset[str], *, apply_noqa: bool = True
) -> list[Diagnostic]:
    """``lint_text`` for a file that already passed the prefilter (the engine checks it once)."""
    import libcst as cst

    from .parsing import parse_module

    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message}") from None
    except RecursionError:
        raise ValueError("too deeply nested to parse") from None
    pairs = analyse_module(
        filename, module, settings, codes, text=text, apply_noqa=apply_noqa, want_fixes=settings.with_fixes
    )
    if not any(finding.replacement is not None for _, finding in pairs):
        return [diag for diag, _ in pairs]
    from .fixer import fix_for  # the JSON report's ``fix``: edits from the replacement

    return [
        diag._replace(fix=fix_for(module, diag.code, finding)) if finding.replacement is not None else diag
        for diag, finding in pairs
    ]


def analyse_module(
    filename: str,
    module,
    settings: Settings,
    codes: frozenset[str],
    *,
    text: str | None = None,
    apply_noqa: bool = True,
    want_fixes: bool = True,
) -> list:
    """(diagnostic, finding) pairs for a parsed module, sorted, one per diagnostic: the one
    place that builds the model, runs the rules and applies ``# noqa`` (check and fix share it)."""
    from .rules import RuleContext, load
    from .semantic.builder import build_model
    from .semantic.catalog_loader import catalog_for
    from .semantic.positions import Positions

    model = build_model(module, catalog_for(settings), settings)
    ctx = RuleContext(Positions(module), want_fixes=want_fixes)
    rules = load()
    lines: list[str] | None = None
    out: dict[Diagnostic, object] = {}
    for code in sorted(codes):
        for finding in rules[code](model, ctx):
            row, col, end_row, end_col = ctx.positions.range(finding.node)
            if apply_noqa:
                if lines is None:
                    lines = (module.code if text is None else text).splitlines()
                if row <= len(lines) and line_suppresses(lines[row - 1], code):
                    continue
            out.setdefault(Diagnostic(filename, row, col, code, finding.message, end_row, end_col), finding)
    return sorted(out.items(), key=lambda pair: pair[0])


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


Job = tuple[str, str, frozenset[str]]  # filename, text, codes
Outcome = tuple[str, "list[Diagnostic] | None", "str | None"]  # filename, diagnostics, error

_worker_settings: Settings | None = None


def _lint_one(job: Job, settings: Settings) -> Outcome:
    filename, text, codes = job
    try:
        return filename, _lint_relevant(filename, text, settings, codes), None
    except ValueError as exc:
        return filename, None, str(exc)
    except Exception as exc:  # a bug in dupguard must not hide the other files' results
        return filename, None, f"internal error while linting ({type(exc).__name__}: {exc}); please report it"


def _init_worker(settings: Settings) -> None:
    """Per worker, once: keep the settings and import the parsing side before work arrives."""
    global _worker_settings
    _worker_settings = settings
    import libcst  # noqa: F401

    from .rules import load
    from .semantic import builder  # noqa: F401
    from .semantic.catalog_loader import catalog_for

    load()
    catalog_for(settings)


def _lint_batch(jobs: list[Job]) -> list[Outcome]:
    assert _worker_settings is not None
    return [_lint_one(job, _worker_settings) for job in jobs]


class _Runner:
    """Lints relevant files as they are found: in this process, or in a pool once it pays.

    The pool starts when ``PARALLEL_THRESHOLD`` relevant files are waiting (so a tree with
    none never imports libcst or multiprocessing), then takes batches while the caller keeps
    reading. Outcomes come back in submission order, so output does not depend on timing.
    """

    def __init__(self, settings: Settings, jobs: int | None) -> None:
        self.settings = settings
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.waiting: list[Job] = []
        self.waiting_chars = 0
        self.futures: list = []
        self.pool = None

    def add(self, job: Job, files_left: int) -> None:
        """Queue one relevant file; ``files_left``: files not yet read (a bound on what is to come)."""
        self.waiting.append(job)
        self.waiting_chars += len(job[1])
        if self.workers <= 1:
            return
        if self.pool is None and len(self.waiting) >= PARALLEL_THRESHOLD:
            # as before streaming: no more workers than PARALLEL_THRESHOLD files each could get
            self.workers = min(self.workers, (len(self.waiting) + files_left) // PARALLEL_THRESHOLD)
            if self.workers > 1:
                self._start()
        if self.pool is not None and (len(self.waiting) >= BATCH_FILES or self.waiting_chars >= BATCH_CHARS):
            self._submit()

    def _start(self) -> None:
        import multiprocessing
        import sys
        from concurrent.futures import ProcessPoolExecutor

        # fork where it is safe and cheap: workers inherit what the parent has imported
        context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
        self.pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_init_worker, initargs=(self.settings,)
        )

    def _submit(self) -> None:
        if self.waiting:
            assert self.pool is not None
            self.futures.append(self.pool.submit(_lint_batch, self.waiting))
            self.waiting, self.waiting_chars = [], 0

    def results(self) -> list[Outcome]:
        if self.pool is None:
            return [_lint_one(job, self.settings) for job in self.waiting]
        self._submit()
        try:
            return [outcome for future in self.futures for outcome in future.result()]
        finally:
            self.pool.shutdown()


def _open_cache(settings: Settings) -> Cache:
    from .cache import Cache  # hashlib and json: not needed with --no-cache

    directory = Path(settings.root) / settings.cache_dir  # an absolute cache_dir replaces the root
    return Cache(directory, settings.lint_hash(), __version__)


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
    extra = extra_modules(settings)
    cache = _open_cache(settings) if use_cache else None
    runner = _Runner(settings, jobs)
    keys: dict[str, str] = {}
    # errors keep their historical order: unreadable files, then undecodable, then lint errors
    read_errors: list[FileError] = []
    decode_errors: list[FileError] = []

    paths = list(files)

    def sources() -> Iterable[tuple[int, str, bytes | None, str | None]]:
        for index, path in enumerate(paths):
            try:
                yield index, str(path), path.read_bytes(), None
            except IsADirectoryError:
                yield index, str(path), None, "is a directory"
            except PermissionError:
                yield index, str(path), None, "permission denied"
            except OSError as exc:
                yield index, str(path), None, exc.strerror or str(exc)
        if stdin is not None:
            yield len(paths), stdin[0], stdin[1], None

    try:
        for index, filename, data, error in sources():
            if error is not None or data is None:
                read_errors.append(FileError(filename, error or "unreadable"))
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
                decode_errors.append(FileError(filename, str(exc)))
                continue
            if not codes or not might_matter(text, extra) or file_is_exempt(text):
                if cache is not None:
                    cache.put(keys[filename], [])
                continue
            runner.add((filename, text, codes), len(paths) - index)
        outcomes = runner.results()
    finally:
        if runner.pool is not None:
            runner.pool.shutdown(cancel_futures=True)
    result.errors.extend(read_errors)
    result.errors.extend(decode_errors)
    for filename, diagnostics, error in outcomes:
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
