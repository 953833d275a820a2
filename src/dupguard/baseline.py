"""``check --baseline FILE`` / ``--write-baseline FILE``: adopt dupguard on a codebase with
findings, and fail only on new ones.

A baseline is a JSON file meant to be committed and reviewed: a ``version`` and the recorded
findings, sorted, one object each::

    {"file": "app/agent.py", "code": "DUP101", "fingerprint": "3f0c9e6b1d2a7c45", "occurrence": 0,
     "source": "agent = ReActAgent.from_tools(tools=[])"}

A finding is known by where it is *in the code*, not by its line number, so that an edit
elsewhere in the file (every line shifted) does not bring it back:

* ``file``: the path relative to the project root (``Settings.root``), with ``/``;
* ``fingerprint``: a hash of the rule code and the flagged lines' text, normalised (each line
  stripped, runs of whitespace made one space, blank lines dropped; in a notebook, the lines
  of the finding's cell), so re-indenting or reflowing whitespace does not change it either;
* ``occurrence``: its index among the file's findings with the same code and fingerprint, in
  position order (two identical statements in one file are two entries);
* ``source``: the first normalised line, for the reviewer; not compared.

The message is not part of the key: it names lines ("bound at module level in
app/agent.py:12"). A finding matches an entry with the same file, code, fingerprint and
occurrence; the others are new, and are all that is reported (and all the exit code counts).
An entry no finding matched is *stale* (fixed, or changed beyond recognition): the run says
how many, and lists them in ``json`` and ``json-lines`` output, so that rewriting the baseline
can drop them. A run given only some files (pre-commit) judges only those: the other files'
entries, and those of a file that could not be processed, are neither stale nor dropped.

Like ruff's options, a baseline is a command-line choice, not a configuration key: ruff has
no baseline, and a key would silently filter every ``check``, the flake8 plugin's and
pre-commit's included (docs/adoption.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from .config import ConfigError, Settings
from .diagnostics import Diagnostic, FileError

VERSION = 1
# lines of a flagged node that the fingerprint reads (a finding on a whole function: its head)
MAX_LINES = 20
_SPACE = re.compile(r"\s+")


class Entry(NamedTuple):
    file: str
    code: str
    fingerprint: str
    occurrence: int
    source: str = ""

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.file, self.code, self.fingerprint, self.occurrence)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "code": self.code,
            "fingerprint": self.fingerprint,
            "occurrence": self.occurrence,
            "source": self.source,
        }


class Scope(NamedTuple):
    """The files a run linted: ``files`` (None: the whole project) but the ``failed`` ones
    (that could not be read, decoded or parsed), as :func:`relative` names them."""

    files: frozenset[str] | None
    failed: frozenset[str]

    def covers(self, file: str) -> bool:
        return file not in self.failed and (self.files is None or file in self.files)


class Comparison(NamedTuple):
    """What a run found against a baseline: the new findings, how many were known, and the
    entries no finding matched."""

    new: list[Diagnostic]
    known: int
    stale: list[Entry]


# ----------------------------------------------------------------------------- fingerprints


class _Sources:
    """The text of the files that have findings, read again once each (a notebook by cell),
    through the pipeline's read and decode steps."""

    def __init__(self) -> None:
        self._files: dict[str, Any] = {}

    def lines(self, d: Diagnostic) -> list[str]:
        from .notebook import split_lines
        from .pipeline import SourceError, decode_source, read

        if d.filename not in self._files:
            try:
                text, _, notebook = decode_source(d.filename, read(Path(d.filename)))
                self._files[d.filename] = notebook if notebook is not None else split_lines(text)
            except SourceError:
                self._files[d.filename] = []
        found = self._files[d.filename]
        if isinstance(found, list):
            return found
        return found.cell_lines(d.cell)


def normalise(lines: Iterable[str]) -> list[str]:
    """Lines as the fingerprint reads them: stripped, inner whitespace made one space, blank ones dropped."""
    out = []
    for line in lines:
        line = _SPACE.sub(" ", line.strip())
        if line:
            out.append(line)
    return out


