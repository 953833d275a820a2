"""Command line: ``dupguard check | fix | rule | rules | server`` (ruff's vocabulary and exit codes;
``server`` is the language server, dupguard/server.py, imported only by that command).

Exit codes, the same for ``check`` and ``fix``: 0 clean, 1 findings (for ``fix``: findings
that remain; for ``fix --diff``: a fix that would change a file) or files that could not be
processed, 2 usage or configuration error (or an internal crash, reported in one line). Both
commands print a file's problem in the same words (pipeline.py) and end with the same
summary (report/text.py).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .config import OUTPUT_FORMATS, ConfigError, parse_table

# report formats that carry each finding's fix (and so need the rules to build it)
FIX_FORMATS = ("json", "json-lines", "sarif")
# report formats for tools: no summary line, nothing but the document on the stream
MACHINE_FORMATS = ("json", "json-lines", "sarif", "github", "gitlab")


def _codes(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--select", type=_codes, metavar="CODES", help="rule codes or prefixes to enable (replaces the config)"
    )
    parser.add_argument("--extend-select", type=_codes, metavar="CODES", help="codes or prefixes to enable in addition")
    parser.add_argument("--ignore", type=_codes, metavar="CODES", help="codes or prefixes to disable")
    parser.add_argument(
        "--per-file-ignores",
        action="append",
        metavar="GLOB:CODES",
        help="disable codes for files matching a glob, e.g. 'tests/*:DUP101,DUP3' (repeatable)",
    )
    parser.add_argument(
        "--exclude", type=_codes, metavar="PATTERNS", help="gitignore-style patterns to skip (replaces the defaults)"
    )
    parser.add_argument("--extend-exclude", type=_codes, metavar="PATTERNS", help="patterns to skip in addition")
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        default=None,
        help="apply exclusions to files named on the command line too (for pre-commit)",
    )
    parser.add_argument(
        "--respect-gitignore",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="skip files that .gitignore, .git/info/exclude and the global excludes ignore (default: on)",
    )
    parser.add_argument("--config", metavar="PATH", help="use this pyproject.toml or dupguard.toml")
    parser.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    parser.add_argument(
        "--max-file-size",
        metavar="SIZE",
        help="skip (and report) files larger than this: bytes, or e.g. 512KB, 2MB; 0 for no limit (default: 2MB)",
    )


def _add_fix_options(parser: argparse.ArgumentParser, *, alias: bool = False) -> None:
    if alias:
        parser.add_argument("--fix", action="store_true", help="apply fixes (same as `dupguard fix`)")
    parser.add_argument(
        "--diff", action="store_true", help="print the fixes as a unified diff and write nothing (exit 1 if any)"
    )
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        default=None,
        dest="unsafe_fixes",
        help="also apply fixes that may change behaviour",
    )
    parser.add_argument(
        "--no-unsafe-fixes",
        action="store_false",
        dest="unsafe_fixes",
        help="never apply unsafe fixes (overrides the config)",
    )
    parser.add_argument("--fixable", type=_codes, metavar="CODES", help="codes or prefixes that may be fixed")
    parser.add_argument("--unfixable", type=_codes, metavar="CODES", help="codes or prefixes never to fix")
    parser.add_argument("--show-fixes", action="store_true", help="list every fix that was applied")


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter without its ``import shutil`` (which brings bz2 and lzma: ≈ 4 ms of
    the one-file pre-commit start-up: bench/RESULTS.md, one-file start-up). argparse makes one per ``add_argument``; the
    width is what ``shutil.get_terminal_size`` would give, found once per run."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


class _SubParser(argparse.ArgumentParser):
    """A subcommand's parser, with the same formatter as the main one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


