"""``check --add-noqa``: suppress every current finding where it is, with ``# noqa: CODE``
(ruff's flag), the other way to adopt dupguard on a codebase with findings.

It is a task of the pipeline, as ``fix`` is (pipeline.py: read, decode, gate, one worker
pool): each relevant file is linted and given its comments in one go, and the parent
writes the changed files through ``fix``'s safe write (fixer.write_atomic: the file must
still hold what was read, read-only files are refused, the replacement is atomic). A
notebook gets its comments in its cells (notebook.py writes only the changed cells back).

Where the comment goes is where dupguard's ``# noqa`` reading looks (suppression.py, applied
in ``pipeline.analyse_module``): the end of the line a finding starts on. That line may open
a bracket (``agent = Agent(`` takes a comment), but a comment cannot go where the line ends
inside a string (a triple-quoted string that goes on) or after a ``\\`` continuation; such
findings are left alone and counted. A line with a ``# noqa: X`` gets the code added to its
list (``# noqa: X, DUP101``); a line with another comment gets ``  # noqa: DUP101`` after it.
The result must have the same syntax tree as the file had (comments are not part of it) and
every comment must suppress what it was added for; otherwise the file is left as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from .config import Settings
from .diagnostics import Diagnostic, FileError
from .pipeline import Job, SourceError, Task, lint_job, run
from .suppression import _NOQA, line_suppresses


class Added(NamedTuple):
    """What one file got: comments added, findings suppressed, findings that could not be, the new text."""

    directives: int
    suppressed: int
    skipped: list[tuple[int, str]]  # (row, why)
    text: str | None


class NoqaResult:
    def __init__(self) -> None:
        self.directives = 0
        self.suppressed = 0
        self.files = 0
        self.skipped: list[tuple[str, int | str, str]] = []  # filename, row (or "cell N:row"), why
        self.errors: list[FileError] = []


def _line_facts(text: str) -> tuple[set[int], dict[int, tuple[int, str]]]:
    """The rows whose end lies inside a string, and each row's comment (column, text), from
    the tokenizer (which knows strings and comments; a text search does not)."""
    import io
    import tokenize

    in_string: set[int] = set()
    comments: dict[int, tuple[int, str]] = {}
    string_kinds = {tokenize.STRING}
    for name in ("FSTRING_MIDDLE", "TSTRING_MIDDLE"):
        if hasattr(tokenize, name):
            string_kinds.add(getattr(tokenize, name))
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in string_kinds and token.end[0] > token.start[0]:
            in_string.update(range(token.start[0], token.end[0]))
        elif token.type == tokenize.COMMENT:
            comments[token.start[0]] = (token.start[1], token.string)
    return in_string, comments


def add_noqa(text: str, diagnostics: Iterable[Diagnostic]) -> Added:
    """``text`` with a ``# noqa`` for every finding in ``diagnostics`` (rows of ``text``)."""
    from .notebook import split_lines

    by_row: dict[int, set[str]] = {}
    for d in diagnostics:
        by_row.setdefault(d.row, set()).add(d.code)
    if not by_row:
        return Added(0, 0, [], None)
    try:
        in_string, comments = _line_facts(text)
    except (SyntaxError, ValueError) as exc:  # tokenize.TokenError is neither, but its base is Exception
        return Added(0, 0, [(row, f"cannot tokenize the file ({exc})") for row in sorted(by_row)], None)
    except Exception as exc:
        return Added(0, 0, [(row, f"cannot tokenize the file ({type(exc).__name__})") for row in sorted(by_row)], None)
    lines = split_lines(text)
    skipped: list[tuple[int, str]] = []
    directives = suppressed = 0
    for row, codes in sorted(by_row.items()):
        if row > len(lines):
            skipped.append((row, "the line is past the end of the file"))
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        wanted = ", ".join(sorted(codes))
        if row in in_string:
            skipped.append((row, "the line ends inside a string, where a comment cannot go"))
            continue
        comment = comments.get(row)
        if comment is None and body.rstrip().endswith("\\"):
            skipped.append((row, "the line ends with a `\\` continuation, where a comment cannot go"))
            continue
        if comment is not None:
            column, existing = comment
            match = re.search(_NOQA, existing, re.IGNORECASE)
            if match is not None and not match.group("codes"):
                continue  # a noqa comment without codes suppresses everything already
            if match is not None:
                at = column + match.end("codes")
                body = body[:at] + ", " + wanted + body[at:]
            else:
                body = body.rstrip() + "  # noqa: " + wanted
        else:
            body = body.rstrip() + "  # noqa: " + wanted
        lines[row - 1] = body + ending
        directives += 1
        suppressed += len(codes)
    if not directives:
        return Added(0, 0, skipped, None)
    new = "".join(lines)
    problem = _changed_code(text, new) or next(
        (
            f"line {row} would not suppress {code}"
            for row, codes in by_row.items()
            if row not in {r for r, _ in skipped}
            for code in codes
            if not line_suppresses(split_lines(new)[row - 1], code)
        ),
        None,
    )
    if problem:
        return Added(0, 0, [(row, f"{problem}; file left unchanged") for row in sorted(by_row)], None)
    return Added(directives, suppressed, skipped, new)


