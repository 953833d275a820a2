"""``dupguard server``: the language server, over stdio (pygls and lsprotocol; the ``lsp`` extra).

It behaves as ruff's does. Diagnostics are published when a file is opened, after the typing
stops for :data:`DEBOUNCE` seconds, and when it is saved; each carries the rule's code, its docs
page (``codeDescription``: ``rulemeta.DOCS_URL``, the URL ``check --output-format json``
reports), a warning severity and source ``dupguard``; a file that does not parse gets one
error where the parser stopped. Code actions: each finding's fix as a quick fix (the CLI's fix
pipeline, see :mod:`dupguard.editor`; an unsafe one is titled ``(unsafe fix)`` and never
preferred), "suppress DUPxxx with # noqa: DUPxxx", and ``dupguard: fix all safe fixes in this
file`` (kind ``source.fixAll.dupguard``, for "fix on save"; its edit is computed only when the
client resolves the action, where it can). Hover on a finding, or on the codes of a ``# noqa``
comment, shows the rule's summary.

Everything the analysis needs is :class:`dupguard.editor.Engine`: the configuration, the
project index (which reads the other open files' unsaved changes instead of the disk) and the
lint of a buffer as ``dupguard check`` would lint the saved file. A save,
or a change on disk the client reports (``workspace/didChangeWatchedFiles``, registered when
the client can), drops what the engine kept and re-lints the open files: a module that another
imports from may have changed.

The server runs every step on its event loop, one at a time: a request always sees the
diagnostics of the text it is about (a pending debounced lint is run first). No handler lets an
exception through: a bug is logged on stderr in one line (the traceback with
``DUPGUARD_DEBUG=1``) and the request answers with nothing.

Initialization options (all optional): ``{"debounce": <milliseconds>}``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from . import __version__
from .editor import FIX_ALL_TITLE, Engine, LineIndex, Report, TextEdit, noqa_title
from .rulemeta import all_rules

DEBOUNCE = 0.15  # seconds of quiet after a change before the buffer is linted again
SOURCE = "dupguard"
FIX_ALL_KIND = "source.fixAll.dupguard"
PYTHON_SUFFIXES = (".py", ".pyi")
# what the client is asked to watch: a module, or a configuration file, changed on disk
WATCHED = ("**/*.py", "**/*.pyi", "**/pyproject.toml", "**/dupguard.toml")

logger = logging.getLogger("dupguard.server")

T = TypeVar("T")


def _guarded(default: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """A handler that never raises: an error is one line on stderr and ``default`` is the answer."""

    def wrap(handler: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(handler)
        def guarded(*args: Any, **kwargs: Any) -> T:
            try:
                return handler(*args, **kwargs)
            except Exception as exc:
                if os.environ.get("DUPGUARD_DEBUG"):
                    logger.exception("%s failed", handler.__name__)
                else:
                    logger.error("%s failed: %s: %s", handler.__name__, type(exc).__name__, exc)
                return default

        return guarded

    return wrap


class _OneLine(logging.Formatter):
    """Log lines without tracebacks (pygls logs some with ``exc_info``), unless DUPGUARD_DEBUG."""

    def formatException(self, ei: Any) -> str:
        return super().formatException(ei) if os.environ.get("DUPGUARD_DEBUG") else ""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text.rstrip("\n")


class DupguardServer(LanguageServer):
    """The server's state: the engine, the last report of each open document (with the version
    it is for) and the pending debounced lints."""

    def __init__(self) -> None:
        super().__init__("dupguard", __version__)
        self.engine = Engine()
        self.debounce = DEBOUNCE
        self.reports: dict[str, tuple[int | None, Report]] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.unsaved: set[str] = set()  # documents changed since they were opened or saved
        self.settled = False  # gc.freeze() done: see :meth:`settle`

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside a handler (a message that cannot be read): a line in the log, never a
        traceback shown to the user."""
        logger.error("%s: %s", type(error).__name__, str(error).splitlines()[0] if str(error) else "")

    # ------------------------------------------------------------------ positions

    @property
    def encoding(self) -> str:
        """The position encoding agreed at initialization ("utf-16" unless the client offered another)."""
        try:
            found = self.workspace.position_encoding
        except RuntimeError:  # before initialization
            found = None
        return str(getattr(found, "value", found) or "utf-16")

    def lsp_range(self, lines: LineIndex, start: int, end: int) -> types.Range:
        enc = self.encoding
        s_line, s_char = lines.position(start, enc)
        e_line, e_char = lines.position(end, enc)
        return types.Range(types.Position(s_line, s_char), types.Position(e_line, e_char))

    def offsets(self, lines: LineIndex, span: types.Range) -> tuple[int, int]:
        enc = self.encoding
        return (
            lines.offset(span.start.line, span.start.character, enc),
            lines.offset(span.end.line, span.end.character, enc),
        )

    def text_edits(self, lines: LineIndex, edits: tuple[TextEdit, ...] | list[TextEdit]) -> list[types.TextEdit]:
        return [types.TextEdit(self.lsp_range(lines, e.start, e.end), e.content) for e in edits]

    def workspace_edit(self, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        """The edit as the client can take it: versioned (stale edits are refused) when it can."""
        caps = self.client_capabilities.workspace
        versioned = caps is not None and caps.workspace_edit is not None and caps.workspace_edit.document_changes
        if versioned and version is not None:
            document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, list(edits))])
        return types.WorkspaceEdit(changes={uri: list(edits)})

    # ------------------------------------------------------------------ documents

    def folders(self) -> list[Path]:
        paths = []
        for folder in self.workspace.folders.values():
            path = to_fs_path(folder.uri)
            if path:
                paths.append(Path(path))
        root = self.workspace.root_path
        if not paths and root:
            paths.append(Path(root))
        return paths

    def is_python(self, uri: str) -> bool:
        document = self.workspace.get_text_document(uri)
        return document.language_id == "python" or uri.endswith(PYTHON_SUFFIXES)

    def lint(self, uri: str) -> Report | None:
        """Lint the document's current text, keep the report and publish its diagnostics."""
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        if uri not in self.workspace.text_documents or not self.is_python(uri):
            return None
        document = self.workspace.get_text_document(uri)
        text = document.source
        path = to_fs_path(uri) if uri.startswith("file:") else None
        self.engine.folders = self.folders()
        report = self.engine.lint(Path(path) if path else None, text, self.unsaved_buffers(uri))
        self.reports[uri] = (document.version, report)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=self.diagnostics(report), version=document.version)
        )
        if not self.settled:
            self.settle()
        return report

    def settle(self) -> None:
        """After the first lint, move everything alive (libcst, the rules, the catalog, pygls: what
        that lint imported) out of the garbage collector's sight with ``gc.freeze()``. Each lint
        allocates a tree of about a hundred thousand objects, so a full collection comes every
        few edits, and each walked every object of the process: one edit in six or seven took
        two to three times as long (bench/lsp_bench.py; bench/RESULTS.md)."""
        import gc

        gc.collect()
        gc.freeze()
        self.settled = True

    def unsaved_buffers(self, uri: str) -> dict[str, str]:
        """The other open files' texts that differ from the disk (changed and not saved since):
        the project index reads them instead of the files."""
        out = {}
        for other in self.unsaved:
            if other != uri and other.startswith("file:") and other in self.workspace.text_documents:
                path = to_fs_path(other)
                if path:
                    out[path] = self.workspace.get_text_document(other).source
        return out

    def current(self, uri: str) -> Report | None:
        """The report for the document's text as it is now (linting it first when a change is pending)."""
        found = self.reports.get(uri)
        if uri not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(uri)
        if found is not None and uri not in self.pending and found[0] == document.version:
            return found[1]
        return self.lint(uri)

    def schedule(self, uri: str) -> None:
        """Lint after :attr:`debounce` seconds without another change (at once when it is 0)."""
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        if self.debounce <= 0:
            self.lint(uri)
            return
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(self.debounce, _guarded(None)(self.lint), uri)

    def relint_all(self, except_uri: str | None = None) -> None:
        """Something on disk changed: forget what the engine kept, lint every open file again."""
        self.engine.invalidate()
        for uri in list(self.workspace.text_documents):
            if uri != except_uri:
                self.schedule(uri)

    # ------------------------------------------------------------------ diagnostics

    def diagnostics(self, report: Report) -> list[types.Diagnostic]:
        out = []
        if report.problem is not None:
            problem = report.problem
            out.append(
                types.Diagnostic(
                    range=self.lsp_range(report.lines, problem.start, problem.end),
                    message=problem.message,
                    severity=types.DiagnosticSeverity.Error,
                    source=SOURCE,
                )
            )
        for finding in report.findings:
            out.append(self.diagnostic(report, finding))
        return out

    def diagnostic(self, report: Report, finding: Any) -> types.Diagnostic:
        d = finding.diagnostic
        meta = all_rules().get(d.code)
        return types.Diagnostic(
            range=self.lsp_range(report.lines, finding.start, finding.end),
            message=d.message,
            severity=types.DiagnosticSeverity.Warning,
            code=d.code,
            code_description=types.CodeDescription(href=meta.url) if meta is not None else None,
            source=SOURCE,
        )

    # ------------------------------------------------------------------ code actions

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        report = self.current(uri)
        if report is None:
            return []
        version = self.reports[uri][0]
        only = params.context.only
        actions: list[types.CodeAction] = []
        if _wanted(only, types.CodeActionKind.QuickFix):
            start, end = self.offsets(report.lines, params.range)
            findings = report.at(start, end)
            if findings:
                fixes = {id(q.finding): q for q in report.fixes()}
                for finding in findings:
                    quick = fixes.get(id(finding))
                    if quick is None:
                        continue
                    actions.append(
                        types.CodeAction(
                            title=quick.title,
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[self.diagnostic(report, finding)],
                            is_preferred=quick.applicability == "safe",
                            edit=self.workspace_edit(uri, version, self.text_edits(report.lines, quick.edits)),
                        )
                    )
                seen = set()
                for finding in findings:
                    key = (finding.diagnostic.row, finding.diagnostic.code)
                    if key in seen:
                        continue
                    seen.add(key)
                    edit = report.noqa(finding)
                    if edit is None:
                        continue
                    actions.append(
                        types.CodeAction(
                            title=noqa_title(finding.diagnostic.code),
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[self.diagnostic(report, finding)],
                            edit=self.workspace_edit(uri, version, self.text_edits(report.lines, [edit])),
                        )
                    )
        if _wanted(only, FIX_ALL_KIND) and report.may_fix_all():
            action = types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, data={"uri": uri, "version": version})
            if not self.can_resolve_edits():
                action = self.resolve_fix_all(action)
                if action.edit is None:
                    return actions
            actions.append(action)
        return actions

    def can_resolve_edits(self) -> bool:
        caps = self.client_capabilities.text_document
        action = caps.code_action if caps is not None else None
        support = action.resolve_support if action is not None else None
        return support is not None and "edit" in support.properties

    def resolve_fix_all(self, action: types.CodeAction) -> types.CodeAction:
        """The fix-all action's edit, for the document's current text (none when nothing changes)."""
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        report = self.current(uri) if isinstance(uri, str) else None
        if report is None or uri is None:
            return action
        edits = report.fix_all()
        if edits:
            version = self.reports[uri][0]
            action.edit = self.workspace_edit(uri, version, self.text_edits(report.lines, edits))
        return action

    # ------------------------------------------------------------------ hover

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        report = self.current(params.text_document.uri)
        if report is None:
            return None
        position = params.position
        offset = report.lines.offset(position.line, position.character, self.encoding)
        rules = all_rules()
        findings = report.at(offset)
        parts: list[tuple[str, str]] = []
        if findings:
            for finding in findings:
                meta = rules.get(finding.diagnostic.code)
                if meta is not None and meta.code not in {p[0] for p in parts}:
                    parts.append((meta.code, _rule_markdown(meta)))
            first = findings[0]
            span = self.lsp_range(report.lines, first.start, first.end)
        else:
            codes = [c for c in report.noqa_codes_at(offset) if c in rules]
            parts = [(code, _rule_markdown(rules[code])) for code in codes]
            span = None
        if not parts:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(p[1] for p in parts)),
            range=span,
        )


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    """Does the client's ``only`` filter ask for actions of ``kind`` (kinds are dotted hierarchies)?"""
    if not only:
        return True
    return any(kind == k or kind.startswith(f"{k}.") for k in only)


