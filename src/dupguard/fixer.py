"""``dupguard fix``: apply the rules' fixes until each file is stable, then write it.

Files come through the same pipeline as ``check`` (pipeline.py: read, decode, gate, one
worker pool); a relevant file gets the :data:`FIX` task instead of the ``lint`` one. Per
file and pass, each finding's fix is built (``dupguard.fixes``: one fix context per pass,
shared by every fix) and every fix that does not conflict with one taken before it is kept
(edits.py: its edits do not touch theirs, its nodes are not inside theirs; the same change
made by two fixes, such as the same import, counts once); the kept fixes are applied by one
transform, and the result is re-parsed, re-analysed and fixed again, at most ``MAX_PASSES``
times (ruff's loop). Which fixes run: the rule's declared safety (``@rule(..., safety=)``)
unless a fix says otherwise for itself, ``--unsafe-fixes``, ``fixable``/``unfixable``.

Safety by construction:

* the text is re-encoded with the encoding it was decoded with (``pipeline.decode``), and
  libcst prints every node it did not change exactly as it was read, so the BOM, coding cookie, newline style, indentation and every byte outside the
  fixed nodes stay as they were;
* a pass whose output does not parse (or no longer compiles when the input did), or a
  file that has not settled after ``MAX_PASSES`` passes, keeps its original content, and
  the rule and file are reported;
* writes go to a temporary file in the same directory, then ``os.replace``, so a run
  killed at any moment leaves each file entirely old or entirely new
  (tests/test_fix_kill.py); the file's mode and owner are kept; a file that changed on disk
  while it was being fixed (content or status, checked again right before the rename) and a
  read-only file are left alone with a message; a file with several hard links is written
  in place, so that the links stay one file (:func:`write_atomic`).
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings, _selected
from .diagnostics import Diagnostic, FileError
from .pipeline import (
    Analysis,
    CollectorPause,
    Job,
    SourceError,
    Task,
    analyse_module,
    check_nesting,
    decode,
    extra_modules,
    gate,
    parse,
    report_order,
    run,
)

if TYPE_CHECKING:
    import libcst as cst

    from .edits import ProposalEdits
    from .fixes import FixProposal
    from .notebook import Notebook
    from .project import ProjectFacts

MAX_PASSES = 10


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
    cell: int = 0  # in a notebook: the cell (``row`` is then the row in that cell)


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
    text: str | None = None  # ``module.code``, kept from the pass that made it (not printed again)


# ----------------------------------------------------------------------------- policy


def fixable(code: str, settings: Settings) -> bool:
    """``fixable`` / ``unfixable`` prefixes, longest prefix wins (as ``select``/``ignore``)."""
    return _selected(code, settings.fixable, settings.unfixable)


# ----------------------------------------------------------------------------- the loop


def analyse(
    filename: str,
    module: cst.Module,
    settings: Settings,
    codes: frozenset[str],
    text: str | None = None,
    project: ProjectFacts | None = None,
) -> Analysis | None:
    """Lint an already parsed module (gated like any file; ``text``: its code, when the caller
    has it; ``project``: the project index's facts for it, as ``check`` has them): its findings
    and their fix context; None when the gate says nothing can be found."""
    if text is None:
        text = module.code
    if not gate(text, codes, extra_modules(settings), project):
        return None
    return analyse_module(filename, module, settings, codes, text=text, project=project)


def _compiles(code: str, filename: str) -> bool:
    try:
        compile(code, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_module(
    filename: str,
    module: cst.Module,
    settings: Settings,
    codes: frozenset[str],
    *,
    unsafe: bool,
    text: str | None = None,
    project: ProjectFacts | None = None,
) -> Outcome:
    """Fix one parsed module (``text``: its code, when the caller has it); on any failure the
    outcome holds the original module and an error."""
    import libcst as cst

    from .edits import Batch, proposal_edits  # libcst: not for a ``fix`` that finds nothing to parse
    from .rules import load

    rules = load()
    original = module
    original_text = text = module.code if text is None else text
    original_compiles: bool | None = None
    applied: list[Applied] = []
    for number in range(1, MAX_PASSES + 2):
        if number > 2:  # the collector may be paused (fix_source): what passes before the last left
            CollectorPause.collect()
        analysis = analyse(filename, module, settings, codes, text, project)
        pairs = analysis.findings if analysis is not None else []
        candidates: list[tuple[Diagnostic, FixProposal, ProposalEdits]] = []
        hidden = 0
        skipped: list[tuple[Diagnostic, str]] = []
        for diag, finding in pairs:
            rule = rules.get(diag.code)
            if rule is None or rule.safety is None or finding.fix is None or not fixable(diag.code, settings):
                continue
            assert analysis is not None
            ctx = analysis.fix_context()
            try:
                proposal = ctx.propose(finding, rule.safety)
                if proposal is None or proposal.refusal or not proposal.replacements:
                    if proposal is not None and proposal.refusal:
                        skipped.append((diag, proposal.refusal))
                    continue
                if proposal.applicability == "unsafe" and not unsafe:
                    hidden += 1
                    continue
                changes = proposal_edits(ctx, proposal)
            except Exception as exc:
                skipped.append((diag, f"internal error building the fix ({type(exc).__name__}: {exc})"))
                continue
            if changes.edits:
                candidates.append((diag, proposal, changes))
        if not candidates:
            remaining = [d for d, _ in pairs]
            return Outcome(filename, module, applied, remaining, hidden, skipped, None, number - 1, text)
        if number > MAX_PASSES:
            rules_text = ", ".join(sorted({d.code for d, *_ in candidates}))
            return _refused(
                filename,
                original,
                settings,
                codes,
                f"fixes for {rules_text} did not settle after {MAX_PASSES} passes; file left unchanged",
                MAX_PASSES,
                original_text,
                project,
            )
        assert analysis is not None
        batch = Batch(analysis.fix_context())
        chosen = [candidate for candidate in candidates if batch.add(candidate[2])]
        rules_text = ", ".join(sorted({d.code for d, *_ in chosen}))
        try:
            new_code, count = batch.apply()
            chosen = chosen[:count]
        except Exception as exc:
            return _refused(
                filename,
                original,
                settings,
                codes,
                f"the {rules_text} fix could not be applied ({type(exc).__name__}: {exc}); "
                "file left unchanged, please report it",
                number,
                original_text,
                project,
            )
        try:
            check_nesting(new_code)  # libcst would crash on it, not raise
            new_module = cst.parse_module(new_code, config=module.config_for_parsing)
        except Exception as exc:  # whatever libcst raises, the file is left as it was
            return _refused(
                filename,
                original,
                settings,
                codes,
                f"the {rules_text} fix produced code that does not parse ({type(exc).__name__}); "
                "file left unchanged, please report it",
                number,
                original_text,
                project,
            )
        if original_compiles is None:
            original_compiles = _compiles(original_text, filename)
        if original_compiles and not _compiles(new_code, filename):
            return _refused(
                filename,
                original,
                settings,
                codes,
                f"the {rules_text} fix produced code that does not compile; file left unchanged, please report it",
                number,
                original_text,
                project,
            )
        for diag, proposal, _ in chosen:
            applied.append(
                Applied(
                    filename,
                    diag.code,
                    diag.row,
                    diag.column,
                    proposal.title or "fixed",
                    proposal.applicability or "unsafe",
                    number,
                )
            )
        module, text = new_module, new_code
    raise AssertionError("unreachable")  # pragma: no cover


def _refused(
    filename: str,
    original: cst.Module,
    settings: Settings,
    codes: frozenset[str],
    error: str,
    passes: int,
    text: str | None = None,
    project: ProjectFacts | None = None,
) -> Outcome:
    """The file as it was (``text``: its code, when the caller has it), with its findings and
    why it was not fixed."""
    analysis = analyse(filename, original, settings, codes, text, project)
    remaining = [d for d, _ in analysis.findings] if analysis is not None else []
    return Outcome(filename, original, [], remaining, error=error, passes=passes, text=text)


# ----------------------------------------------------------------------------- one file


def fix_source(
    filename: str,
    text: str,
    encoding: str,
    settings: Settings,
    codes: frozenset[str],
    *,
    unsafe: bool,
    project: ProjectFacts | None = None,
) -> tuple[Outcome, bytes | None]:
    """Fix one relevant file's text: (outcome, the new bytes or None when nothing changed).

    Raises ``SourceError`` when the text does not parse. The new bytes are the fixed text in
    the file's own encoding; a fix that cannot be written in it is refused like any other.
    """
    with CollectorPause(len(text)):
        outcome = fix_module(filename, parse(text), settings, codes, unsafe=unsafe, text=text, project=project)
    if outcome.error is not None or not outcome.applied:
        return outcome, None
    try:
        return outcome, (outcome.text if outcome.text is not None else outcome.module.code).encode(encoding)
    except UnicodeEncodeError as exc:
        rules = ", ".join(sorted({a.code for a in outcome.applied}))
        error = f"the {rules} fix cannot be written as {encoding}: {exc.reason}; file left unchanged"
        return _refused(filename, parse(text), settings, codes, error, outcome.passes, text, project), None


def fix_bytes(
    filename: str, data: bytes, settings: Settings, codes: frozenset[str], *, unsafe: bool
) -> tuple[Outcome | None, bytes, str | None]:
    """(outcome, new bytes, error) for one file's bytes, by the steps ``fix`` takes.

    An input that cannot be decoded or parsed is an error with no outcome. Like ``check``,
    a file that cannot matter (the pipeline's gate) is not parsed at all: its outcome is
    empty and its bytes are returned as they are.
    """
    try:
        text, encoding = decode(data)
        if not gate(text, codes, extra_modules(settings)):
            return Outcome(filename, None), data, None  # type: ignore[arg-type]
        outcome, fixed = fix_source(filename, text, encoding, settings, codes, unsafe=unsafe)
    except SourceError as exc:
        return None, data, str(exc)
    return outcome, data if fixed is None else fixed, outcome.error


def fix_job(job: Job, settings: Settings) -> tuple[Outcome, bytes | None]:
    """The ``fix`` task for one relevant file (in a worker or not): the outcome travels back
    without its tree, with the new bytes (None: unchanged)."""
    filename, text, encoding, codes, project = job
    outcome, fixed = fix_source(
        filename, text, encoding, settings, codes, unsafe=settings.unsafe_fixes, project=project
    )
    outcome.module = None  # type: ignore[assignment]
    return outcome, fixed


FIX = Task("fixing", fix_job, keeps_source=True)


# ----------------------------------------------------------------------------- files


class WriteRefused(OSError):
    """A fixed file that is deliberately not written; the message says why, for users."""


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """The same file with the same content, as far as its status tells (inode, size, times)."""
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (
        b.st_dev,
        b.st_ino,
        b.st_size,
        b.st_mtime_ns,
        b.st_ctime_ns,
    )


def _read_target(target: str) -> tuple[bytes, os.stat_result]:
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WriteRefused("no longer a regular file; not written")
        return handle.read(), info


# devices on which an unnamed file could not be linked (overlayfs says EXDEV): named temporaries there
_NO_TMPFILE: set[int] = set()


def _fill(fd: int, data: bytes, info: os.stat_result) -> None:
    """The new content, with the old file's mode and owner, flushed to disk."""
    with open(fd, "wb", closefd=False) as handle:
        handle.write(data)
    os.fchmod(fd, stat.S_IMODE(info.st_mode))
    try:
        os.fchown(fd, info.st_uid, info.st_gid)
    except OSError:
        pass  # not ours to give away: the file keeps this user's ownership
    os.fsync(fd)


def _temporary_name(directory: str, name: str, attempt: int) -> str:
    return os.path.join(directory, f".{name}.{os.getpid()}.{attempt}.dupguard")


def _remove_leftovers(directory: str, name: str) -> None:
    """Temporary files an earlier ``fix`` left beside ``name`` when it was killed between
    naming its new content (``_temporary_name``) and renaming it over the file: removed once
    the process that made them is gone (a live one may still be renaming). The long kill test
    found them piling up (bench/RESULTS.md, "Hardening runs")."""
    prefix, suffix = f".{name}.", ".dupguard"
    try:
        entries = os.scandir(directory)
    except OSError:
        return
    with entries:
        for entry in entries:
            if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)):
                continue
            parts = entry.name[len(prefix) : -len(suffix)].split(".")
            if len(parts) != 2 or not all(p.isdigit() for p in parts) or _alive(int(parts[0])):
                continue
            try:
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
            except OSError:
                pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or no way to tell: leave its files alone
        return True
    return True


