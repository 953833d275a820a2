"""What an editor asks about one open file, answered with the CLI's own pieces: the language
server's engine (``dupguard server``, :mod:`dupguard.server`), free of any protocol library so
that it can be tested and measured on its own (tests/test_server_lsp.py, bench/lsp_bench.py).

An editor holds files that differ from the disk: the buffer being typed is the truth for that
file. Everything else is what ``dupguard check`` does for the file at that path:

* **configuration**: the nearest ``dupguard.toml`` / ``pyproject.toml`` with a ``[tool.dupguard]``
  table *above the file* (``config.find_config``), so each project of a monorepo that is open
  in one editor window gets its own settings; without one, the defaults rooted at the
  workspace folder that holds the file. The catalog extensions, ``per-file-ignores``, the
  test-module rule, ``exclude``/``extend-exclude`` (as ``check --force-exclude`` applies them to
  a named file) and ``max-file-size`` all apply. A configuration dupguard cannot use is shown
  as an error on the file, never replaced by the defaults (a typo must not turn rules off);
* **the project index** (``dupguard.project``): one :class:`~dupguard.project.ProjectLink` per
  project root, built on the first file that imports a project module and kept while the
  editor types (that is what makes re-linting after an edit cheap: bench/RESULTS.md), dropped
  when a file is saved or changes on disk (:meth:`Engine.invalidate`). The buffer's text is
  passed to it as not being on disk (``on_disk=False``), so the answer is computed for the
  buffer and not taken from a previous run's answers for the saved file. The other files the
  editor holds unsaved are read from their buffers too: an index of its own
  (:meth:`Engine.buffer_link`) whose ``_read`` takes their text, built without the cache files
  (which describe the disk, for the CLI's next run); the rest of the tree is read from disk;
* **findings, fixes and suppressions**: ``pipeline.lint_text`` for the findings (the flake8
  plugin's entry), the same call with ``with_fixes`` for each finding's fix (the report's fix,
  ``edits.ReportFixes``, as ``check --output-format json`` shows it), ``fixer.fix_source`` for
  "fix all" (the loop ``dupguard fix`` runs, safe fixes only), and ``# noqa`` comments read by
  ``suppression``'s own pattern.

Positions: dupguard's rows are libcst's lines (broken at ``\\r\\n``, ``\\r`` or ``\\n``, the same
breaks as the Language Server Protocol's) and its columns count code points; a fix's edits
count rows as ``edits.line_starts`` does. Both are turned into offsets in the text here, and
:class:`LineIndex` turns offsets into the client's units (UTF-16 unless it negotiated UTF-8 or
UTF-32) and back. Bad input (a syntax error, an unsaved half-typed line, a file too deeply
nested, a configuration error) is a :class:`Problem` on the file, never an exception.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from bisect import bisect_right
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .config import ConfigError, Settings, find_config, resolve
from .diagnostics import Diagnostic
from .pipeline import TOO_DEEP_TO_ANALYSE, SourceError, codes_for_file, lint_text

if TYPE_CHECKING:
    from .diagnostics import Fix
    from .project import ProjectFacts, ProjectLink

_BREAK = re.compile(r"\r\n|\r|\n")  # the protocol's line breaks, and libcst's
_SYNTAX_AT = re.compile(r"at line (\d+), column (\d+)")  # pipeline.parse's wording

# the kinds of problem that stop a file from being linted
SYNTAX = "syntax"
CONFIG = "config"
SKIPPED = "skipped"
INTERNAL = "internal"


class LineIndex:
    """Offsets in a text ↔ (line, character) in a client's position encoding."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def line_end(self, line: int) -> int:
        """The offset where ``line`` (0-based) ends, before its line break."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            return end - 2 if self.text.startswith("\r\n", end - 2) else end - 1
        return len(self.text)

    def line_text(self, line: int) -> str:
        if line >= len(self.starts):
            return ""
        return self.text[self.starts[line] : self.line_end(line)]

    def offset_of(self, row: int, column: int) -> int:
        """A dupguard position (1-based row, 0-based code-point column) → an offset, clamped to
        the line."""
        line = min(max(row - 1, 0), len(self.starts) - 1)
        return min(self.starts[line] + max(column, 0), self.line_end(line))

    def position(self, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
        """An offset → (0-based line, character in ``encoding``'s units)."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect_right(self.starts, offset) - 1
        offset = min(offset, self.line_end(line))  # inside a "\r\n": the end of the line
        return line, _units(self.text[self.starts[line] : offset], encoding)

    def offset(self, line: int, character: int, encoding: str = "utf-16") -> int:
        """(line, character in ``encoding``'s units) → an offset; past the end of a line is its
        end, past the last line the end of the text (as the protocol says)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self.line_end(line)
        if encoding == "utf-32":
            return min(start + max(character, 0), end)
        units = 0
        for index in range(start, end):
            if units >= character:
                return index
            units += _units(self.text[index], encoding)
        return end


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)  # UTF-16: two units above the BMP


class Finding(NamedTuple):
    """One diagnostic and the span of text it covers (offsets)."""

    diagnostic: Diagnostic
    start: int
    end: int


class Problem(NamedTuple):
    """Why a file was not linted (a syntax error, a configuration error, a file too large or
    too deeply nested, an internal error), and where to show it (offsets)."""

    kind: str
    message: str
    start: int = 0
    end: int = 0


class TextEdit(NamedTuple):
    """Replace ``text[start:end]`` with ``content``."""

    start: int
    end: int
    content: str


class QuickFix(NamedTuple):
    """A finding's fix as an editor offers it: title, applicability ("safe" or "unsafe"), edits."""

    finding: Finding
    title: str
    applicability: str
    edits: tuple[TextEdit, ...]


class Report:
    """One linted text: its findings or the problem that stopped it, and what code actions are
    built from (the settings, enabled codes and project facts it was linted with)."""

    def __init__(
        self,
        filename: str,
        text: str,
        *,
        settings: Settings | None = None,
        codes: frozenset[str] = frozenset(),
        facts: ProjectFacts | None = None,
        diagnostics: list[Diagnostic] | None = None,
        problem: Problem | None = None,
    ) -> None:
        self.filename = filename
        self.text = text
        self.settings = settings
        self.codes = codes
        self.facts = facts
        self.problem = problem
        self.lines = LineIndex(text)
        self.findings = [self._finding(d) for d in diagnostics or ()]
        self._fixes: list[QuickFix] | None = None
        self._fix_all: tuple[TextEdit, ...] | None = None
        self.buffers: frozenset[tuple[str, str]] = frozenset()  # the other files' unsaved buffers it saw

    def _finding(self, d: Diagnostic) -> Finding:
        start = self.lines.offset_of(d.row, d.column)
        end = self.lines.offset_of(d.end_row, d.end_column) if d.end_row else start
        return Finding(d, start, max(start, end))

    def at(self, start: int, end: int | None = None) -> list[Finding]:
        """The findings whose span meets ``[start, end]``."""
        end = start if end is None else end
        return [f for f in self.findings if f.start <= end and start <= f.end]

    # ------------------------------------------------------------------ fixes

    def fixes(self) -> list[QuickFix]:
        """Each finding's fix that ``fixable``/``unfixable`` allow, as the CLI's report builds it
        (``check --output-format json``); built on first request, once per text."""
        if self._fixes is None:
            self._fixes = self._build_fixes() if self.findings and self.settings is not None else []
        return self._fixes

    def _build_fixes(self) -> list[QuickFix]:
        from .edits import line_starts
        from .fixer import fixable

        assert self.settings is not None
        settings = self.settings._replace(with_fixes=True)
        try:
            with_fixes = lint_text(self.filename, self.text, settings, self.codes, project=self.facts)
        except Exception:  # the text linted a moment ago; anything now is no fix, not a crash
            return []
        by_diagnostic = {f.diagnostic: f for f in self.findings}
        starts: list[int] | None = None
        out = []
        for d in with_fixes:
            finding = by_diagnostic.get(d._replace(fix=None))
            fix: Fix | None = d.fix
            if finding is None or fix is None or not fix.edits or not fixable(d.code, settings):
                continue
            if starts is None:
                starts = line_starts(self.text)
            edits = tuple(
                TextEdit(_offset(starts, e.row, e.column), _offset(starts, e.end_row, e.end_column), e.content)
                for e in fix.edits
            )
            out.append(QuickFix(finding, fix_title(d.code, fix.message, fix.applicability), fix.applicability, edits))
        return out

    def may_fix_all(self) -> bool:
        """Could "fix all" change something? A finding of a rule with fixes that ``fixable``
        allows (whether its fix applies here is known once :meth:`fix_all` has run)."""
        if self.settings is None or not self.findings:
            return False
        from .fixer import fixable
        from .rulemeta import all_rules

        rules = all_rules()
        return any(
            (meta := rules.get(f.diagnostic.code)) is not None
            and meta.fix != "none"
            and fixable(f.diagnostic.code, self.settings)
            for f in self.findings
        )

    def fix_all(self) -> tuple[TextEdit, ...]:
        """The edits that make the text what ``dupguard fix`` (safe fixes only) makes of it;
        none when there is nothing to fix or the fixes were refused (``fixer``'s checks)."""
        if self._fix_all is None:
            self._fix_all = self._build_fix_all() if self.findings and self.settings is not None else ()
        return self._fix_all

    def _build_fix_all(self) -> tuple[TextEdit, ...]:
        from .edits import text_edits
        from .fixer import fix_source

        assert self.settings is not None
        try:
            outcome, _ = fix_source(
                self.filename, self.text, "utf-8", self.settings, self.codes, unsafe=False, project=self.facts
            )
        except Exception:  # SourceError cannot happen on a text that linted; nothing else may escape
            return ()
        if outcome.error is not None or not outcome.applied:
            return ()
        fixed = outcome.text if outcome.text is not None else outcome.module.code
        return tuple(TextEdit(e.start, e.end, e.content) for e in text_edits(self.text, fixed))

    # ------------------------------------------------------------------ suppression

    def noqa(self, finding: Finding) -> TextEdit | None:
        """The edit that adds ``# noqa: CODE`` to the finding's line (or its code to the line's
        ``# noqa: ...`` list), as the CLI reads it (``suppression.line_suppresses`` on the line
        where the finding starts). None when the line cannot take a comment: it ends in a
        backslash or inside a string, which the edited text's tokens would show."""
        from .suppression import _NOQA, line_suppresses

        code = finding.diagnostic.code
        line = finding.diagnostic.row - 1
        if line >= len(self.lines.starts):
            return None
        start = self.lines.starts[line]
        text = self.lines.line_text(line)
        match = re.search(_NOQA, text, re.IGNORECASE)
        if match is not None and match.group("codes"):
            edit = TextEdit(start + match.end("codes"), start + match.end("codes"), f", {code}")
        elif match is not None:  # a bare noqa comment already covers every code
            return None
        else:
            content = text.rstrip()
            if content.endswith("\\"):
                return None
            edit = TextEdit(start + len(content), start + len(text), f"  # noqa: {code}")
        edited = apply(self.text, [edit])
        return edit if _comment_suppresses(edited, line + 1, code, line_suppresses) else None

    # ------------------------------------------------------------------ hover

    def noqa_codes_at(self, offset: int) -> list[str]:
        """The codes of a ``# noqa: ...`` comment that ``offset`` lies in (its line's)."""
        from .suppression import _NOQA

        line = bisect_right(self.lines.starts, offset) - 1
        start = self.lines.starts[line]
        match = re.search(_NOQA, self.lines.line_text(line), re.IGNORECASE)
        if match is None or not match.group("codes") or not (start + match.start() <= offset <= start + match.end()):
            return []
        return [c.upper() for c in re.split(r"[,\s]+", match.group("codes").strip()) if c]


def _offset(starts: list[int], row: int, column: int) -> int:
    """A fix edit's position (``edits.row_col``'s rows and columns) → an offset."""
    index = min(max(row - 1, 0), len(starts) - 1)
    return min(starts[index] + column, starts[-1])


def _comment_suppresses(text: str, row: int, code: str, suppresses: object) -> bool:
    """Is there a comment on ``row`` of ``text`` that suppresses ``code``? (Tokens, so that a
    ``#`` inside a string does not count.)"""
    import io
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] == row:
                return bool(suppresses(token.string, code))  # type: ignore[operator]
            if token.start[0] > row:
                return False
    except (tokenize.TokenError, SyntaxError, ValueError):
        return False
    return False