def fingerprint(code: str, lines: list[str]) -> str:
    return hashlib.sha256("\n".join([code, *lines]).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def relative(filename: str, root: str) -> str:
    """The path a baseline records: relative to the project root with ``/``, else absolute."""
    directory, name = os.path.split(os.path.abspath(filename))
    absolute = os.path.join(os.path.realpath(directory), name)  # the root is a resolved path
    base = os.path.realpath(root)
    if absolute.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, base).replace(os.sep, "/")
    return Path(absolute).as_posix()


def entries(diagnostics: list[Diagnostic], settings: Settings) -> list[tuple[Entry, Diagnostic]]:
    """Each finding's entry (the findings in report order, so occurrences count in position order)."""
    from .pipeline import report_order

    sources = _Sources()
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for d in sorted(diagnostics, key=report_order):
        lines = sources.lines(d)
        end = max(d.end_row or d.row, d.row)
        flagged = normalise(lines[d.row - 1 : min(end, d.row - 1 + MAX_LINES)])
        file = relative(d.filename, settings.root)
        digest = fingerprint(d.code, flagged)
        occurrence = seen.get((file, d.code, digest), 0)
        seen[(file, d.code, digest)] = occurrence + 1
        out.append((Entry(file, d.code, digest, occurrence, flagged[0][:120] if flagged else ""), d))
    return out


# ----------------------------------------------------------------------------- the file


def write(path: str, diagnostics: list[Diagnostic], settings: Settings, scope: Scope | None = None) -> int:
    """Record the findings in ``path`` (sorted, one entry a line); returns how many.

    ``scope``: the files this run linted, when not the whole project: an existing baseline's
    entries for the other files are kept, so recording from pre-commit's changed files, or
    despite a file that did not parse, loses nothing."""
    recorded = [entry for entry, _ in entries(diagnostics, settings)]
    if scope is not None and os.path.exists(path):
        recorded += [entry for entry in load(path) if not scope.covers(entry.file)]
    recorded = sorted(set(recorded))
    body = ",\n".join("    " + json.dumps(entry.to_json(), ensure_ascii=False) for entry in recorded)
    text = f'{{\n  "version": {VERSION},\n  "findings": [\n{body}{chr(10) if body else ""}  ]\n}}\n'
    # a temporary file beside it, then a rename: an interrupted run leaves the old baseline whole
    temporary = os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise ConfigError(f"--write-baseline: {path}: cannot write: {exc.strerror or exc}") from None
    return len(recorded)


def load(path: str) -> list[Entry]:
    """The entries of a baseline file; :class:`ConfigError` (exit 2, one line) when it cannot be used."""
    where = f"--baseline: {path}"
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file (record one with --write-baseline {path})") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{where}: not a dupguard baseline (invalid JSON: {exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("findings"), list):
        raise ConfigError(f'{where}: not a dupguard baseline (expected an object with "version" and "findings")')
    if document.get("version") != VERSION:
        raise ConfigError(
            f"{where}: baseline version {document.get('version')!r} is not supported (this dupguard writes "
            f"version {VERSION}; record it again with --write-baseline)"
        )
    out = []
    for number, item in enumerate(document["findings"], start=1):
        try:
            entry = Entry(
                str(item["file"]),
                str(item["code"]),
                str(item["fingerprint"]),
                int(item["occurrence"]),
                str(item.get("source", "")),
            )
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{where}: finding {number} is not an object with file, code, fingerprint and occurrence"
            ) from None
        out.append(entry)
    return out


def compare(
    known: list[Entry], diagnostics: list[Diagnostic], settings: Settings, scope: Scope | None = None
) -> Comparison:
    """Split this run's findings into the known (in the baseline) and the new, and find the
    stale entries: only among the files the run linted (``scope``; None: the whole project),
    since a file it did not lint found nothing."""
    remaining: dict[tuple[str, str, str, int], Entry] = {}
    for entry in known:
        if scope is None or scope.covers(entry.file):
            remaining.setdefault(entry.key, entry)
    new = []
    matched = 0
    known_keys = {entry.key for entry in known}
    for entry, d in entries(diagnostics, settings):
        if entry.key in known_keys:
            remaining.pop(entry.key, None)
            matched += 1
        else:
            new.append(d)
    from .pipeline import report_order

    return Comparison(sorted(new, key=report_order), matched, sorted(remaining.values()))