def _rule_markdown(meta: Any) -> str:
    fix = {"none": "no automatic fix", "safe": "safe fix", "unsafe": "unsafe fix"}.get(meta.fix, meta.fix)
    return f"**{meta.code}** `{meta.name}`: {meta.summary}\n\n{fix} · [docs]({meta.url})"


def build() -> DupguardServer:
    """The server with its features registered (not started)."""
    server = DupguardServer()

    @server.feature(types.INITIALIZE)
    @_guarded(None)
    def initialize(ls: DupguardServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]) / 1000)

    @server.feature(types.INITIALIZED)
    @_guarded(None)
    def initialized(ls: DupguardServer, params: types.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watch = caps.did_change_watched_files if caps is not None else None
        if watch is not None and watch.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
            )
            registration = types.Registration(
                id="dupguard-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
            )
            ls.client_register_capability(types.RegistrationParams(registrations=[registration]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @_guarded(None)
    def did_open(ls: DupguardServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @_guarded(None)
    def did_change(ls: DupguardServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.unsaved.add(params.text_document.uri)
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @_guarded(None)
    def did_save(ls: DupguardServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.unsaved.discard(uri)
        ls.relint_all(except_uri=uri)
        ls.lint(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_guarded(None)
    def did_close(ls: DupguardServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = ls.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        ls.reports.pop(uri, None)
        ls.unsaved.discard(uri)
        path = to_fs_path(uri) if uri.startswith("file:") else None
        ls.engine.forget(Path(path) if path else None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @_guarded(None)
    def watched(ls: DupguardServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.relint_all()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True),
    )
    @_guarded([])
    def code_action(ls: DupguardServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    @_guarded(None)
    def code_action_resolve(ls: DupguardServer, params: types.CodeAction) -> types.CodeAction:
        return ls.resolve_fix_all(params) if params.kind == FIX_ALL_KIND else params

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_guarded(None)
    def hover(ls: DupguardServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


def serve() -> int:
    """Run the server on stdin/stdout until the client says ``exit``; logs go to stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("dupguard server: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    build().start_io()
    return 0


__all__ = ["DEBOUNCE", "FIX_ALL_KIND", "SOURCE", "DupguardServer", "build", "serve"]
