"""``dupguard fix``: apply the rules' LibCST replacements until the file is stable.

Rules return fixes as replacements, ``(node, new node or libcst.RemoveFromParent())``; they
never edit text. Here each replacement is applied to the tree, the result printed, and
the difference to the original turned into minimal text edits (the same edits the JSON
report shows). Per pass, every fix whose edits do not touch another chosen fix's edits is
applied (identical edits, such as the same import added by two fixes, count once); the
result is re-parsed, re-linted and fixed again, at most ``MAX_PASSES`` times (ruff's loop).

Safety by construction:

* source bytes are parsed with ``libcst.parse_module(bytes)`` and written back as
  ``module.bytes``, so the encoding (BOM, coding cookie), newline style and indentation
  stay as they were, and every byte outside the fixed nodes is unchanged;
* a pass whose output does not parse (or no longer compiles when the input did), or a
  file that has not settled after ``MAX_PASSES`` passes, keeps its original content, and
  the rule and file are reported;
* writes go to a temporary file in the same directory, then ``os.replace``; the file's
  mode is kept, and a file that changed on disk while it was being fixed is left alone.
"""

from __future__ import annotations

import bisect
import difflib
import os
import stat
import tempfile
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings, _selected
from .diagnostics import Diagnostic, Edit, FileError, Fix

if TYPE_CHECKING:
    import libcst as cst

    from .rules import Finding

MAX_PASSES = 10
PARALLEL_THRESHOLD = 16  # below this many files, starting workers costs more than it saves


@dataclass(frozen=True, order=True)
class TextEdit:
    """Replace ``code[start:end]`` with ``content`` (offsets into ``module.code``)."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Applied:
    """One fix that was made: where (in the file as it was before that pass) and what."""

    filename: str
    code: str
    row: int
    column: int
    message: str
    applicability: str
    pass_number: int


@dataclass
class Outcome:
    """The result of fixing one file."""

    filename: str
    module: cst.Module
    applied: list[Applied] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    unsafe_hidden: int = 0  # remaining findings with an unsafe fix that was not enabled
    skipped: list[tuple[Diagnostic, str]] = field(default_factory=list)  # fix refused, why
    error: str | None = None
    passes: int = 0


# ----------------------------------------------------------------------------- policy


def applicability(code: str) -> str | None:
    """``"safe"``, ``"unsafe"`` or None (no fix), from the rule's ``rule.toml``."""
    from .rulemeta import all_rules

    meta = all_rules().get(code)
    return meta.fix if meta is not None and meta.fix in ("safe", "unsafe") else None


def fixable(code: str, settings: Settings) -> bool:
    """``fixable`` / ``unfixable`` prefixes, longest prefix wins (as ``select``/``ignore``)."""
    return _selected(code, settings.fixable, settings.unfixable)


# ----------------------------------------------------------------------------- analysis


def analyse(
    filename: str, module: cst.Module, settings: Settings, codes: frozenset[str]
) -> list[tuple[Diagnostic, Finding]]:
    """Lint an already parsed module, keeping the findings with their replacements."""
    from .engine import analyse_module, extra_modules
    from .prefilter import might_matter
    from .suppression import file_is_exempt

    text = module.code
    if not codes or file_is_exempt(text) or not might_matter(text, extra_modules(settings)):
        return []
    return analyse_module(filename, module, settings, codes, text=text)


def replacement_edits(module: cst.Module, replacement: tuple, old_code: str | None = None) -> tuple[TextEdit, ...]:
    """The minimal text edits that turn ``module`` into ``module`` with ``replacement`` applied."""
    import libcst as cst

    node, new = replacement
    if node is module:
        new_module = new
    elif isinstance(new, cst.RemovalSentinel):
        new_module = module.deep_remove(node)
    else:
        new_module = module.deep_replace(node, new)
    if not isinstance(new_module, cst.Module):
        raise ValueError("the replacement removed the whole module")
    old = module.code if old_code is None else old_code
    return text_edits(old, new_module.code)