# ----------------------------------------------------------------------------- reporting


def summary(path: str, comparison: Comparison) -> str:
    """The line a run with a baseline ends with."""
    known = comparison.known
    line = f"Baseline {path}: {known} known finding{'s' if known != 1 else ''} not reported"
    stale = len(comparison.stale)
    if stale:
        line += (
            f"; {stale} entr{'ies' if stale != 1 else 'y'} no longer found (stale: "
            f"--write-baseline {path} drops {'them' if stale != 1 else 'it'})"
        )
    return line + "."


def stale_json(entry: Entry, settings: Settings) -> dict[str, Any]:
    """A stale entry in ``json``/``json-lines`` output: the finding objects' keys where they
    apply (no position: the baseline records none), and ``"baseline": "stale"``."""
    from .rulemeta import all_rules

    meta = all_rules().get(entry.code)
    return {
        "code": entry.code,
        "name": meta.name if meta else None,
        "message": f"baseline entry no longer found: {entry.source}",
        "filename": os.path.abspath(os.path.join(settings.root, entry.file)),
        "location": None,
        "end_location": None,
        "fix": None,
        "noqa_row": None,
        "url": meta.url if meta else None,
        "cell": None,
        "baseline": "stale",
        "fingerprint": entry.fingerprint,
        "occurrence": entry.occurrence,
    }


def report(
    fmt: str,
    comparison: Comparison,
    errors: list[FileError],
    out: TextIO,
    settings: Settings,
) -> None:
    """The new findings in ``fmt``; in ``json`` and ``json-lines``, each stale entry after them
    (marked ``"baseline": "stale"``, every finding ``"baseline": "new"``)."""
    from . import report as reports

    if fmt not in ("json", "json-lines"):
        reports.get(fmt)(comparison.new, errors, out)
        return
    from .report.machine import to_dict

    items = [{**to_dict(d), "baseline": "new"} for d in comparison.new]
    items += [stale_json(entry, settings) for entry in comparison.stale]
    if fmt == "json":
        json.dump(items, out, indent=2)
        out.write("\n")
    else:
        out.writelines(json.dumps(item) + "\n" for item in items)


def check(
    baseline: str | None,
    write_to: str | None,
    fmt: str,
    diagnostics: list[Diagnostic],
    errors: list[FileError],
    settings: Settings,
    out: TextIO,
    err: TextIO,
    *,
    linted: list[str] | None = None,
    statistics: bool = False,
    quiet: bool = False,
) -> bool:
    """``check`` with ``--baseline`` or ``--write-baseline``, once the files are linted: report,
    and say whether the run failed (new findings, or files that could not be processed).

    ``--write-baseline`` records every finding and reports none (the run fails only on files
    that could not be processed); ``--baseline`` reports the new findings in ``fmt`` and
    ends with :func:`summary` (on stdout after a text report, on stderr after a machine one).
    ``linted``: the files the run was given, when not the whole project; the files among them
    that could not be processed count as not linted (their entries are neither stale nor dropped)."""
    from .report.text import position
    from .report.text import statistics as print_statistics

    scope = None
    if linted is not None or errors:
        scope = Scope(
            frozenset(relative(f, settings.root) for f in linted) if linted is not None else None,
            frozenset(relative(e.filename, settings.root) for e in errors),
        )
    if write_to is not None:
        count = write(write_to, diagnostics, settings, scope)
        err.write(f"Wrote {count} finding{'s' if count != 1 else ''} to the baseline {write_to}.\n")
        return bool(errors)
    assert baseline is not None
    comparison = compare(load(baseline), diagnostics, settings, scope)
    text = fmt not in ("json", "json-lines", "sarif", "github")
    if statistics:
        print_statistics(comparison.new, out)
    elif quiet and text:
        out.writelines(f"{position(d)}: {d.code} {d.message}\n" for d in comparison.new)
    else:
        report(fmt, comparison, errors, out, settings)
    if not quiet or comparison.stale:
        (out if text and not statistics else err).write(summary(baseline, comparison) + "\n")
    return bool(comparison.new or errors)