@functools.cache
def _terminal_columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dupguard",
        formatter_class=_Formatter,
        description="Find the code that makes LLM agents execute the same tool call twice.",
    )
    parser.add_argument("--version", action="version", version=f"dupguard {__version__}")
    sub = parser.add_subparsers(
        dest="command",
        metavar="COMMAND",
        parser_class=_SubParser,
    )

    check = sub.add_parser("check", help="lint files and directories")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories; '-' reads stdin")
    _add_selection(check)
    check.add_argument("--output-format", choices=OUTPUT_FORMATS, help="default: full on a terminal, concise otherwise")
    check.add_argument("--statistics", action="store_true", help="print a count per rule instead of the findings")
    check.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: number of cores)")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    check.add_argument("--cache-dir", metavar="DIR", help="where to keep the results cache")
    check.add_argument("--stdin-filename", metavar="NAME", help="the name to report for source read from stdin")
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even with findings or files that could not be processed"
    )
    check.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    check.add_argument(
        "--output-file", "-o", metavar="PATH", help="write the report to this file (stdout stays quiet but for errors)"
    )
    check.add_argument("--watch", "-w", action="store_true", help="lint again whenever a file changes (Ctrl-C ends)")
    adoption = check.add_mutually_exclusive_group()
    adoption.add_argument(
        "--baseline", metavar="FILE", help="report only the findings not recorded in FILE (see --write-baseline)"
    )
    adoption.add_argument("--write-baseline", metavar="FILE", help="record the current findings in FILE")
    adoption.add_argument(
        "--add-noqa", action="store_true", help="add a `# noqa: CODE` comment to every line with a finding"
    )

    _add_fix_options(check, alias=True)

    fix = sub.add_parser("fix", help="apply the rules' fixes (unsafe ones only with --unsafe-fixes)")
    fix.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="files or directories; '-' reads stdin and writes the fixed source to stdout",
    )
    _add_selection(fix)
    _add_fix_options(fix)
    fix.add_argument("--stdin-filename", metavar="NAME", help="the name to report for source read from stdin")
    fix.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when findings remain or files could not be processed"
    )
    fix.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: number of cores)")
    fix.add_argument("--quiet", "-q", action="store_true", help="no summary")

    rule = sub.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code", metavar="CODE")

    sub.add_parser("rules", help="list every rule: code, name, fix safety")

    sub.add_parser("server", help="run the language server (LSP) on stdin/stdout for editors (needs the lsp extra)")
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key in ("select", "extend_select", "ignore", "exclude", "extend_exclude"):
        value = getattr(args, key, None)
        if value is not None:
            table[key.replace("_", "-")] = value
    if getattr(args, "per_file_ignores", None):
        pfi: dict[str, list[str]] = {}
        for item in args.per_file_ignores:
            glob, sep, codes = item.rpartition(":")
            if not sep or not glob:
                raise ConfigError(f"--per-file-ignores: expected GLOB:CODES, got {item!r}")
            pfi.setdefault(glob, []).extend(_codes(codes))
        table["per-file-ignores"] = pfi
    if getattr(args, "force_exclude", None):
        table["force-exclude"] = True
    if getattr(args, "respect_gitignore", None) is not None:
        table["respect-gitignore"] = args.respect_gitignore
    if getattr(args, "cache_dir", None):
        # a path on the command line is relative to the working directory, and may point
        # anywhere (a config file's cache-dir must stay inside the project)
        table["cache-dir"] = os.path.abspath(args.cache_dir)
    if getattr(args, "max_file_size", None) is not None:
        table["max-file-size"] = args.max_file_size
    return parse_table(table, source="command line")


