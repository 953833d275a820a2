"""``dupguard server``: real LSP sessions over stdio against a real server process.

Each test starts ``python -m dupguard server`` with pygls' own ``LanguageClient`` (the client
half of the library the server is built on, speaking JSON-RPC over the process's stdin and
stdout), initializes it on a project written for the test, and talks to it as an editor does:
open a file, wait for the published diagnostics, ask for code actions, apply the returned
``WorkspaceEdit`` to the text the way a client does (here, by this file's own reading of the
protocol's positions: UTF-16 code units), send the edited text back and wait for the new
diagnostics. Nothing is mocked. The server's stderr is read at the end: no traceback.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from dupguard.rulemeta import all_rules

TIMEOUT = 60.0

BAD = """\
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from agents import function_tool

app = FastAPI()


def search(query: str) -> str:
    return query


search_tool = function_tool(search)
label = "\U0001f916 bot"; tools = [search_tool, search_tool]
agent = ReActAgent.from_tools(tools=tools)


@app.post("/chat")
async def chat(payload: dict):
    return await agent.achat(payload["message"])
"""


class _Client(LanguageClient):
    """pygls' client, keeping the server's stderr once it has exited."""

    stderr = b""

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        if server.stderr is not None:
            self.stderr = await server.stderr.read()


class Session:
    """One editor session: a server process, the diagnostics it published, the documents' texts."""

    def __init__(
        self, root: Path, *, capabilities: types.ClientCapabilities | None = None, options: Any = None
    ) -> None:
        self.root = root
        self.capabilities = capabilities or types.ClientCapabilities()
        self.options = options
        self.client = _Client("dupguard-tests", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)

    async def __aenter__(self) -> Session:  # noqa: PYI034 (a plain class, never subclassed)
        env = {**os.environ}
        env.pop("DUPGUARD_DEBUG", None)
        await self.client.start_io(sys.executable, "-m", "dupguard", "server", cwd=str(self.root), env=env)
        root_uri = from_fs_path(str(self.root))
        result = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=self.capabilities,
                    root_uri=root_uri,
                    workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="project")],
                    initialization_options=self.options,
                )
            ),
            TIMEOUT,
        )
        self.server_info = result.server_info
        self.server_capabilities = result.capabilities
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)

    # ------------------------------------------------------------------ documents

    def uri(self, name: str) -> str:
        return from_fs_path(str(self.root / name))

    async def open(self, name: str, text: str | None = None) -> list[types.Diagnostic]:
        uri = self.uri(name)
        self.texts[uri] = (self.root / name).read_text() if text is None else text
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, self.texts[uri]))
        )
        return await self.diagnostics(uri, 1)

    async def change(self, uri: str, text: str) -> list[types.Diagnostic]:
        self.versions[uri] += 1
        self.texts[uri] = text
        version = self.versions[uri]
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.diagnostics(uri, version)

    async def diagnostics(self, uri: str, version: int) -> list[types.Diagnostic]:
        """The diagnostics the server published for ``version`` of the document."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for params in reversed(self.published.get(uri, [])):
                if params.version == version:
                    return list(params.diagnostics)
            await asyncio.sleep(0.01)
        raise AssertionError(f"no diagnostics for {uri} version {version}: {self.published.get(uri)}")

    async def actions(self, uri: str, span: types.Range, only: list[str] | None = None) -> list[types.CodeAction]:
        found = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri),
                    range=span,
                    context=types.CodeActionContext(diagnostics=[], only=only),
                )
            ),
            TIMEOUT,
        )
        return [a for a in found or [] if isinstance(a, types.CodeAction)]

    def apply(self, uri: str, edit: types.WorkspaceEdit) -> str:
        """What a client does with a ``WorkspaceEdit`` for one document: the new text."""
        edits: list[types.TextEdit] = []
        if edit.document_changes:
            for change in edit.document_changes:
                assert isinstance(change, types.TextDocumentEdit)
                assert change.text_document.uri == uri
                assert change.text_document.version == self.versions[uri]
                edits.extend(e for e in change.edits if isinstance(e, types.TextEdit))
        else:
            assert edit.changes is not None and set(edit.changes) == {uri}
            edits = list(edit.changes[uri])
        return apply_edits(self.texts[uri], edits)


def _offset(text: str, position: types.Position) -> int:
    """A protocol position (UTF-16 code units) → an offset in ``text`` (test texts break lines with "\\n")."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        units += 2 if ord(char) > 0xFFFF else 1
    return offset + len(line)


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits), reverse=True
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def run(scenario: Callable[[], Any]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 4 * TIMEOUT))


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def by_code(diagnostics: list[types.Diagnostic]) -> dict[str, types.Diagnostic]:
    return {str(d.code): d for d in diagnostics}