def _write_new(directory: str, name: str, data: bytes, info: os.stat_result) -> str:
    """A new file in ``directory`` holding ``data``; returns its temporary name.

    Written unnamed (``O_TMPFILE``) and linked to its name only once complete where the
    system allows, so a run killed while writing leaves nothing behind; else created under a
    fresh name with ``O_EXCL | O_NOFOLLOW`` (never through a link).
    """
    if hasattr(os, "O_TMPFILE") and info.st_dev not in _NO_TMPFILE and os.path.isdir("/proc/self/fd"):
        try:
            fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        except OSError:  # a file system without it
            _NO_TMPFILE.add(info.st_dev)
        else:
            try:
                _fill(fd, data, info)
                for attempt in range(100):
                    tmp = _temporary_name(directory, name, attempt)
                    try:
                        os.link(f"/proc/self/fd/{fd}", tmp, follow_symlinks=True)
                    except FileExistsError:
                        continue
                    except OSError:  # it cannot be named here: a named temporary file instead
                        _NO_TMPFILE.add(info.st_dev)
                        break
                    return tmp
            finally:
                os.close(fd)
    for attempt in range(100):
        tmp = _temporary_name(directory, name, attempt)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        try:
            _fill(fd, data, info)
        except BaseException:
            os.unlink(tmp)
            raise
        finally:
            os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name in {directory}")