def apply(text: str, edits: list[TextEdit] | tuple[TextEdit, ...]) -> str:
    """``text`` with non-overlapping ``edits`` applied (what a client does with them)."""
    out = []
    at = 0
    for edit in sorted(edits):
        out.append(text[at : edit.start])
        out.append(edit.content)
        at = max(at, edit.end)
    out.append(text[at:])
    return "".join(out)


def fix_title(code: str, message: str, applicability: str) -> str:
    """``DUP301: <what the fix does>``, with `` (unsafe fix)`` for one that may change behaviour."""
    return f"{code}: {message}{' (unsafe fix)' if applicability == 'unsafe' else ''}"


def noqa_title(code: str) -> str:
    return f"suppress {code} with # noqa: {code}"


FIX_ALL_TITLE = "dupguard: fix all safe fixes in this file"


# ----------------------------------------------------------------------------- the engine


class Engine:
    """The state an editor session keeps between requests: settings by configuration file,
    exclusion answers, one project link per project root. Nothing here outlives a change on
    disk: :meth:`invalidate` drops it all."""

    def __init__(self, folders: list[Path] | None = None) -> None:
        self.folders = [Path(os.path.abspath(f)) for f in folders or ()]
        self._config_of: dict[str, Path | None] = {}  # directory → its configuration file
        self._settings: dict[tuple[str, int, int], Settings] = {}  # (file, mtime, size) → settings
        self._defaults: dict[str, Settings] = {}  # root → settings without a configuration file
        self._excluded: dict[tuple[str, Settings], bool] = {}
        self._links: dict[Settings, ProjectLink] = {}
        # the index with other files' unsaved buffers, by settings and those buffers (the latest few)
        self._buffer_links: dict[tuple[Settings, frozenset[tuple[str, str]]], ProjectLink] = {}
        self._last: dict[str, Report] = {}  # each file's last report: an unchanged text is not linted again

    def invalidate(self) -> None:
        """Something changed on disk (a save, a file created or deleted, a configuration edited):
        forget every answer that depended on it. The next lint rebuilds what it needs (the
        project index from its cache files, by size and mtime, so this is cheap)."""
        self._config_of.clear()
        self._settings.clear()
        self._defaults.clear()
        self._excluded.clear()
        self._last.clear()
        for link in self._links.values():
            # the cache is an optimisation: a file that cannot be written is no error
            with contextlib.suppress(Exception):
                link.save()
        self._links.clear()
        self._buffer_links.clear()

    # ------------------------------------------------------------------ settings

    def folder_of(self, path: Path | None) -> Path:
        """The workspace folder holding ``path`` (the deepest), else its directory (or the
        first folder, or the working directory, for a buffer with no path)."""
        if path is not None:
            absolute = os.path.abspath(path)
            holding = [f for f in self.folders if absolute.startswith(str(f).rstrip(os.sep) + os.sep)]
            if holding:
                return max(holding, key=lambda f: len(str(f)))
            return Path(absolute).parent
        return self.folders[0] if self.folders else Path.cwd()

    def settings_for(self, path: Path | None) -> Settings:
        """The settings ``dupguard check`` uses for the file at ``path``: the nearest
        configuration above it; raises ``ConfigError`` as the CLI does."""
        directory = str(Path(os.path.abspath(path)).parent) if path is not None else str(self.folder_of(None))
        if directory not in self._config_of:
            self._config_of[directory] = find_config(Path(directory))
        config = self._config_of[directory]
        if config is None:
            root = str(self.folder_of(path))
            if root not in self._defaults:
                self._defaults[root] = resolve(cwd=Path(root), isolated=True)
            return self._defaults[root]
        try:
            info = os.stat(config)
            key = (str(config), info.st_mtime_ns, info.st_size)
        except OSError:  # gone since it was found: look again next time
            self._config_of.pop(directory, None)
            raise ConfigError(f"{config}: cannot read config file") from None
        if key not in self._settings:
            self._settings[key] = resolve(config_path=str(config))
        return self._settings[key]

    def _is_excluded(self, path: Path, settings: Settings) -> bool:
        """``exclude``/``extend-exclude`` as ``check --force-exclude`` applies them to a named
        file (the flake8 plugin's test); a path not on disk (a new buffer) is not excluded."""
        key = (os.path.abspath(path), settings)
        if key not in self._excluded:
            from .discovery import discover

            found = discover([str(path)], settings._replace(force_exclude=True))
            self._excluded[key] = not found.files and not found.errors
        return self._excluded[key]

    def link(self, settings: Settings) -> ProjectLink:
        """The project index for ``settings``' root, kept until :meth:`invalidate`, with the
        results cache's directory when it can have one (as the flake8 plugin opens it)."""
        found = self._links.get(settings)
        if found is None:
            from .pipeline import _open_cache, project_link

            try:
                cache = _open_cache(settings, [])
            except (ConfigError, OSError):  # a cache-dir the CLI would refuse: the index works without
                cache = None
            found = self._links[settings] = project_link(settings, cache)
        return found

    def buffer_link(self, settings: Settings, buffers: frozenset[tuple[str, str]]) -> ProjectLink:
        """The project index with ``buffers`` (absolute path, text) in place of those files'
        disk content: the other files the editor holds unsaved. Built without the cache files
        (what is kept on disk describes the disk, for the CLI's next run), once per set of
        buffers: typing in one file does not change the buffers of the others."""
        key = (settings, buffers)
        found = self._buffer_links.get(key)
        if found is None:
            while len(self._buffer_links) >= 4:
                self._buffer_links.pop(next(iter(self._buffer_links)))
            found = self._buffer_links[key] = _new_buffer_link(settings, dict(buffers))
        return found

    # ------------------------------------------------------------------ lint

    def lint(self, path: Path | None, text: str, others: dict[str, str] | None = None) -> Report:
        """Lint the buffer ``text`` of the file at ``path`` (None: a buffer never saved);
        ``others``: the unsaved buffers of other files (by path), which the project index reads
        instead of those files."""
        filename = str(path) if path is not None else "untitled.py"
        try:
            settings = self.settings_for(path)
        except ConfigError as exc:
            return Report(filename, text, problem=Problem(CONFIG, f"dupguard configuration error: {exc}"))
        own = os.path.abspath(path) if path is not None else None
        buffers = frozenset((os.path.abspath(p), t) for p, t in (others or {}).items() if os.path.abspath(p) != own)
        last = self._last.get(filename)
        if last is not None and last.text == text and last.settings == settings and last.buffers == buffers:
            return last  # the same text under the same settings, nothing changed on disk since
        report = self._lint(path, filename, text, settings, buffers)
        report.buffers = buffers
        if report.problem is None or report.problem.kind != INTERNAL:
            self._last[filename] = report
        return report

    def forget(self, path: Path | None) -> None:
        """The editor closed the file: its last report is not needed any more."""
        self._last.pop(str(path) if path is not None else "untitled.py", None)

    def _lint(
        self, path: Path | None, filename: str, text: str, settings: Settings, buffers: frozenset[tuple[str, str]]
    ) -> Report:
        if path is not None and self._is_excluded(path, settings):
            return Report(filename, text, settings=settings)
        codes = codes_for_file(filename, settings, settings.enabled_codes(), text)
        limit = settings.max_file_size
        if limit and len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit:
            message = f"larger than max-file-size ({limit} bytes), not linted"
            return Report(filename, text, settings=settings, problem=Problem(SKIPPED, message))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate: no file holds one, an editor's buffer can
            message = f"cannot encode as utf-8: {exc.reason}"
            return Report(filename, text, settings=settings, problem=Problem(SYNTAX, message, exc.start, exc.end))
        facts = None
        try:
            if codes:
                link = self.buffer_link(settings, buffers) if buffers else self.link(settings)
                facts = link.facts_for(path, text, on_disk=False)
                link.save()
            diagnostics = lint_text(filename, text, settings, codes, project=facts)
        except SourceError as exc:
            return Report(filename, text, settings=settings, problem=self._source_problem(text, str(exc)))
        except RecursionError:
            return Report(filename, text, settings=settings, problem=Problem(SYNTAX, TOO_DEEP_TO_ANALYSE))
        except Exception as exc:  # a bug in dupguard: one line on the file, never a crash of the server
            message = f"internal error while linting ({type(exc).__name__}: {exc}); please report it"
            return Report(filename, text, settings=settings, problem=Problem(INTERNAL, message))
        return Report(filename, text, settings=settings, codes=codes, facts=facts, diagnostics=diagnostics)

    @staticmethod
    def _source_problem(text: str, message: str) -> Problem:
        """A syntax error where the parser found it (one character wide, so that every editor
        shows it); other reasons (too deeply nested) on the first line."""
        found = _SYNTAX_AT.search(message)
        if found is None:
            return Problem(SYNTAX, message)
        lines = LineIndex(text)
        start = lines.offset_of(int(found.group(1)), int(found.group(2)) - 1)
        line = bisect_right(lines.starts, start) - 1
        return Problem(SYNTAX, message, start, min(start + 1, lines.line_end(line)))