# ----------------------------------------------------------------------------- the session


def test_open_fix_and_see_the_diagnostics_clear(tmp_path: Path) -> None:
    """The acceptance session: initialize, open a bad file, get its diagnostics (code, message,
    severity, source, docs link, UTF-16 range), apply the safe quick fix, send the edited text
    (after the debounce), see that finding gone; suppress the other with ``# noqa`` and see
    none left."""
    _write(tmp_path, {"app.py": BAD})

    async def scenario() -> Session:
        session = Session(tmp_path)
        async with session as s:
            found = by_code(await s.open("app.py"))
            assert set(found) == {"DUP101", "DUP301"}, found
            uri = s.uri("app.py")
            dup301 = found["DUP301"]
            assert dup301.source == "dupguard"
            assert dup301.severity == types.DiagnosticSeverity.Warning
            assert dup301.code_description is not None
            assert dup301.code_description.href == all_rules()["DUP301"].url
            assert "search_tool" in dup301.message
            # the second `search_tool`, after an emoji that is two UTF-16 code units
            line = BAD.splitlines()[12]
            assert dup301.range.start.line == dup301.range.end.line == 12
            assert dup301.range.start.character == line.rindex("search_tool") + 1
            assert line[_offset_in_line(line, dup301.range.start.character) :] == "search_tool]"
            assert _offset_in_line(line, dup301.range.end.character) == len(line) - 1

            actions = await s.actions(uri, dup301.range)
            titles = [a.title for a in actions]
            quick = [a for a in actions if a.title.startswith("DUP301:")]
            assert len(quick) == 1, titles
            fix = quick[0]
            assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
            assert "(unsafe fix)" not in fix.title
            assert fix.edit is not None
            fixed = s.apply(uri, fix.edit)
            assert "tools = [search_tool]" in fixed
            # typing: a burst of changes within the debounce is linted at its last version only
            before = len(s.published[uri])
            for extra in ("#", "# t", "# ty"):
                s.versions[uri] += 1
                s.client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        types.VersionedTextDocumentIdentifier(uri=uri, version=s.versions[uri]),
                        [types.TextDocumentContentChangeWholeDocument(text=s.texts[uri] + extra)],
                    )
                )
            after = by_code(await s.change(uri, fixed))
            assert set(after) == {"DUP101"}, after
            versions = [p.version for p in s.published[uri][before:]]
            # (one publication, unless the loaded machine stalled the server past the debounce
            # between two of the four messages)
            assert versions[-1] == s.versions[uri] and len(versions) < 4, versions

            # the unsafe fix is offered, and titled so; the noqa action clears the rest
            dup101 = after["DUP101"]
            actions = await s.actions(uri, dup101.range, only=[types.CodeActionKind.QuickFix])
            unsafe = [a for a in actions if a.title.startswith("DUP101:") and "noqa" not in a.title]
            assert unsafe and all(a.title.endswith("(unsafe fix)") and not a.is_preferred for a in unsafe)
            noqa = [a for a in actions if a.title == "suppress DUP101 with # noqa: DUP101"]
            assert len(noqa) == 1, [a.title for a in actions]
            assert noqa[0].edit is not None
            suppressed = s.apply(uri, noqa[0].edit)
            assert "agent = ReActAgent.from_tools(tools=tools)  # noqa: DUP101\n" in suppressed
            assert await s.change(uri, suppressed) == []
        return session

    session = run(scenario)
    assert session.server_info is not None and session.server_info.name == "dupguard"
    assert b"Traceback" not in session.client.stderr, session.client.stderr.decode()