def _changed_code(old: str, new: str) -> str | None:
    """Why ``new`` is not ``old`` with comments added (None: it is): its syntax tree must be
    the same, or, for a text Python's own parser refuses, libcst must parse it."""
    import ast

    try:
        before = ast.dump(ast.parse(old))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        from .pipeline import parse

        try:
            parse(new)
        except SourceError as exc:
            return f"the comments would make the file unparsable ({exc})"
        return None
    try:
        after = ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"the comments would make the file unparsable ({exc})"
    return None if after == before else "the comments would change the code"


def noqa_job(job: Job, settings: Settings) -> tuple[Added, bytes | None]:
    """The task for one relevant file: lint it, add the comments; (what was added, the new bytes or None)."""
    _, text, encoding, _, _ = job
    added = add_noqa(text, lint_job(job, settings))
    if added.text is None:
        return added, None
    try:
        return added._replace(text=None), added.text.encode(encoding)
    except UnicodeEncodeError as exc:
        return Added(0, 0, [(0, f"cannot be written as {encoding}: {exc.reason}")], None), None


ADD_NOQA = Task("adding noqa comments", noqa_job, keeps_source=True)


def add_noqa_paths(files: Iterable[Path], settings: Settings, *, jobs: int | None = None) -> NoqaResult:
    """Add the comments to every file with findings and write the changed ones safely."""
    from .fixer import WriteRefused, write_atomic
    from .notebook import NotebookError

    done = run(files, settings._replace(with_fixes=False), ADD_NOQA, jobs=jobs)
    result = NoqaResult()
    result.errors.extend(done.errors)
    for source in done.sources:
        if source.error is not None or source.value is None:
            continue
        added, new = source.value
        notebook = source.notebook
        for row, why in added.skipped:
            where = row if notebook is None or not row else "cell {}:{}".format(*notebook.locate(row))
            result.skipped.append((source.filename, where, why))
        if new is None or source.path is None:
            continue
        try:
            if notebook is not None:
                new = notebook.apply(new.decode("utf-8"))
            assert source.data is not None
            write_atomic(source.path, new, source.data, source.stat)
        except (WriteRefused, NotebookError) as exc:
            result.errors.append(FileError(source.filename, str(exc)))
            continue
        except OSError as exc:
            result.errors.append(FileError(source.filename, f"cannot write: {exc.strerror or exc}"))
            continue
        result.files += 1
        result.directives += added.directives
        result.suppressed += added.suppressed
    return result


def report(result: NoqaResult, err: object) -> None:
    """What was done, ruff's words first: ``Added N noqa directives.``"""
    from typing import TextIO, cast

    stream = cast(TextIO, err)
    for filename, row, why in result.skipped:
        stream.write(f"dupguard: warning: {filename}:{row}: no noqa comment added: {why}\n")
    n = result.directives
    stream.write(f"Added {n} noqa directive{'s' if n != 1 else ''}.\n")