def _fix_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``--fixable``, ``--unfixable`` and ``--(no-)unsafe-fixes`` as settings (``fix`` applies them,
    ``check`` marks what they allow)."""
    table: dict[str, Any] = {
        key: getattr(args, key) for key in ("fixable", "unfixable") if getattr(args, key, None) is not None
    }
    if getattr(args, "unsafe_fixes", None) is not None:
        table["unsafe-fixes"] = args.unsafe_fixes
    return parse_table(table, source="command line")


def _exit_code(failed: bool, exit_zero: bool) -> int:
    """The one exit-code policy of ``check`` and ``fix`` (usage and configuration errors,
    exit 2, never get here): 1 when ``failed``, else 0; ``--exit-zero`` makes it 0."""
    return 1 if failed and not exit_zero else 0


def _text_format(fmt: str | None) -> bool:
    return fmt not in MACHINE_FORMATS


def _cmd_check(args: argparse.Namespace) -> int:
    """``dupguard check``: lint and report.

    Exit 0 when there is no finding and every file could be linted; 1 when there are findings
    or a file or path could not be read, decoded or parsed (each is named on stderr, and the
    other files are still linted); 2 for a usage or configuration error. ``--exit-zero``: 0
    unless 2. ``--fix`` and ``--diff`` are ``dupguard fix``.
    """
    adopting = args.baseline or args.write_baseline or args.add_noqa
    if adopting and (args.fix or args.diff):
        raise ConfigError("--baseline, --write-baseline and --add-noqa cannot be combined with --fix or --diff")
    if args.add_noqa and "-" in args.paths:
        raise ConfigError("--add-noqa edits files in place; it cannot read stdin ('-')")
    if args.watch:  # ``check --watch``, ``check --fix --watch``: again after every change
        return _watch_check(args)
    if args.fix or args.diff:  # ``check --fix`` is ``fix``; ``check --diff`` shows the fixes
        return _cmd_fix(args)
    from . import report
    from .discovery import discover
    from .hierarchy import Resolver
    from .pipeline import lint_groups
    from .report.text import file_errors, position, statistics

    # each file is linted under the nearest config above it (hierarchy.py); ``settings``: the run's.
    # The fix options say which findings ``dupguard fix`` would fix: the report marks them [*]
    overrides = {**_overrides(args), **_fix_overrides(args)}
    resolver = Resolver(config_path=args.config, isolated=args.isolated, overrides=overrides)
    settings = resolver.root
    paths = [p for p in args.paths if p != "-"]
    stdin = None
    if "-" in args.paths:
        stdin = (args.stdin_filename or "-", sys.stdin.buffer.read())
    found = discover(paths, settings, resolver) if paths else None
    files = found.files if found else []
    terminal = not args.output_file and sys.stdout.isatty()
    fmt = args.output_format or settings.output_format or ("full" if terminal else "concise")
    if args.add_noqa:  # lint and comment in one pass over the files (addnoqa.py)
        from .addnoqa import add_noqa_paths
        from .addnoqa import report as noqa_report

        added = add_noqa_paths(files, settings, jobs=args.jobs)
        errors = (found.errors if found else []) + added.errors
        file_errors(errors, sys.stderr)
        noqa_report(added, sys.stderr)
        return _exit_code(bool(errors), args.exit_zero)
    result = lint_groups(
        resolver,
        paths,
        files,
        jobs=args.jobs,
        use_cache=not args.no_cache,
        stdin=stdin,
        with_fixes=fmt in FIX_FORMATS and not args.statistics,
    )
    errors = (found.errors if found else []) + result.errors
    file_errors(errors, sys.stderr)
    # opened once the files are read: ``-o`` naming one of them must not empty it first
    out = _open_output(args.output_file) if args.output_file else sys.stdout
    try:
        if fmt in ("full", "concise") and not args.output_file and not args.statistics:
            from .colour import ColourWriter, wanted

            if wanted(out):
                out = ColourWriter(out)
        if args.baseline or args.write_baseline:  # baseline.py reports, and says whether the run failed
            from .baseline import check as check_baseline

            # ``check .`` from the project root judges the whole project; named files (pre-commit) only those
            whole = any(os.path.abspath(p) == os.path.abspath(settings.root) for p in paths)
            failed = check_baseline(
                args.baseline,
                args.write_baseline,
                fmt,
                result.diagnostics,
                errors,
                settings,
                out,
                sys.stderr,
                linted=None if whole else [str(f) for f in files] + ([stdin[0]] if stdin else []),
                statistics=args.statistics,
                quiet=args.quiet,
            )
            return _exit_code(failed, args.exit_zero)
        if args.statistics:
            statistics(result.diagnostics, out)
        elif args.quiet and _text_format(fmt):
            for d in report.findings(result.diagnostics, errors):
                out.write(f"{position(d)}: {d.code} {d.message}\n")
        else:  # the text formats end with report.text.summary
            report.get(fmt)(result.diagnostics, errors, out, settings)
    finally:
        out.flush()
        if args.output_file:
            out.close()
    return _exit_code(bool(result.diagnostics or errors), args.exit_zero)


def _open_output(path: str) -> Any:
    """``--output-file``: the report's file (its directory made if missing, as ruff does); a
    path that cannot be written is a usage error (exit 2)."""
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--output-file: {path}: {exc.strerror or exc}") from None


def _watch_check(args: argparse.Namespace) -> int:
    """``check --watch`` (watch.py): the same check again after every change. A configuration
    error stops the first run (exit 2) and, later, is printed while the watch goes on."""
    import copy
    from pathlib import Path

    from .config import find_config
    from .watch import watch

    if "-" in args.paths:
        raise ConfigError("--watch: cannot watch stdin ('-'); name files or directories")
    once = copy.copy(args)
    once.watch = False
    first = True

    def run() -> list[str]:
        nonlocal first
        try:
            _cmd_check(once)
        except ConfigError as exc:
            if first:
                raise
            print(f"dupguard: error: {exc}", file=sys.stderr, flush=True)
        first = False
        sys.stdout.flush()
        configs = {
            find_config(Path(os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or "."))) for p in args.paths
        }
        return sorted(str(c) for c in configs if c is not None)

    return watch(run, list(args.paths))


def _cmd_fix(args: argparse.Namespace) -> int:
    """``dupguard fix`` (and ``check --fix`` / ``check --diff``): apply the fixes, then report
    what remains the way ``check`` does.

    Exit 0 when no finding remains and every file could be processed; 1 when findings remain
    or a file or path could not be read, decoded, parsed, fixed safely or written (each is
    named on stderr and left as it was); 2 for a usage or configuration error. With
    ``--diff`` (nothing is written), like ruff: 1 when a fix would change a file or a file
    could not be processed, else 0, even when findings without an applicable fix remain
    (they are listed on stderr, with the reason when a fix was refused). ``--exit-zero``: 0
    unless 2.
    """
    from .discovery import discover
    from .fixer import RunResult, fix_paths, unified_diff
    from .hierarchy import Resolver, groups_of
    from .report.text import file_errors, summary, with_notes

    overrides = {**_overrides(args), **_fix_overrides(args)}
    resolver = Resolver(config_path=args.config, isolated=args.isolated, overrides=overrides)
    settings = resolver.root
    paths = [p for p in args.paths if p != "-"]
    stdin = (args.stdin_filename or "-", sys.stdin.buffer.read()) if "-" in args.paths else None
    fmt = getattr(args, "output_format", None) or settings.output_format or "concise"
    output_file = getattr(args, "output_file", None)  # ``check --fix --output-file``
    err = sys.stderr
    found = discover(paths, settings, resolver) if paths else None
    files = found.files if found else []
    result = RunResult()
    for group_settings, group, source in groups_of(resolver, files, stdin):  # each file under its own config
        done = fix_paths(
            group,
            group_settings,
            unsafe=group_settings.unsafe_fixes,
            write=not args.diff,
            stdin=source,
            jobs_wanted=args.jobs,
        )
        result.files.extend(done.files)
        result.errors.extend(done.errors)
    errors = (found.errors if found else []) + result.errors
    file_errors(errors, err)
    out = _open_output(output_file) if output_file else sys.stdout  # once the files are read
    info = out
    if args.diff:  # stdout is only the patch
        info = err
        for file_result in result.files:
            if file_result.changed:
                out.write(unified_diff(file_result))
    elif stdin is not None:  # stdout is only the source: fixed, or as it came when it could not be
        info = err
        for file_result in result.files:
            if file_result.is_stdin:
                out.flush()
                out.buffer.write(file_result.fixed) if hasattr(out, "buffer") else out.write(file_result.fixed.decode())
    applied = result.applied
    if args.show_fixes and applied:
        info.write(
            f"{'Would fix' if args.diff else 'Fixed'} {len(applied)} finding{'s' if len(applied) != 1 else ''}:\n"
        )
        for a in applied:
            info.write(
                f"  {a.filename}:{f'cell {a.cell}:' if a.cell else ''}{a.row}:{a.column + 1}: {a.code} {a.message}"
                f"{' (unsafe)' if a.applicability == 'unsafe' else ''}\n"
            )
    remaining = result.remaining
    if _text_format(fmt):
        notes = {} if args.quiet else {(d.filename, d.row, d.column, d.code): why for d, why in result.skipped}
        with_notes(remaining, notes, info, errors)
        if not args.quiet:
            line = summary(
                len(remaining), len(errors), fixed=len(applied), diff=args.diff, unsafe_hidden=result.unsafe_hidden
            )
            info.write(line + "\n")
    elif not args.diff:  # a machine report; with --diff there is no stream for it
        from . import report

        report.get(fmt)(remaining, errors, info, settings)
    failed = result.changed if args.diff else bool(remaining)
    if output_file:
        out.close()
    return _exit_code(failed or bool(errors), args.exit_zero)


def _cmd_rule(args: argparse.Namespace) -> int:
    from .diagnostics import RESERVED_CODES
    from .rulemeta import all_rules

    meta = all_rules().get(args.code.upper())
    if meta is None and args.code.upper() in RESERVED_CODES:  # not a rule: a file that was not checked
        from .report import RESERVED_SUMMARIES, RESERVED_URL

        code = args.code.upper()
        sys.stdout.write(
            f"# {RESERVED_CODES[code]} ({code})\n\nFix: none\n\n{RESERVED_SUMMARIES[code]}\n{RESERVED_URL}\n"
        )
        return 0
    if meta is None:
        print(f"dupguard: error: unknown rule {args.code!r}; see `dupguard rules`", file=sys.stderr)
        return 2
    sys.stdout.write(f"# {meta.name} ({meta.code})\n\nFix: {meta.fix}\n\n{meta.doc}")
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    from .rulemeta import all_rules

    rows = [(m.code, m.name, m.fix) for m in all_rules().values()]
    width = max(len(name) for _, name, _ in rows) if rows else 4
    print(f"{'code':<8}{'name':<{width + 2}}fix")
    for code, name, fix in rows:
        print(f"{code:<8}{name:<{width + 2}}{fix}")
    return 0


def _cmd_server(args: argparse.Namespace) -> int:
    """``dupguard server``: the language server (dupguard/server.py), imported only here so that
    no other command loads pygls."""
    try:
        from .server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        print(
            f"dupguard: error: the language server needs pygls and lsprotocol ({exc}); "
            "install them with: pip install 'dupguard[lsp]'",
            file=sys.stderr,
        )
        return 2
    return serve()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        handler = {"check": _cmd_check, "fix": _cmd_fix, "rule": _cmd_rule, "rules": _cmd_rules, "server": _cmd_server}[
            args.command
        ]
        return handler(args)
    except ConfigError as exc:
        print(f"dupguard: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        os._exit(1)
    except Exception as exc:  # never a traceback for users; one line, exit 2
        if os.environ.get("DUPGUARD_DEBUG"):
            raise
        print(
            f"dupguard: internal error: {type(exc).__name__}: {exc} (set DUPGUARD_DEBUG=1 for details)", file=sys.stderr
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