def _offset_in_line(line: str, character: int) -> int:
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def test_fix_all_safe_fixes_resolved_or_inline(tmp_path: Path) -> None:
    """``source.fixAll.dupguard``: with a client that resolves code actions the edit comes on
    resolve; with one that does not, in the action itself. Either way it is what ``dupguard
    fix`` makes of the file: the safe fix applied, the unsafe one not."""
    _write(tmp_path, {"app.py": BAD})
    resolving = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
            )
        ),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
        ),
    )

    async def scenario(capabilities: types.ClientCapabilities | None) -> str:
        async with Session(tmp_path, capabilities=capabilities, options={"debounce": 0}) as s:
            await s.open("app.py")
            uri = s.uri("app.py")
            everything = types.Range(types.Position(0, 0), types.Position(0, 0))
            actions = await s.actions(uri, everything, only=["source.fixAll"])
            assert [a.title for a in actions] == ["dupguard: fix all safe fixes in this file"]
            action = actions[0]
            assert action.kind == "source.fixAll.dupguard"
            if capabilities is not None:
                assert action.edit is None
                action = await asyncio.wait_for(s.client.code_action_resolve_async(action), TIMEOUT)
            assert action.edit is not None
            fixed = s.apply(uri, action.edit)
            remaining = by_code(await s.change(uri, fixed))
            assert set(remaining) == {"DUP101"}, remaining
            # nothing left to fix safely: the quick-fix request for the whole file offers no fix-all
            assert not [a for a in await s.actions(uri, everything, only=["source.fixAll"]) if a.edit is not None]
            return fixed

    expected = run(lambda: scenario(resolving))
    assert run(lambda: scenario(None)) == expected
    fix = subprocess.run([sys.executable, "-m", "dupguard", "fix", "app.py"], cwd=tmp_path, capture_output=True)
    assert fix.returncode == 1, fix.stderr  # DUP101 remains: its fix is unsafe
    assert (tmp_path / "app.py").read_text() == expected


def test_hover_shows_the_rule_summary(tmp_path: Path) -> None:
    """Hover on a finding: the rule's code, name and summary from the registry, and its docs
    link; on the code of a ``# noqa`` comment too; elsewhere nothing."""
    text = BAD.replace(
        "agent = ReActAgent.from_tools(tools=tools)", "agent = ReActAgent.from_tools(tools=tools)  # noqa: DUP101"
    )
    _write(tmp_path, {"app.py": text})

    async def scenario() -> None:
        async with Session(tmp_path, options={"debounce": 0}) as s:
            found = by_code(await s.open("app.py"))
            assert set(found) == {"DUP301"}
            uri = s.uri("app.py")
            target = found["DUP301"].range.start
            hover = await s.client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(target.line, target.character + 2))
            )
            meta = all_rules()["DUP301"]
            assert hover is not None and isinstance(hover.contents, types.MarkupContent)
            assert hover.contents.kind == types.MarkupKind.Markdown
            assert meta.summary in hover.contents.value and meta.url in hover.contents.value
            assert hover.range == found["DUP301"].range
            noqa_line = text.splitlines().index("agent = ReActAgent.from_tools(tools=tools)  # noqa: DUP101")
            at_noqa = await s.client.text_document_hover_async(
                types.HoverParams(
                    types.TextDocumentIdentifier(uri),
                    types.Position(noqa_line, len("agent = ReActAgent.from_tools(tools=tools)  # noqa: DUP1")),
                )
            )
            assert at_noqa is not None and all_rules()["DUP101"].summary in at_noqa.contents.value  # type: ignore[union-attr]
            nothing = await s.client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
            )
            assert nothing is None

    run(scenario)


