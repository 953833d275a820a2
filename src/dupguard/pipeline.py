"""Files → results, for ``check`` and ``fix`` alike: read → decode → gate → parse → analyse.

One module owns every step a file goes through, so the two commands cannot drift apart:

* **read**: a file's bytes, or the reason it cannot be read (``is a directory``,
  ``permission denied``, ``no such file or directory``, a FIFO, socket or device, which is
  never opened, a file larger than ``max-file-size``, the system's words otherwise);
* **decode**: bytes → text and the encoding that turns the text back into the same bytes
  (BOM, PEP 263 coding cookie, UTF-8 otherwise), so ``fix`` writes files byte-exactly; a
  Jupyter notebook decodes to the joined Python of its code cells (:func:`decode_source`,
  notebook.py), and its findings are reported by cell and row;
* **gate**: ``per-file-ignores``, the prefilter's text test and ``# dupguard: noqa`` decide
  whether the file can have a finding at all; most files stop here, and libcst is never
  imported for them;
* **parse**: the one place that turns libcst's errors into the text a user reads;
* **analyse**: build the semantic model, run the enabled rules, drop ``# noqa``-ed findings.

The commands differ only in the *task* a relevant file is given: ``check`` runs the
``lint`` task (:data:`LINT`, analyse and report), ``fix`` runs ``dupguard.fixer.FIX`` (analyse,
apply the fixes, repeat). Both go through :func:`run`, which reads files in one streaming
pass and hands the relevant ones to one worker pool. The results cache (``check`` only)
sits in that pass too: a hit skips decoding and parsing.

Performance notes (measured in bench/RESULTS.md): files are read, hashed, decoded and
gated in one streaming pass; relevant files go to the workers in small batches as soon as
there are enough of them to be worth a pool, so the workers' ``import libcst`` overlaps the
rest of that pass; the pool forks (Linux) from a parent that has not imported libcst, and
gets the settings and the task once per worker, not once per file; nothing about processes
is imported unless a pool is started.

A worker that dies (a native crash such as a stack overflow in the parser, or the kernel's
out-of-memory killer) costs only its file: the files of the batches the broken pool did not
finish are run again, each in a process of its own, and the one that kills its process is
reported as an error (:meth:`_Runner.results`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from . import __version__
from .config import ConfigError, Settings, code_matches
from .diagnostics import Diagnostic, FileError, Fix, syntax_error
from .prefilter import might_matter
from .suppression import file_is_exempt, line_suppresses

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.connection import Connection

    import libcst as cst

    from .cache import Cache
    from .fixes import FixContext
    from .hierarchy import Resolver
    from .notebook import Notebook
    from .project import ProjectFacts, ProjectLink
    from .rules.registry import Finding
    from .semantic.model import Model
    from .semantic.positions import Positions

# a notebook file may be this many times max-file-size (its outputs), its code cells not
NOTEBOOK_BYTES = 32
# below this many files to parse, worker start-up costs more than it saves
PARALLEL_THRESHOLD = 16
# files per task sent to a worker (or fewer, once a batch holds this much text)
BATCH_FILES = 8
BATCH_CHARS = 64_000

_BOM = b"\xef\xbb\xbf"


class SourceError(ValueError):
    """A file that cannot be read, decoded or parsed; the message is the reason, for users."""


# ----------------------------------------------------------------------------- the steps


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _not_regular(mode: int) -> str:
    kind = next((name for test, name in _SPECIAL if test(mode)), "not a regular file")
    return f"not a regular file ({kind}), skipped" if kind != "not a regular file" else "not a regular file, skipped"


def _too_large(size: int, limit: int) -> str:
    return f"{size} bytes, larger than max-file-size ({limit} bytes), skipped"


def read_file(path: Path, max_size: int = 0) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes and the status of what was read; :class:`SourceError` names why
    they cannot be had. ``max_size`` (0: no limit): larger files are refused unread.

    A FIFO, socket or device is refused before it is opened (reading one blocks or never
    ends, opening some has effects); the open is non-blocking and the opened file is checked
    again, in case the path was swapped meanwhile. ``fix`` compares the status with the file's
    just before writing (fixer.write_atomic).
    """
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise SourceError("is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(_not_regular(info.st_mode))
        if max_size and info.st_size > max_size:
            raise SourceError(_too_large(info.st_size, max_size))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        with open(fd, "rb", buffering=0) as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise SourceError(_not_regular(info.st_mode))
            data = handle.read(max_size + 1) if max_size else handle.read()
        if max_size and len(data) > max_size:  # it grew since the stat
            raise SourceError(_too_large(len(data), max_size))
        return data, info
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except FileNotFoundError:  # gone since discovery listed it; discovery's words
        raise SourceError("no such file or directory") from None
    except OSError as exc:
        raise SourceError(exc.strerror or str(exc)) from None


def read(path: Path, max_size: int = 0) -> bytes:
    """A file's bytes (:func:`read_file` without the status)."""
    return read_file(path, max_size)[0]


def decode(data: bytes) -> tuple[str, str]:
    """Source bytes → (text, encoding), honouring a BOM or PEP 263 coding cookie (UTF-8 otherwise).

    ``text.encode(encoding)`` gives ``data`` back: a BOM is ``utf-8-sig``, so ``fix`` writes
    it again. A cookie sits on the first or second line; when neither says "coding" the
    answer needs no ``tokenize`` (whose import is ≈ 4 ms of the one-file start-up).
    """
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" not in (data if second < 0 else data[:second]):
        encoding = "utf-8-sig" if data.startswith(_BOM) else "utf-8"
    else:
        import io
        import tokenize

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise SourceError(f"cannot detect the source encoding: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise SourceError(f"cannot decode as {encoding.removesuffix('-sig')}: {reason}") from None
    return text, encoding


def decode_source(filename: str, data: bytes) -> tuple[str, str, Notebook | None]:
    """The decode step for any file: (text, encoding, notebook). A Jupyter notebook
    (``.ipynb``) is the joined Python of its code cells, with IPython lines blanked and the
    notebook that maps its rows to cells and writes a fixed text back (notebook.py); the
    encoding is then the one its fixed text travels in. Any other file is :func:`decode`'s."""
    if filename.endswith(".ipynb"):
        from .notebook import InvalidNotebook, load

        try:
            notebook = load(data)
        except InvalidNotebook as exc:
            raise SourceError(str(exc)) from None
        return notebook.text, "utf-8", notebook
    text, encoding = decode(data)
    return text, encoding, None


def extra_modules(settings: Settings) -> tuple[str, ...]:
    """Top-level modules of the user's catalog extensions: the prefilter looks for them too."""
    names = settings.extend_stateful_agents + settings.extend_memory_classes
    return tuple(sorted({n.split(".")[0] for n in names}))


def codes_for_file(path: str, settings: Settings, codes: frozenset[str], text: str | None = None) -> frozenset[str]:
    """Apply ``per-file-ignores`` (globs relative to the project root, or basenames), and leave
    test modules out unless ``check-test-modules`` is set (``is_test_module``; ``text``, the
    file's source when known, tells a script named like a test from a test module)."""
    if not settings.per_file_ignores and settings.check_test_modules:
        return codes
    rel = _relative_to_root(path, settings.root)
    if not settings.check_test_modules and is_test_module(path, rel, text):
        return frozenset()
    if not settings.per_file_ignores:
        return codes
    rel = rel if rel is not None else Path(path).as_posix()
    ignored: list[str] = []
    absolute: str | None = None
    for pattern, prefixes in settings.per_file_ignores:
        if pattern.startswith("/"):  # from a file this config extends: anchored where that file is
            absolute = absolute or Path(path).resolve().as_posix()
            if fnmatch(absolute, pattern) or absolute.startswith(pattern.rstrip("/") + "/"):
                ignored.extend(prefixes)
        elif fnmatch(rel, pattern) or fnmatch(Path(path).name, pattern) or rel.startswith(pattern.rstrip("/") + "/"):
            ignored.extend(prefixes)
    return frozenset(c for c in codes if not code_matches(c, ignored))


@lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    return os.path.realpath(root)


@lru_cache(maxsize=64)
def _absolute_root(root: str) -> str:
    return os.path.abspath(root)


def _relative_to_root(path: str, root: str) -> str | None:
    """``path`` relative to the project root (links resolved, ``/``-separated), or None outside it.

    The path as given is tried first, then with links resolved (a root reached through a link).
    Called once per linted file: string operations rather than ``Path.resolve()`` twice, which made a warm-cache run of 2,000 files spend a third of its
    time here (bench/RESULTS.md, the --quick re-run)."""
    for here, base in ((os.path.abspath(path), _absolute_root(root)), (os.path.realpath(path), _real_root(root))):
        if here == base:
            return "."
        prefix = base if base.endswith(os.sep) else base + os.sep
        if here.startswith(prefix):
            return here[len(prefix) :].replace(os.sep, "/")
    return None


TEST_DIRECTORIES = frozenset({"tests", "test"})


# what a test module holds: a test function or class, or a test framework import (a text test)
_TEST_SIGNS = re.compile(
    r"^[ \t]*(?:async[ \t]+)?def[ \t]+test|^[ \t]*class[ \t]+Test|^[ \t]*(?:import|from)[ \t]+(?:pytest|unittest)\b",
    re.MULTILINE,
)


def is_test_module(path: str, rel: str | None, text: str | None = None) -> bool:
    """Is this file a test module rather than served code? ``test_*.py``, ``*_test.py``,
    ``conftest.py``, or a file under a ``tests/``/``test/`` directory of the project (the
    directories of ``rel``, the path relative to the project root; a file outside the root is
    judged by its name only). A file *named* like a test whose ``text`` holds no test function or
    class and imports no test framework is a script with an unlucky name, and is linted
    (janduplessis883/crewai-research: ``send_email_singe_agent_test.py`` kicks off a crew that
    sends an email).

    Every rule reports about code that serves users: an agent shared by requests, a retry in a
    handler, a tool registered twice on a live agent. Test modules run once, under a test
    runner, and are where duplicates are written on purpose (a test that registers a tool
    twice to assert the framework deduplicates it, a history built with a repeated message to
    test a dedup helper), so no rule reports there (docs/configuration: ``check-test-modules``)."""
    name = Path(path).name
    if name == "conftest.py":
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return text is None or _TEST_SIGNS.search(text) is not None
    if rel is None:
        return False
    return any(part in TEST_DIRECTORIES for part in rel.split("/")[:-1])


def gate(text: str, codes: frozenset[str], extra: tuple[str, ...], project: ProjectFacts | None = None) -> bool:
    """Can this text have a finding? Not without enabled codes, an agent or LLM framework
    import (prefilter.py) or a name imported from a project module that shares agent state
    (the project index), or with a file-level ``# dupguard: noqa``. A text test: no parse.
    A lone ``\\r`` ends a line as ``\\n`` does (old Mac line endings are valid Python)."""
    if not codes or not (might_matter(text, extra) or (project is not None and project.has_objects())):
        return False
    return not file_is_exempt(text.replace("\r", "\n") if "\r" in text else text)


# How deep code may nest before dupguard refuses it as "too deeply nested to parse" (a file
# error, like a syntax error). libcst's native parser recurses once per level and, past
# roughly 5,900 levels on an 8 MB stack, overflows it: a segfault, not an exception (issue
# 18; tests/test_hardening_lint.py). Brackets stop at Python's own tokenizer limit, 200
# ("too many nested parentheses"); any other nesting (``not not … x``, ``a.b.c…``,
# ``f()()…``, ``a + a + …``, ``a and a and …``, ``elif`` chains, dotted imports) at
# ``MAX_DEPTH``, about where Python 3.11's parser gives up too. Which versions of Python
# refuse what differs (3.13 takes 8,000 chained attributes), so dupguard measures itself.
MAX_BRACKET_DEPTH = 200
MAX_DEPTH = 2500
_OPENERS = "([{"
# every level of nesting in a libcst tree takes one of these (a bracket, an operator, a
# quote, a dot, a keyword): a text with fewer of them in all cannot nest deeper. Counting
# them costs about 2 % of a parse; files past ~30 KB usually have more, and take the exact way
_NESTING_CHARS = ".([{+-~*/%@&|^<>'\""
_NESTING_WORDS = ("not", "and", "or", "if", "lambda", "await", "yield")
# left-recursive chains Python's parser builds without recursing (only checked in a file it
# refused for another reason, where the tree that would measure them is missing)
_LONG_CHAINS = (
    r"(?:\s*\.\s*[^\W\d]\w*|\s*\([^()]*\)|\s*\[[^\[\]]*\]){%d}",
    (
        r"(?:(?:[\w.]+|'[^'\n]*'|\"[^\"\n]*\"|\([^()]*\)|\[[^\[\]]*\])\s*"
        r"(?:\*\*|//|<<|>>|[-+*/%%@&|^]|\band\b|\bor\b)\s*){%d}"
    ),
    r"(?:[-+~]\s*|\bnot\b\s*|\bawait\b\s*){%d}",
)
_CHAIN_LIMIT = 1000  # libcst takes seconds per file past this on a file that does not parse


def _long_conditional(text: str) -> bool:
    """A line with more than ``_CHAIN_LIMIT`` conditional expressions (``a if b else a if b else
    …``): Python nests them, libcst's parser backtracks through them, and on a file that does
    not parse it takes time that grows with the square of the chain (3,000 levels: 3 s, 14 s
    niced on a loaded machine; bench/RESULTS.md, "Hardening runs (issue 18)") before it
    reports the syntax error Python found in milliseconds. A ``str.count`` when there are few."""
    if text.count("else") <= _CHAIN_LIMIT:
        return False
    return any(line.count("else") > _CHAIN_LIMIT for line in text.splitlines())


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting, counting brackets in strings and comments too (closers
    never below zero): an upper bound, with three ``str.count``s when the file is shallow."""
    if sum(text.count(c) for c in _OPENERS) <= MAX_BRACKET_DEPTH:
        return 0
    import re

    depth = deepest = 0
    for match in re.finditer(r"[()\[\]{}]", text):
        if match.group() in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def _deeper_than(tree: Any, limit: int) -> bool:
    """Is the libcst tree of this Python AST deeper than ``limit``? Python's tree is the
    same shape except where libcst nests what Python keeps flat: ``a and b and c`` (one
    ``BoolOp``, a chain of ``BooleanOperation``s) and dotted names in imports."""
    import ast

    stack = [(tree, 1)]
    children = ast.iter_child_nodes
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 2
        elif isinstance(node, ast.alias):
            depth += node.name.count(".")
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children(node))
    return False


def _long_chain(text: str) -> bool:
    import re

    return any(re.search(pattern % _CHAIN_LIMIT, text) is not None for pattern in _LONG_CHAINS)


def _too_deeply_nested(text: str) -> bool:
    """Is the text nested deeper than dupguard allows (see ``MAX_DEPTH``)? Most files answer
    with a few ``str.count``s; the others are parsed by Python (about a tenth of libcst's
    parse) and their tree measured.

    Raises :class:`SourceError` with Python's own syntax error for a file Python rejects whose
    expression chains would keep libcst busy for seconds before it reports the same error
    (``_long_conditional``)."""
    brackets = _bracket_depth(text)
    deep = sum(map(text.count, _NESTING_CHARS)) + sum(map(text.count, _NESTING_WORDS)) > MAX_DEPTH
    if brackets <= MAX_BRACKET_DEPTH and not deep:
        return False
    import ast
    import warnings

    try:
        with warnings.catch_warnings():  # a warning about the user's code (``"\\P"``) is not ours to print
            warnings.simplefilter("ignore")
            tree = compile(text, "<dupguard>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if "nested" in str(exc.msg) or "too complex" in str(exc.msg):
            return True
        # Python stopped at another error: libcst may still meet what lies before it
        if brackets > 4 * MAX_BRACKET_DEPTH or (deep and _long_chain(text)):
            return True
        if deep and _long_conditional(text):  # the file does not parse: say where, as Python does
            raise SourceError(syntax_error(exc.lineno or 1, max(0, (exc.offset or 1) - 1), str(exc.msg))) from None
        return False
    except (RecursionError, MemoryError):  # Python's parser gave up on the depth
        return True
    except ValueError:  # NUL characters (Python before 3.12): libcst says what it makes of them
        return False
    return deep and _deeper_than(tree, MAX_DEPTH)


def check_nesting(text: str) -> None:
    """Raise :class:`SourceError` for a text too deeply nested to hand to libcst: every parse
    of text dupguard did not check itself goes through this first (``fix`` re-parses its output)."""
    if _too_deeply_nested(text):
        raise SourceError("too deeply nested to parse")


def parse(text: str) -> cst.Module:
    """Text → libcst tree; a syntax error or a too deeply nested file is a :class:`SourceError`.

    ``module.code`` is ``text`` exactly (libcst round-trips), which is what lets ``fix`` edit
    the text and re-encode it with :func:`decode`'s encoding.
    """
    check_nesting(text)
    import libcst as cst

    from .parsing import parse_module

    try:
        return parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise SourceError(syntax_error(exc.raw_line, exc.raw_column, exc.message)) from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None


class Analysis:
    """One analysed module: its findings, each with its diagnostic, sorted; and what their fixes
    are built from, only when the caller asks for it (:meth:`fix_context`): a plain ``check``
    builds no fix."""

    __slots__ = ("_fixes", "findings", "model", "module", "positions", "text")

    def __init__(
        self,
        findings: list[tuple[Diagnostic, Finding]],
        module: cst.Module,
        model: Model,
        positions: Positions,
        text: str | None,
    ) -> None:
        self.findings = findings
        self.module = module
        self.model = model
        self.positions = positions
        self.text = text
        self._fixes: FixContext | None = None

    def fix_context(self) -> FixContext:
        """The context every fix of this module is built in (one per analysis: its parent map
        and scope analysis are shared by all the findings' fixes)."""
        if self._fixes is None:
            from .fixes import FixContext

            self._fixes = FixContext(self.module, self.model, self.positions, self.text)
        return self._fixes


def analyse_module(
    filename: str,
    module: cst.Module,
    settings: Settings,
    codes: frozenset[str],
    *,
    text: str | None = None,
    apply_noqa: bool = True,
    project: ProjectFacts | None = None,
) -> Analysis:
    """The findings of a parsed module, one per diagnostic, sorted: the one place that builds
    the model, runs the rules and applies ``# noqa`` (check and fix share it). ``project``: what
    the project index knows about the names the file imports."""
    from .rules import RuleContext, load
    from .semantic.builder import build_model
    from .semantic.catalog_loader import catalog_for
    from .semantic.positions import Positions

    model = build_model(module, catalog_for(settings), settings, project)
    ctx = RuleContext(Positions(module))
    rules = load()
    lines: list[str] | None = None
    out: dict[Diagnostic, Finding] = {}
    for code in sorted(codes):
        for finding in rules[code](model, ctx):
            row, col, end_row, end_col = ctx.positions.range(finding.node)
            if apply_noqa:
                if lines is None:
                    lines = (module.code if text is None else text).splitlines()
                if row <= len(lines) and line_suppresses(lines[row - 1], code):
                    continue
            out.setdefault(Diagnostic(filename, row, col, code, finding.message, end_row, end_col), finding)
    return Analysis(sorted(out.items(), key=lambda pair: pair[0]), module, model, ctx.positions, text)


# ----------------------------------------------------------------------------- one text


def lint_text(
    filename: str,
    text: str,
    settings: Settings,
    codes: frozenset[str],
    *,
    apply_noqa: bool = True,
    project: ProjectFacts | None = None,
) -> list[Diagnostic]:
    """Diagnostics for one file's text (the flake8 plugin's entry); :class:`SourceError` (a
    ``ValueError``) with a clear reason on bad input.

    ``apply_noqa=False`` leaves ``# noqa`` to the host (flake8 applies its own); ``project``:
    the project index's facts for this file (``ProjectLink.facts_for``).
    """
    if not gate(text, codes, extra_modules(settings), project):
        return []
    try:
        return _lint_parsed(filename, parse(text), text, settings, codes, apply_noqa=apply_noqa, project=project)
    except RecursionError:
        raise SourceError(TOO_DEEP_TO_ANALYSE) from None


def _lint_parsed(
    filename: str,
    module: cst.Module,
    text: str,
    settings: Settings,
    codes: frozenset[str],
    *,
    apply_noqa: bool = True,
    project: ProjectFacts | None = None,
    marks: bool = False,
) -> list[Diagnostic]:
    analysis = analyse_module(filename, module, settings, codes, text=text, apply_noqa=apply_noqa, project=project)
    pairs = analysis.findings
    if not any(finding.fix is not None for _, finding in pairs):
        return [diag for diag, _ in pairs]
    # the report's ``fix`` (settings.with_fixes: formats that show it) is the only reason to
    # build fixes while linting: building one can cost more than the rule that found it
    if not settings.with_fixes:
        if not marks:
            return [diag for diag, _ in pairs]
        return [diag._replace(fix=fix_mark(diag.code, finding)) for diag, finding in pairs]
    from .edits import ReportFixes

    fixes = ReportFixes(analysis.fix_context())
    return [
        diag._replace(fix=fixes.fix(diag.code, finding)) if finding.fix is not None else diag for diag, finding in pairs
    ]


# ----------------------------------------------------------------------------- many files

# filename, text, encoding, codes, the project index's facts for it: one relevant file
Job = tuple[str, str, str, frozenset[str], "ProjectFacts | None"]


class Task:
    """What a relevant file is given: ``run(job, settings)`` returns the task's value for it,
    or raises :class:`SourceError`. ``verb`` names the task in an internal-error message;
    ``keeps_source``: the caller needs each file's bytes afterwards (``fix`` writes them).

    ``run`` must be a module-level function: a worker gets the task once, by reference.
    """

    __slots__ = ("keeps_source", "run", "verb")

    def __init__(self, verb: str, run: Callable[[Job, Settings], Any], *, keeps_source: bool = False) -> None:
        self.verb = verb
        self.run = run
        self.keeps_source = keeps_source


def fix_mark(code: str, finding: Finding) -> Fix | None:
    """What ``check`` says of a finding's fix without building it: a ``Fix`` with no edits, its
    applicability the fix's own when the rule handed a ready proposal, else the rule's declared
    safety; None when there is no fix (none declared, or a ready refusal). The text reports
    mark these findings ``[*]`` (report/text.py). A declared fix is built only by ``fix``, which
    may still refuse it for a reason it then prints ("note: no automatic fix: ...")."""
    from .fixes import FixProposal
    from .rules import load

    rule = load().get(code)
    proposal = finding.fix
    if rule is None or rule.safety is None or proposal is None:
        return None
    if isinstance(proposal, FixProposal):
        if proposal.refusal or not proposal.replacements:
            return None
        return Fix(proposal.applicability or rule.safety, proposal.title)
    return Fix(rule.safety, "")


def lint_job(job: Job, settings: Settings) -> list[Diagnostic]:
    """``check``'s task: the diagnostics of one relevant file, each fix marked (:func:`fix_mark`)
    unless the report carries the fixes themselves."""
    filename, text, _, codes, project = job
    with CollectorPause(len(text)):
        return _lint_parsed(filename, parse(text), text, settings, codes, project=project, marks=True)


# A file this large (about 3,000 lines) is analysed with Python's cyclic garbage collector paused.
PAUSE_COLLECTOR_ABOVE = 100_000


class CollectorPause:
    """Pause Python's cyclic garbage collector while one large file is analysed or fixed
    (``len(text)`` above :data:`PAUSE_COLLECTOR_ABOVE`), and resume it after.

    Why: a parse allocates millions of objects on a large module and almost none of them is
    garbage (the tree is alive until the file is done); the collector, triggered by the count of
    allocations, walks all of them again and again, which cost a third of the parse on a
    100,000-line module (bench/sizes.py; bench/RESULTS.md). What the analysis leaves in cycles
    (the model's records point at each other) is collected after the file, once, and bounded by
    the file's size: the peak memory does not grow (bench/sizes.py prints it)."""

    __slots__ = ("_paused",)
    active = 0  # pauses in force (nested pauses are allowed: the outermost resumes)

    def __init__(self, size: int) -> None:
        import gc

        self._paused = size > PAUSE_COLLECTOR_ABOVE and gc.isenabled()

    def __enter__(self) -> None:
        if self._paused:
            import gc

            gc.disable()
            CollectorPause.active += 1

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            import gc

            CollectorPause.active -= 1
            gc.enable()

    @staticmethod
    def collect() -> None:
        """Free the cycles left so far while the collector is paused (``fix`` calls it before each
        pass after the second: a file fixed in ten passes then holds the garbage of two passes
        at most, not of ten)."""
        if CollectorPause.active:
            import gc

            gc.collect()


LINT = Task("linting", lint_job)

Outcome = tuple[Any, "str | None"]  # the task's value, or the reason the file failed


# a tree that Python's parser and libcst accept can still be deeper than the rules' visitors
# (Python code, under Python's recursion limit) can walk
TOO_DEEP_TO_ANALYSE = "too deeply nested to analyse"


def _run_one(task: Task, job: Job, settings: Settings) -> Outcome:
    try:
        return task.run(job, settings), None
    except SourceError as exc:
        return None, str(exc)
    except RecursionError:
        return None, TOO_DEEP_TO_ANALYSE
    except Exception as exc:  # a bug in dupguard must not hide the other files' results
        return None, f"internal error while {task.verb} ({type(exc).__name__}: {exc}); please report it"


_worker: tuple[Task, Settings] | None = None


def _init_worker(task: Task, settings: Settings) -> None:
    """Per worker, once: keep the task and settings, import the parsing side before work arrives."""
    global _worker
    _worker = (task, settings)
    import libcst  # noqa: F401

    from .rules import load
    from .semantic import builder  # noqa: F401
    from .semantic.catalog_loader import catalog_for

    load()
    catalog_for(settings)


def _run_batch(jobs: list[Job]) -> list[Outcome]:
    assert _worker is not None
    task, settings = _worker
    return [_run_one(task, job, settings) for job in jobs]


def _run_alone(conn: Any, task: Task, settings: Settings, job: Job) -> None:
    """A process of its own for one file: the outcome goes back through ``conn``."""
    try:
        conn.send(_run_one(task, job, settings))
    except Exception as exc:  # an outcome that cannot be sent (pickled) is an internal error
        conn.send((None, f"internal error while {task.verb} ({type(exc).__name__}: {exc}); please report it"))
    finally:
        conn.close()


def _crash_reason(task: Task, exitcode: int | None) -> str:
    import signal

    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exit code {exitcode}"
    return f"dupguard crashed while {task.verb} this file ({how}); please report it"


class _Runner:
    """Runs the task on relevant files as they are found: here, or in a pool once it pays.

    The pool starts when ``PARALLEL_THRESHOLD`` relevant files are waiting (so a tree with
    none never imports libcst or multiprocessing), then takes batches while the caller keeps
    reading. Outcomes come back in submission order, so output does not depend on timing.
    """

    def __init__(self, task: Task, settings: Settings, jobs: int | None) -> None:
        self.task = task
        self.settings = settings
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.waiting: list[Job] = []
        self.waiting_chars = 0
        self.futures: list[Future[list[Outcome]]] = []
        # each future's jobs, until it succeeds: what to run again if the pool breaks
        self.batches: list[list[Job] | None] = []
        self.pool: ProcessPoolExecutor | None = None

    def add(self, job: Job, files_left: int) -> None:
        """Queue one relevant file; ``files_left``: files not yet read (a bound on what is to come)."""
        self.waiting.append(job)
        self.waiting_chars += len(job[1])
        if self.workers <= 1:
            return
        if self.pool is None and len(self.waiting) >= PARALLEL_THRESHOLD:
            # no more workers than PARALLEL_THRESHOLD files each could get
            self.workers = min(self.workers, (len(self.waiting) + files_left) // PARALLEL_THRESHOLD)
            if self.workers > 1:
                self._start()
        if self.pool is not None and (len(self.waiting) >= BATCH_FILES or self.waiting_chars >= BATCH_CHARS):
            self._submit()

    def _context(self) -> Any:
        import multiprocessing
        import sys

        # fork where it is safe and cheap: workers inherit what the parent has imported
        return multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None

    def _start(self) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context(),
            initializer=_init_worker,
            initargs=(self.task, self.settings),
        )

    def _submit(self) -> None:
        if self.waiting:
            assert self.pool is not None
            try:
                future = self.pool.submit(_run_batch, self.waiting)
            except Exception as exc:  # BrokenProcessPool: a worker died; this batch runs apart too
                from concurrent.futures import Future

                future = Future()
                future.set_exception(exc)
            index = len(self.batches)
            self.futures.append(future)
            self.batches.append(self.waiting)
            future.add_done_callback(lambda done: self._forget(index, done))
            self.waiting, self.waiting_chars = [], 0

    def _forget(self, index: int, future: Future[list[Outcome]]) -> None:
        """A batch that came back needs no second run: let its texts go."""
        if not future.cancelled() and future.exception() is None:
            self.batches[index] = None

    def results(self) -> list[Outcome]:
        if self.pool is None:
            return [_run_one(self.task, job, self.settings) for job in self.waiting]
        self._submit()
        batches: list[list[Outcome] | None] = []
        again: list[Job] = []
        try:
            for index, future in enumerate(self.futures):
                try:
                    batches.append(future.result())
                except Exception:  # BrokenProcessPool: a worker died; or an outcome that did not come back
                    jobs = self.batches[index]
                    assert jobs is not None
                    batches.append(None)
                    again.extend(jobs)
        finally:
            self.pool.shutdown()
        rerun = iter(self._run_apart(again) if again else [])
        outcomes: list[Outcome] = []
        for index, batch in enumerate(batches):
            if batch is None:
                jobs = self.batches[index]
                assert jobs is not None
                batch = [next(rerun) for _ in jobs]
            outcomes.extend(batch)
        return outcomes

    def _run_apart(self, jobs: list[Job]) -> list[Outcome]:
        """Each job in a process of its own, ``workers`` at a time: a file that kills its process
        gets :func:`_crash_reason`, every other file its outcome. Forked from this process once
        it has imported what the workers import, each process costs a few milliseconds."""
        import multiprocessing
        from multiprocessing.connection import wait

        context = self._context() or multiprocessing.get_context()
        if context.get_start_method() == "fork":
            _init_worker(self.task, self.settings)
        outcomes: list[Outcome | None] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        pending.reverse()
        running: dict[Connection, tuple[int, Any]] = {}
        while pending or running:
            while pending and len(running) < self.workers:
                index, job = pending.pop()
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_run_alone, args=(sender, self.task, self.settings, job), daemon=True)
                process.start()
                sender.close()
                running[receiver] = (index, process)
            for ready in wait(list(running)):
                receiver = cast("Connection", ready)
                index, process = running.pop(receiver)
                outcome: Outcome | None
                try:
                    outcome = receiver.recv()
                except (EOFError, OSError):  # the process died before it could answer
                    outcome = None
                except Exception as exc:  # an answer that cannot be read back
                    outcome = None, f"internal error while {self.task.verb} ({type(exc).__name__}: {exc}); report it"
                finally:
                    receiver.close()
                process.join()
                outcomes[index] = outcome if outcome is not None else (None, _crash_reason(self.task, process.exitcode))
        return [outcome for outcome in outcomes if outcome is not None]

    def close(self) -> None:
        """Stop the pool without waiting for queued work (after an error or an interrupt)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


class Source:
    """One file that could be read: its name, path (None for stdin), bytes and status when the
    task keeps them, the task's value (None when the gate let nothing through) or the error;
    for a notebook, the :class:`~dupguard.notebook.Notebook` its text came from (the task's
    positions are in that text; ``notebook.translate`` gives the cell and row)."""

    __slots__ = ("data", "error", "filename", "notebook", "path", "stat", "value")

    def __init__(
        self, filename: str, path: Path | None, data: bytes | None, info: os.stat_result | None = None
    ) -> None:
        self.filename = filename
        self.path = path
        self.data = data
        self.stat = info
        self.value: Any = None
        self.error: str | None = None
        self.notebook: Notebook | None = None


class Run:
    """What :func:`run` made of the files: every readable file in input order, and the
    files and paths that could not be processed (read, then decode, then task errors)."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.errors: list[FileError] = []


def run(
    files: Iterable[Path],
    settings: Settings,
    task: Task,
    *,
    jobs: int | None = None,
    stdin: tuple[str, bytes] | None = None,
    cache: Cache | None = None,
    tree: list[Path] | None = None,
) -> Run:
    """Read, decode and gate every file (and ``stdin``: a name and its bytes), run ``task``
    on the relevant ones. ``cache`` (``check`` only) maps a file's bytes, codes and project
    facts to its diagnostics: a hit is that file's value without parsing it. ``tree``: every
    file under the project root, when ``files`` came from discovering it (the project index
    then need not walk it again)."""
    result = Run()
    enabled = settings.enabled_codes()
    extra = extra_modules(settings)
    project = project_link(settings, cache, tree)
    runner = _Runner(task, settings, jobs)
    queued: list[tuple[Source, str | None]] = []  # each job's file and cache key, in submission order
    read_errors: list[FileError] = []
    decode_errors: list[FileError] = []
    paths = list(files)

    limit = settings.max_file_size

    def size_limit(name: str) -> int:
        """A notebook's outputs (plots, tables) are most of its bytes: ``max-file-size`` bounds
        its code cells (checked once decoded), the file only ``NOTEBOOK_BYTES`` times that."""
        return limit * NOTEBOOK_BYTES if limit and name.endswith(".ipynb") else limit

    def sources() -> Iterable[tuple[int, str, Path | None, bytes | None, os.stat_result | None, str | None]]:
        for index, path in enumerate(paths):
            try:
                data, info = read_file(path, size_limit(str(path)))
                yield index, str(path), path, data, info, None
            except SourceError as exc:
                yield index, str(path), path, None, None, str(exc)
        if stdin is not None:
            if limit and len(stdin[1]) > size_limit(stdin[0]):
                yield len(paths), stdin[0], None, None, None, _too_large(len(stdin[1]), size_limit(stdin[0]))
            else:
                yield len(paths), stdin[0], None, stdin[1], None, None

    try:
        for index, filename, path, data, info, error in sources():
            if data is None:
                read_errors.append(FileError(filename, error or "unreadable"))
                continue
            source = Source(filename, path, *((data, info) if task.keeps_source else (None, None)))
            result.sources.append(source)
            try:
                text, encoding, source.notebook = decode_source(filename, data)
                if limit and source.notebook is not None and len(text) > limit:
                    raise SourceError(
                        f"its code cells hold {len(text)} characters, more than max-file-size ({limit} bytes), skipped"
                    )
            except SourceError as exc:
                source.error = str(exc)
                decode_errors.append(FileError(filename, source.error))
                continue
            codes = codes_for_file(filename, settings, enabled, text)
            # what the file imports from the project's other modules (None for most files):
            # part of the cache key, so a change to ``agent.py`` reaches the files using it
            where = path if path is not None else Path(filename)
            facts = project.facts_for(where, text, on_disk=path is not None) if codes else None
            key = None
            if cache is not None:
                key = cache.key(data, codes, facts.digest() if facts is not None else "")
                cached = cache.diagnostics(key, filename)
                if cached is not None:
                    source.value = cached
                    continue
            if not gate(text, codes, extra, facts):
                if cache is not None and key is not None:
                    cache.put(key, [])
                continue
            queued.append((source, key))
            runner.add((filename, text, encoding, codes, facts), len(paths) - index)
        outcomes = runner.results()
    finally:
        runner.close()
        project.save()
    result.errors.extend(read_errors)
    result.errors.extend(decode_errors)
    for (source, key), (value, error) in zip(queued, outcomes):
        if error is not None:
            source.error = error
            result.errors.append(FileError(source.filename, error))
            continue
        source.value = value
        if cache is not None and key is not None:
            cache.put(key, [d.to_cache() for d in value])
    if cache is not None:
        cache.save()
    return result


def project_link(settings: Settings, cache: Cache | None = None, tree: list[Path] | None = None) -> ProjectLink:
    """The run's link to the project index (built on the first file that needs it, from the
    project root's tree, ``tree`` when the caller has it; kept beside the results cache, under
    the same key and link rules, when the run has one)."""
    from .project import ProjectLink

    return ProjectLink(settings, extra_modules(settings), cache, __version__, tree)


# ----------------------------------------------------------------------------- check


class Result:
    """``check``'s result: every diagnostic, sorted, and the files that could not be linted."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.errors: list[FileError] = []


def cache_directory(settings: Settings) -> Path:
    """Where ``cache-dir`` points: relative to the project root (a command-line value is made
    absolute by the CLI, relative to the working directory)."""
    return Path(os.path.normpath(os.path.join(settings.root, settings.cache_dir)))


def check_cache_directory(directory: Path, settings: Settings, files: list[Path]) -> None:
    """Refuse a cache directory that holds the project or a file being linted: the cache writes
    a ``.gitignore`` with ``*`` where it creates its directory, and neither git nor dupguard
    would see those files again (``cache-dir = "."`` or ``"src"``). A string test, no I/O."""
    cache = str(directory)
    root = os.path.normpath(os.path.abspath(settings.root))
    inside = cache.rstrip(os.sep) + os.sep
    if root == cache or root.startswith(inside):
        raise ConfigError(
            f"cache-dir: {settings.cache_dir!r} would hold the whole project; use a directory of its own such as "
            ".dupguard_cache"
        )
    cwd = os.getcwd()
    for path in files:
        if os.path.normpath(os.path.join(cwd, path)).startswith(inside):
            raise ConfigError(
                f"cache-dir: {settings.cache_dir!r} holds files being linted ({path}); use a directory of its own "
                "such as .dupguard_cache"
            )


def _open_cache(settings: Settings, files: list[Path]) -> Cache | None:
    from .cache import Cache, linter_build, user_key  # hashlib and json: not needed with --no-cache

    directory = cache_directory(settings)
    check_cache_directory(directory, settings, files)
    key = user_key()
    if key is None:  # no private place for the key (a read-only home): no cache rather than one anyone could write
        return None
    # a relative cache-dir (from a config file, or the default) is created under the root
    # without following links; an absolute one was named on the command line
    base = None if Path(settings.cache_dir).is_absolute() else Path(settings.root)
    return Cache(directory, settings.lint_hash(), __version__, key, base=base, build=linter_build())


def lint_paths(
    files: Iterable[Path],
    settings: Settings,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    stdin: tuple[str, bytes] | None = None,
    tree: list[Path] | None = None,
) -> Result:
    """``check``: the ``lint`` task over every file, through the results cache."""
    files = list(files)
    cache = _open_cache(settings, files) if use_cache else None
    done = run(files, settings, LINT, jobs=jobs, stdin=stdin, cache=cache, tree=tree)
    result = Result()
    result.errors = done.errors
    for source in done.sources:
        if source.value:
            found = source.value
            if source.notebook is not None:  # rows of the joined cells → cell and row
                found = [source.notebook.translate(d) for d in sorted(found)]
            result.diagnostics.extend(found)
    result.diagnostics.sort(key=report_order)
    return result


def lint_groups(
    resolver: Resolver,
    paths: list[str],
    files: list[Path],
    *,
    jobs: int | None,
    use_cache: bool,
    stdin: tuple[str, bytes] | None,
    with_fixes: bool,
) -> Result:
    """``check`` over files that may use different settings: one pipeline run per settings
    (each with its own cache file and project index, keyed by those settings), the results
    joined and sorted as one run's. ``paths``: as given on the command line."""
    from .hierarchy import groups_of

    groups = groups_of(resolver, files, stdin)
    result = Result()
    for settings, group, source in groups:
        if with_fixes:
            settings = settings._replace(with_fixes=True)
        # ``check .`` from the project root: the files are the project index's tree as well
        root = os.path.abspath(settings.root)
        whole = len(groups) == 1 and any(os.path.abspath(p) == root for p in paths)
        done = lint_paths(group, settings, jobs=jobs, use_cache=use_cache, stdin=source, tree=group if whole else None)
        result.diagnostics.extend(done.diagnostics)
        result.errors.extend(done.errors)
    if len(groups) > 1:
        result.diagnostics.sort(key=report_order)
    return result


def report_order(d: Diagnostic) -> tuple[Any, ...]:
    """The order findings are reported in: by file, then cell (notebooks), row and column."""
    return (d.filename, d.cell, d.row, d.column, d.code, d.message, d.end_row, d.end_column)