def text_edits(old: str, new: str) -> tuple[TextEdit, ...]:
    """Line-level diff, each changed hunk trimmed to the characters that differ."""
    if old == new:
        return ()
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[head + i1], starts[head + i2]
        old_part, new_part = old[start:end], "".join(b[head + j1 : head + j2])
        prefix = 0
        limit = min(len(old_part), len(new_part))
        while prefix < limit and old_part[prefix] == new_part[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and old_part[-1 - suffix] == new_part[-1 - suffix]:
            suffix += 1
        edits.append(TextEdit(start + prefix, end - suffix, new_part[prefix : len(new_part) - suffix]))
    return tuple(edits)


def apply_edits(code: str, edits: Iterable[TextEdit]) -> str:
    for edit in sorted(set(edits), reverse=True):
        code = code[: edit.start] + edit.content + code[edit.end :]
    return code


_CODE: list = []


def fix_for(module: cst.Module, code: str, finding: Finding) -> Fix | None:
    """``Diagnostic.fix`` for the JSON report: applicability, message, row/column edits."""
    kind = applicability(code)
    if kind is None or finding.replacement is None:
        return None
    if not _CODE or _CODE[0] is not module:  # printing the module once per file, not per finding
        _CODE[:] = [module, module.code, None]
    old = _CODE[1]
    try:
        edits = replacement_edits(module, finding.replacement, old)
    except Exception:  # a fix that cannot be printed is no fix; the finding still stands
        return None
    if not edits:
        return None
    if _CODE[2] is None:
        _CODE[2] = _line_starts(old)
    starts = _CODE[2]
    out = []
    for edit in edits:
        row, col = _row_col(starts, edit.start)
        end_row, end_col = _row_col(starts, edit.end)
        out.append(Edit(edit.content, row, col, end_row, end_col))
    return Fix(kind, finding.fix_message or "Apply the fix", tuple(out))


def _line_starts(code: str) -> list[int]:
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _row_col(starts: list[int], offset: int) -> tuple[int, int]:
    index = bisect.bisect_right(starts, offset) - 1
    index = min(index, len(starts) - 1)
    return index + 1, offset - starts[index]


# ----------------------------------------------------------------------------- the loop


def _conflicts(edits: tuple[TextEdit, ...], taken: set[TextEdit]) -> bool:
    for edit in edits:
        for other in taken:
            if edit == other:
                continue
            if edit.start <= other.end and other.start <= edit.end:
                return True
    return False


def _compiles(code: str, filename: str) -> bool:
    try:
        compile(code, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_module(
    filename: str, module: cst.Module, settings: Settings, codes: frozenset[str], *, unsafe: bool
) -> Outcome:
    """Fix one parsed module; on any failure the outcome holds the original module and an error."""
    import libcst as cst

    original = module
    original_compiles: bool | None = None
    applied: list[Applied] = []
    for number in range(1, MAX_PASSES + 2):
        code_text = module.code
        pairs = analyse(filename, module, settings, codes)
        candidates: list[tuple[Diagnostic, Finding, str, tuple[TextEdit, ...]]] = []
        hidden = 0
        skipped: list[tuple[Diagnostic, str]] = []
        for diag, finding in pairs:
            kind = applicability(diag.code)
            if kind is None or not fixable(diag.code, settings):
                continue
            if finding.replacement is None:
                if finding.fix_message:
                    skipped.append((diag, finding.fix_message))
                continue
            if kind == "unsafe" and not unsafe:
                hidden += 1
                continue
            try:
                edits = replacement_edits(module, finding.replacement, code_text)
            except Exception as exc:  # a rule bug: keep going, say which rule
                skipped.append((diag, f"internal error building the fix ({type(exc).__name__}: {exc})"))
                continue
            if edits:
                candidates.append((diag, finding, kind, edits))
        if not candidates:
            return Outcome(filename, module, applied, [d for d, _ in pairs], hidden, skipped, None, number - 1)
        if number > MAX_PASSES:
            rules = ", ".join(sorted({d.code for d, *_ in candidates}))
            return Outcome(
                filename,
                original,
                [],
                [d for d, _ in analyse(filename, original, settings, codes)],
                error=f"fixes for {rules} did not settle after {MAX_PASSES} passes; file left unchanged",
                passes=MAX_PASSES,
            )
        taken: set[TextEdit] = set()
        chosen = []
        for candidate in candidates:
            if _conflicts(candidate[3], taken):
                continue
            taken.update(candidate[3])
            chosen.append(candidate)
        new_code = apply_edits(code_text, taken)
        rules = ", ".join(sorted({d.code for d, *_ in chosen}))
        try:
            new_module = cst.parse_module(new_code, config=module.config_for_parsing)
        except Exception as exc:
            return Outcome(
                filename,
                original,
                [],
                [d for d, _ in analyse(filename, original, settings, codes)],
                error=f"the {rules} fix produced code that does not parse ({type(exc).__name__}); "
                "file left unchanged, please report it",
                passes=number,
            )
        if original_compiles is None:
            original_compiles = _compiles(original.code, filename)
        if original_compiles and not _compiles(new_code, filename):
            return Outcome(
                filename,
                original,
                [],
                [d for d, _ in analyse(filename, original, settings, codes)],
                error=f"the {rules} fix produced code that does not compile; file left unchanged, please report it",
                passes=number,
            )
        for diag, finding, kind, _ in chosen:
            applied.append(
                Applied(filename, diag.code, diag.row, diag.column, finding.fix_message or "fixed", kind, number)
            )
        module = new_module
    raise AssertionError("unreachable")  # pragma: no cover


def fix_bytes(
    filename: str, data: bytes, settings: Settings, codes: frozenset[str], *, unsafe: bool
) -> tuple[Outcome | None, bytes, str | None]:
    """(outcome, new bytes, error). An input that cannot be decoded or parsed is an error.

    Like ``check``, a file that cannot matter (the prefilter's text test) is not parsed at
    all: its outcome is empty and its bytes are returned as they are.
    """
    import libcst as cst

    from .engine import decode, extra_modules
    from .prefilter import might_matter
    from .suppression import file_is_exempt

    try:
        text = decode(data, filename)
    except ValueError as exc:
        return None, data, str(exc)
    if not codes or file_is_exempt(text) or not might_matter(text, extra_modules(settings)):
        return Outcome(filename, None), data, None  # type: ignore[arg-type]
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return None, data, f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message}"
    except RecursionError:
        return None, data, "too deeply nested to parse"
    except (UnicodeDecodeError, LookupError, SyntaxError) as exc:
        return None, data, f"cannot decode: {exc}"
    outcome = fix_module(filename, module, settings, codes, unsafe=unsafe)
    if outcome.error is not None or not outcome.applied:
        return outcome, data, outcome.error
    return outcome, outcome.module.bytes, None


def _fix_job(job: tuple[str, bytes, Settings, frozenset[str], bool]) -> tuple[Outcome | None, bytes, str | None]:
    """One file, in a worker process: the outcome travels back without its tree."""
    filename, data, settings, codes, unsafe = job
    try:
        outcome, fixed, error = fix_bytes(filename, data, settings, codes, unsafe=unsafe)
    except Exception as exc:  # a bug in dupguard must not hide the other files
        return None, data, f"internal error while fixing ({type(exc).__name__}: {exc}); please report it"
    if outcome is not None:
        outcome.module = None  # type: ignore[assignment]
    return outcome, fixed, error


# ----------------------------------------------------------------------------- files


def write_atomic(path: Path, data: bytes, expected: bytes) -> None:
    """Replace ``path``'s content with ``data`` via a temporary file in the same directory.

    A symlink is followed (the link stays a link); the mode is kept; if the file no longer
    holds ``expected`` (someone edited it meanwhile) nothing is written.
    """
    target = Path(os.path.realpath(path))
    info = target.stat()
    if target.read_bytes() != expected:
        raise OSError(f"{path} changed while it was being fixed; not written")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".dupguard", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        try:
            os.chown(tmp, info.st_uid, info.st_gid)
        except (PermissionError, AttributeError):
            pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@dataclass
class FileResult:
    filename: str
    original: bytes
    fixed: bytes
    outcome: Outcome | None
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.fixed != self.original


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)

    @property
    def applied(self) -> list[Applied]:
        return [a for f in self.files if f.outcome for a in f.outcome.applied if f.error is None]

    @property
    def remaining(self) -> list[Diagnostic]:
        return sorted(d for f in self.files if f.outcome for d in f.outcome.remaining)

    @property
    def unsafe_hidden(self) -> int:
        return sum(f.outcome.unsafe_hidden for f in self.files if f.outcome)

    @property
    def skipped(self) -> list[tuple[Diagnostic, str]]:
        return [s for f in self.files if f.outcome for s in f.outcome.skipped]