def test_bad_buffers_never_crash_the_server(tmp_path: Path) -> None:
    """A syntax error is one error diagnostic where the parser stopped (no code, severity
    error), and code actions and hover answer with nothing; unsaved garbage (NUL bytes,
    brackets nested past any parser, a lone surrogate) does the same; the session goes on and
    the fixed buffer is linted as usual. No traceback on stderr."""
    _write(tmp_path, {"app.py": BAD})
    broken = BAD.replace("async def chat(payload: dict):", "async def chat(payload: dict:")
    garbage = [
        "from langchain.agents import AgentExecutor\n\x00\x00 = (\n",
        "from langchain.agents import AgentExecutor\nx = " + "(" * 5000 + "\n",
        "from langchain.agents import AgentExecutor\nx = '\udc80'\n",
        "from langchain.agents import AgentExecutor\n" + "\t  \x0c\r\r\n" * 3 + "def",
    ]

    async def with_stderr() -> bytes:
        session_stderr = b""

        async def inner() -> None:
            nonlocal session_stderr
            session = Session(tmp_path, options={"debounce": 0})
            async with session:
                await scenario_in(session)
            session_stderr = session.client.stderr

        async def scenario_in(s: Session) -> None:
            await s.open("app.py")
            uri = s.uri("app.py")
            problem = await s.change(uri, broken)
            assert len(problem) == 1, problem
            error = problem[0]
            assert error.severity == types.DiagnosticSeverity.Error and error.code is None
            assert error.source == "dupguard" and "syntax error" in error.message
            # where the parser stopped, as its message says (on the broken line or the next)
            stated = re.search(r"at line (\d+), column (\d+)", error.message)
            assert stated is not None, error.message
            assert (error.range.start.line + 1, error.range.start.character + 1) == tuple(map(int, stated.groups()))
            assert error.range.start.line - broken.splitlines().index("async def chat(payload: dict:") in (0, 1)
            assert await s.actions(uri, error.range) == []
            hover = await s.client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), error.range.start)
            )
            assert hover is None
            for text in garbage:
                found = await s.change(uri, text)
                assert all(d.severity == types.DiagnosticSeverity.Error for d in found), (text[:60], found)
                assert not any("internal error" in d.message for d in found), found
                await s.actions(uri, types.Range(types.Position(0, 0), types.Position(5, 0)))
            assert set(by_code(await s.change(uri, BAD))) == {"DUP101", "DUP301"}

        await inner()
        return session_stderr

    stderr = run(with_stderr)
    assert b"Traceback" not in stderr, stderr.decode()


def test_positions_in_the_encoding_the_client_asks_for(tmp_path: Path) -> None:
    """A client that offers UTF-8 positions gets them: the column after the emoji counts its
    four bytes (UTF-16, the default, counts two units; see the first test)."""
    _write(tmp_path, {"app.py": BAD})
    utf8 = types.ClientCapabilities(general=types.GeneralClientCapabilities(position_encodings=["utf-8"]))

    async def scenario() -> tuple[Any, types.Diagnostic]:
        async with Session(tmp_path, capabilities=utf8, options={"debounce": 0}) as s:
            found = by_code(await s.open("app.py"))
            return s.server_capabilities.position_encoding, found["DUP301"]

    encoding, dup301 = run(scenario)
    assert encoding == types.PositionEncodingKind.Utf8
    line = BAD.splitlines()[12]
    assert dup301.range.start.character == len(line[: line.rindex("search_tool")].encode("utf-8"))


# ----------------------------------------------------------------------------- the project


def test_each_file_uses_the_configuration_above_it(tmp_path: Path) -> None:
    """Configuration discovery as ``dupguard check`` does it for each file: the nearest
    ``[tool.dupguard]`` above the file (one editor window on a monorepo), with its catalog
    extensions and selection; a configuration dupguard cannot use is an error on the file,
    not a silent fallback to the defaults."""
    source = """\
        from fastapi import FastAPI
        from mycompany.bots import SupportBot
        from agents import Agent, function_tool

        app = FastAPI()
        search_tool = function_tool(print)
        support = Agent(name="support", tools=[search_tool, search_tool])
        bot = SupportBot()


        @app.post("/chat")
        async def chat(question: str):
            return bot.run(question)
        """
    _write(
        tmp_path,
        {
            "a/pyproject.toml": """\
                [tool.dupguard]
                ignore = ["DUP301"]
                extend-stateful-agents = ["mycompany.bots.SupportBot"]
                """,
            "a/app.py": source,
            "b/app.py": source,
            "c/dupguard.toml": 'select = ["DUP999"]\n',
            "c/app.py": source,
        },
    )

    async def scenario() -> None:
        async with Session(tmp_path, options={"debounce": 0}) as s:
            a = by_code(await s.open("a/app.py"))
            b = by_code(await s.open("b/app.py"))
            c = await s.open("c/app.py")
            assert set(a) == {"DUP101"} and "bot" in a["DUP101"].message, a
            assert set(b) == {"DUP301"}, b
            assert len(c) == 1 and c[0].severity == types.DiagnosticSeverity.Error, c
            assert "select" in c[0].message and "DUP999" in c[0].message

    run(scenario)