def write_atomic(path: Path, data: bytes, expected: bytes, before: os.stat_result | None = None) -> None:
    """Replace ``path``'s content ``expected`` (read with status ``before``) with ``data``.

    A symlink is followed (the link stays a link; discovery only lets links within the
    project through). Nothing is written, with a :class:`WriteRefused` saying why, when the
    file no longer holds ``expected`` or its status changed since it was read (someone
    edited it meanwhile: checked once before writing and again right before the rename),
    or when it is read-only (no write permission bit, or not writable by this user). The
    new content goes to a temporary file in the same directory with the mode and owner of
    the old one, flushed to disk, then renamed over it: a run killed at any moment leaves
    the file entirely old or entirely new. A file with several hard links is written in
    place instead (a rename would split the links into two files).
    """
    target = os.path.realpath(path)
    current, info = _read_target(target)
    if current != expected or (before is not None and not _same_file(info, before)):
        raise WriteRefused("changed while it was being fixed; not written")
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise WriteRefused("is read-only; not written")
    if info.st_nlink > 1:
        _write_in_place(target, data, info)
        return
    directory, name = os.path.split(target)
    _remove_leftovers(directory, name)
    tmp: str | None = _write_new(directory, name, data, info)
    try:
        # the last moment to notice an edit made while this file was being written
        if not _same_file(os.stat(target, follow_symlinks=False), info):
            raise WriteRefused("changed while it was being fixed; not written")
        os.replace(tmp, target)  # type: ignore[arg-type]
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _write_in_place(target: str, data: bytes, info: os.stat_result) -> None:
    """Overwrite a hard-linked file's content through one descriptor (not atomic: the price
    of keeping the links one file)."""
    fd = os.open(target, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not _same_file(os.fstat(fd), info):
            raise WriteRefused("changed while it was being fixed; not written")
        with open(fd, "wb", closefd=False) as handle:
            handle.write(data)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class FileResult:
    filename: str
    original: bytes
    fixed: bytes
    outcome: Outcome | None
    error: str | None = None
    is_stdin: bool = False

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
        return sorted((d for f in self.files if f.outcome for d in f.outcome.remaining), key=report_order)

    @property
    def unsafe_hidden(self) -> int:
        return sum(f.outcome.unsafe_hidden for f in self.files if f.outcome)

    @property
    def skipped(self) -> list[tuple[Diagnostic, str]]:
        return [s for f in self.files if f.outcome for s in f.outcome.skipped]

    @property
    def changed(self) -> bool:
        return any(f.changed for f in self.files)


def fix_paths(
    files: Iterable[Path],
    settings: Settings,
    *,
    unsafe: bool,
    write: bool,
    stdin: tuple[str, bytes] | None = None,
    jobs_wanted: int | None = None,
) -> RunResult:
    """Fix every file; write the changed ones when ``write`` (never the stdin source).

    Every file that could be read has a ``FileResult``, in input order; ``errors`` holds the
    files that could not be read, decoded, parsed, fixed safely or written (left as they were).
    """
    done = run(files, settings._replace(unsafe_fixes=unsafe), FIX, jobs=jobs_wanted, stdin=stdin)
    result = RunResult(errors=done.errors)
    for source in done.sources:
        data = source.data
        assert data is not None  # the FIX task keeps the bytes
        file_result = FileResult(source.filename, data, data, None, source.error, is_stdin=source.path is None)
        result.files.append(file_result)
        if source.error is not None:  # already among the pipeline's errors
            continue
        if source.value is None:  # the gate: nothing in this file can be found or fixed
            file_result.outcome = Outcome(source.filename, None)  # type: ignore[arg-type]
            continue
        file_result.outcome, fixed = source.value
        if source.notebook is not None:
            fixed = _notebook_result(file_result.outcome, fixed, source.notebook)
        if file_result.outcome.error is not None:
            file_result.error = file_result.outcome.error
            result.errors.append(FileError(source.filename, file_result.error))
            continue
        if fixed is None:
            continue
        file_result.fixed = fixed
        if write and source.path is not None:
            try:
                write_atomic(source.path, fixed, data, source.stat)
            except WriteRefused as exc:
                file_result.error = str(exc)
            except OSError as exc:
                file_result.error = f"cannot write: {exc.strerror or exc}"
            if file_result.error is not None:
                file_result.fixed = data
                result.errors.append(FileError(source.filename, file_result.error))
    return result


def _notebook_result(outcome: Outcome, fixed: bytes | None, notebook: Notebook) -> bytes | None:
    """A notebook's fix, from the joined cells' text to the notebook's bytes (the changed
    cells' sources spliced into the file as it was: notebook.py), and the outcome's positions
    as cells and rows: the remaining findings in the notebook as fixed, the fixes made in the
    notebook as it was. A change that cannot be written back into the cells is the file's error."""
    from .notebook import InvalidNotebook, NotebookError, load

    after = notebook
    if fixed is not None:
        try:
            fixed = notebook.apply(fixed.decode("utf-8"))
            after = load(fixed)
        except (NotebookError, InvalidNotebook) as exc:
            rules = ", ".join(sorted({a.code for a in outcome.applied}))
            outcome.error = f"the {rules} fix cannot be written back into the notebook: {exc}"
            outcome.applied = []
            fixed = None
            after = notebook
    outcome.remaining = [after.translate(d) for d in outcome.remaining]
    outcome.skipped = [(after.translate(d), why) for d, why in outcome.skipped]
    located = [(a, notebook.locate(a.row)) for a in outcome.applied]
    outcome.applied = [replace(a, row=row, cell=cell) for a, (cell, row) in located]
    return fixed


def unified_diff(result: FileResult) -> str:
    """A ``git apply``-able diff of one file's fix (text decoded with the file's encoding)."""
    old, _ = decode(result.original)
    new, _ = decode(result.fixed)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{result.filename}",
        tofile=f"b/{result.filename}",
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