def fix_paths(
    files: Iterable[Path],
    settings: Settings,
    *,
    unsafe: bool,
    write: bool,
    stdin: tuple[str, bytes] | None = None,
    jobs_wanted: int | None = None,
) -> RunResult:
    """Fix every file; write the changed ones when ``write`` (never the stdin source)."""
    from .engine import codes_for_file

    result = RunResult()
    enabled = settings.enabled_codes()
    sources: list[tuple[str, Path | None, bytes | None, str | None]] = []
    for path in files:
        try:
            sources.append((str(path), path, path.read_bytes(), None))
        except IsADirectoryError:
            sources.append((str(path), path, None, "is a directory"))
        except PermissionError:
            sources.append((str(path), path, None, "permission denied"))
        except OSError as exc:
            sources.append((str(path), path, None, exc.strerror or str(exc)))
    if stdin is not None:
        sources.append((stdin[0], None, stdin[1], None))
    readable = [(f, p, d) for f, p, d, _ in sources if d is not None]
    jobs = [(f, d, settings, codes_for_file(f, settings, enabled), unsafe) for f, _, d in readable]
    workers = min(jobs_wanted or os.cpu_count() or 1, len(jobs) // PARALLEL_THRESHOLD or 1)
    if workers <= 1:
        done = [_fix_job(job) for job in jobs]
    else:  # files are independent: fix them in parallel, write them here
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(_fix_job, jobs, chunksize=max(1, len(jobs) // (workers * 8))))
    for filename, _, data, error in sources:
        if data is None:
            result.errors.append(FileError(filename, error or "unreadable"))
    for (filename, path, data), (outcome, fixed, error) in zip(readable, done):
        file_result = FileResult(filename, data, fixed, outcome, error)
        if error is not None:
            result.errors.append(FileError(filename, error))
        elif write and path is not None and fixed != data:
            try:
                write_atomic(path, fixed, data)
            except OSError as exc:
                file_result.error = str(exc) if "changed while" in str(exc) else f"cannot write: {exc.strerror or exc}"
                file_result.fixed = data
                result.errors.append(FileError(filename, file_result.error))
        result.files.append(file_result)
    return result


def unified_diff(result: FileResult) -> str:
    """A ``git apply``-able diff of one file's fix (text decoded with the file's encoding)."""
    from .engine import decode

    old = decode(result.original, result.filename)
    new = decode(result.fixed, result.filename)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{result.filename}",
        tofile=f"b/{result.filename}",
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)


# ----------------------------------------------------------------------------- command


def run_command(
    paths: list[str],
    settings: Settings,
    *,
    unsafe: bool,
    diff: bool,
    show_fixes: bool,
    quiet: bool = False,
    exit_zero: bool = False,
    output_format: str | None = None,
    stdin: tuple[str, bytes] | None = None,
    jobs: int | None = None,
    out=None,
    err=None,
) -> int:
    """``dupguard fix`` / ``check --fix``: ruff's exit codes.

    0: nothing left (or ``--diff`` and nothing would change); 1: findings remain after fixing
    (or ``--diff`` and something would change); 2: a file could not be read, parsed, fixed
    safely or written (it is left as it was).
    """
    import sys

    from .discovery import discover

    out = out or sys.stdout
    err = err or sys.stderr
    found = discover(paths, settings) if paths else None
    files = found.files if found else []
    result = fix_paths(files, settings, unsafe=unsafe, write=not diff, stdin=stdin, jobs_wanted=jobs)
    errors = (found.errors if found else []) + result.errors
    for error in errors:
        err.write(f"dupguard: error: {error}\n")
    info = err if diff else out  # with --diff, stdout is only the patch
    if diff:
        for file_result in result.files:
            if file_result.changed and file_result.outcome is not None:
                out.write(unified_diff(file_result))
    elif stdin is not None:
        for file_result in result.files:
            if file_result.outcome is not None and file_result.filename == stdin[0]:
                out.buffer.write(file_result.fixed) if hasattr(out, "buffer") else out.write(file_result.fixed.decode())
                info = err
    applied = result.applied
    if show_fixes and applied:
        verb = "Would fix" if diff else "Fixed"
        info.write(f"{verb} {len(applied)} finding{'s' if len(applied) != 1 else ''}:\n")
        for a in applied:
            info.write(
                f"  {a.filename}:{a.row}:{a.column + 1}: {a.code} {a.message}"
                f"{' (unsafe)' if a.applicability == 'unsafe' else ''}\n"
            )
    remaining = result.remaining
    reasons = {(d.filename, d.row, d.column, d.code): why for d, why in result.skipped}
    if not diff:
        if output_format in ("json", "json-lines", "sarif", "github"):
            from . import report

            report.get(output_format)(remaining, errors, info)
        else:
            for d in remaining:
                info.write(f"{d.filename}:{d.row}:{d.column + 1}: {d.code} {d.message}\n")
                why = reasons.get((d.filename, d.row, d.column, d.code))
                if why and not quiet:
                    info.write(f"  note: no automatic fix: {why}\n")
    if not quiet and output_format not in ("json", "json-lines", "sarif", "github"):
        info.write(_summary(len(applied), len(remaining), result.unsafe_hidden, diff) + "\n")
    if errors:
        return 2
    if diff:
        return 1 if any(f.changed for f in result.files) else 0
    if exit_zero:
        return 0
    return 1 if remaining else 0


def _summary(fixed: int, remaining: int, hidden: int, diff: bool) -> str:
    def n(count: int, word: str) -> str:
        return f"{count} {word}{'s' if count != 1 else ''}"

    if diff:
        text = f"Would fix {n(fixed, 'finding')}." if fixed else "No fixes available."
    elif fixed or remaining:
        text = f"Fixed {n(fixed, 'finding')}, {n(remaining, 'finding')} remaining."
    else:
        text = "All checks passed!"
    if hidden:
        text += (
            f" {hidden} more fix{'es' if hidden != 1 else ''} available with `--unsafe-fixes`"
            f" ({'it' if hidden == 1 else 'they'} may change behaviour; review the diff)."
        )
    return text