def test_the_buffer_is_linted_with_the_project_index(tmp_path: Path) -> None:
    """The agent is built in ``app/agent.py`` and used by ``app/routes.py``, which imports no
    framework: the finding needs the project index. On disk, ``routes.py`` does not use the
    agent yet; the unsaved buffer does, and is what gets linted. Saving another module
    re-lints the open file with the index rebuilt."""
    _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agent.py": """\
                from langchain.agents import AgentExecutor
                from langchain.memory import ConversationBufferMemory

                agent = AgentExecutor(agent=None, tools=[], memory=ConversationBufferMemory(memory_key="history"))
                """,
            "app/routes.py": """\
                from fastapi import FastAPI

                api = FastAPI()


                @api.post("/chat")
                async def chat(question: str):
                    return {"answer": question}
                """,
        },
    )
    buffer = textwrap.dedent(
        """\
        from fastapi import FastAPI

        from app.agent import agent

        api = FastAPI()


        @api.post("/chat")
        async def chat(question: str):
            return await agent.ainvoke({"input": question})
        """
    )

    agent = (tmp_path / "app/agent.py").read_text()
    watching = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
        )
    )

    async def next_diagnostics(s: Session, uri: str, count: int) -> list[types.Diagnostic]:
        deadline = time.monotonic() + TIMEOUT
        while len(s.published[uri]) == count and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert len(s.published[uri]) > count
        return list(s.published[uri][-1].diagnostics)

    async def scenario() -> list[types.Registration]:
        session = Session(tmp_path, capabilities=watching, options={"debounce": 0})
        registrations: list[types.Registration] = []

        @session.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registrations.extend(params.registrations)

        async with session as s:
            assert await s.open("app/routes.py") == []
            uri = s.uri("app/routes.py")
            found = await s.change(uri, buffer)
            assert [d.code for d in found] == ["DUP101"], found
            assert "app/agent.py" in found[0].message
            # the agent module is rewritten and saved: the open file is linted again, afresh
            (tmp_path / "app/agent.py").write_text("agent = None\n")
            count = len(s.published[uri])
            s.client.text_document_did_save(
                types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(s.uri("app/agent.py")))
            )
            assert await next_diagnostics(s, uri, count) == []
            # changed on disk by another program (a checkout): the watched-files notification
            (tmp_path / "app/agent.py").write_text(agent)
            count = len(s.published[uri])
            s.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(
                    [types.FileEvent(uri=s.uri("app/agent.py"), type=types.FileChangeType.Changed)]
                )
            )
            assert [d.code for d in await next_diagnostics(s, uri, count)] == ["DUP101"]
        return registrations

    registrations = run(scenario)
    assert [r.method for r in registrations] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    options = registrations[0].register_options
    patterns = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in options["watchers"]]  # type: ignore[index]
    assert "**/*.py" in patterns and "**/pyproject.toml" in patterns


def test_other_files_unsaved_buffers_reach_the_index(tmp_path: Path) -> None:
    """Two open files: ``app/agent.py`` builds the agent only in its unsaved buffer (on disk it
    is ``None``), and ``app/routes.py`` uses it: linted after the agent's edit, the route is
    reported, from the buffer. Nothing of the buffer is kept on disk: ``dupguard check`` on the
    saved files afterwards finds nothing."""
    _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agent.py": "agent = None\n",
            "app/routes.py": """\
                from fastapi import FastAPI

                from app.agent import agent

                api = FastAPI()


                @api.post("/chat")
                async def chat(question: str):
                    return await agent.ainvoke({"input": question})
                """,
        },
    )
    built = textwrap.dedent(
        """\
        from langchain.agents import AgentExecutor
        from langchain.memory import ConversationBufferMemory

        agent = AgentExecutor(agent=None, tools=[], memory=ConversationBufferMemory(memory_key="history"))
        """
    )

    async def scenario() -> None:
        async with Session(tmp_path, options={"debounce": 0}) as s:
            assert await s.open("app/routes.py") == []
            await s.open("app/agent.py")
            await s.change(s.uri("app/agent.py"), built)
            routes = s.uri("app/routes.py")
            found = await s.change(routes, s.texts[routes] + "\n")
            assert [d.code for d in found] == ["DUP101"], found
            # the agent's buffer goes back to what is on disk: the route is clean again
            await s.change(s.uri("app/agent.py"), "agent = None\n")
            assert await s.change(routes, s.texts[routes] + "\n") == []
            await s.change(s.uri("app/agent.py"), built)

    run(scenario)
    check = subprocess.run(
        [sys.executable, "-m", "dupguard", "check", "app/routes.py"], cwd=tmp_path, capture_output=True
    )
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()


# ----------------------------------------------------------------------------- the command


def test_server_needs_its_extra_and_says_so(tmp_path: Path) -> None:
    """Without pygls, ``dupguard server`` exits 2 with one line naming the extra (no traceback)."""
    probe = "import sys\nsys.modules['pygls'] = None\nfrom dupguard.cli import main\nsys.exit(main(['server']))\n"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'dupguard[lsp]'" in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["check", "rules"])
def test_other_commands_never_import_the_server(tmp_path: Path, command: str) -> None:
    """The CLI imports the server (and pygls) only for ``dupguard server``."""
    (tmp_path / "a.py").write_text("from langchain.agents import AgentExecutor\nagent = AgentExecutor()\n")
    args = ["check", "--no-cache", "--isolated", "a.py"] if command == "check" else ["rules"]
    probe = (
        "import sys\n"
        "from dupguard.cli import main\n"
        f"main({args!r})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'cattrs')"
        " or m in ('dupguard.server', 'dupguard.editor')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True)
    assert proc.stdout.decode().splitlines()[-1] == "[]", proc.stderr.decode()


# ----------------------------------------------------------------------------- the engine alone


def test_positions_in_each_encoding() -> None:
    """Offsets ↔ protocol positions: lines end at "\\r\\n", "\\r" or "\\n" (not at a form
    feed, as ``str.splitlines`` would have it); a character above the BMP is two UTF-16 units,
    four UTF-8 bytes, one UTF-32 unit; a position past the end of a line is its end."""
    from dupguard.editor import LineIndex

    text = "a\r\nb\U0001f600c\x0cd\re\n"
    lines = LineIndex(text)
    at_c = text.index("c")
    assert lines.position(at_c, "utf-16") == (1, 3)
    assert lines.position(at_c, "utf-8") == (1, 5)
    assert lines.position(at_c, "utf-32") == (1, 2)
    assert lines.position(text.index("e"), "utf-16") == (2, 0)
    for encoding in ("utf-8", "utf-16", "utf-32"):
        for offset in range(len(text) + 1):
            if text[offset - 1 : offset + 1] == "\r\n":
                continue  # between "\r" and "\n": not a position
            assert lines.offset(*lines.position(offset, encoding), encoding) == offset, (encoding, offset)
    assert lines.offset(0, 99) == 1  # the end of "a", before "\r\n"
    assert lines.offset(9, 0) == len(text)


def test_noqa_edits_only_where_a_comment_can_go(tmp_path: Path) -> None:
    """The ``# noqa`` action adds the code to an existing ``# noqa:`` list, appends a comment
    otherwise, and offers nothing on a line that ends inside a string (a comment there would be
    text of the string); each edit it offers silences the finding when linted again."""
    from dupguard.editor import Engine, apply

    engine = Engine([tmp_path])
    path = tmp_path / "app.py"
    listed = BAD.replace("tools = [search_tool, search_tool]", "tools = [search_tool, search_tool]  # noqa: DUP5")
    in_string = BAD.replace(
        "agent = ReActAgent.from_tools(tools=tools)",
        'agent = ReActAgent.from_tools(tools=tools, context="""\nsupport\n""")',
    )
    for text, code, expected in [
        (BAD, "DUP101", "agent = ReActAgent.from_tools(tools=tools)  # noqa: DUP101\n"),
        (listed, "DUP301", "tools = [search_tool, search_tool]  # noqa: DUP5, DUP301\n"),
        (in_string, "DUP101", None),
    ]:
        report = engine.lint(path, text)
        finding = next(f for f in report.findings if f.diagnostic.code == code)
        edit = report.noqa(finding)
        if expected is None:
            assert edit is None
            continue
        assert edit is not None
        edited = apply(text, [edit])
        assert expected in edited
        assert code not in {f.diagnostic.code for f in engine.lint(path, edited).findings}