# ----------------------------------------------------------------------------- unsaved buffers


@functools.cache
def _buffer_classes() -> tuple[type, type]:
    """The project index classes that read unsaved buffers (built on first use: ``project``
    is imported only by a lint that needs the index)."""
    from . import __version__
    from .pipeline import extra_modules
    from .project import ProjectIndex, ProjectLink

    class BufferIndex(ProjectIndex):
        """The index with some files' text taken from the editor instead of the disk."""

        buffers: dict[str, str]  # set before build()

        def _read(self, record: Any) -> str | None:
            text = self.buffers.get(str(record.path))
            return text if text is not None else super()._read(record)

    class BufferLinkClass(ProjectLink):
        def __init__(self, settings: Settings, buffers: dict[str, str]) -> None:
            super().__init__(settings, extra_modules(settings), None, __version__)
            self.buffers = buffers

        def _build(self) -> ProjectIndex:
            index = BufferIndex(Path(self.root), tuple(self.settings.src), self.extra, self.settings)
            index.buffers = self.buffers
            index.build(self._files(), None)  # no store: its entries are keyed by the files on disk
            return index

    return BufferIndex, BufferLinkClass


def _new_buffer_link(settings: Settings, buffers: dict[str, str]) -> ProjectLink:
    """A :class:`~dupguard.project.ProjectLink` whose index reads ``buffers`` (absolute path →
    text) instead of those files, and keeps nothing on disk."""
    link: ProjectLink = _buffer_classes()[1](settings, buffers)
    return link
