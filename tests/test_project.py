"""The project index (dupguard/project.py): construction in one module, use in another.

Each case is a minimal project written for this test; the docstring names the public
repository, path and commit whose shape it reproduces (bench/real-apps/repos-*.toml lists them,
labels-*.toml says why they are defects), or issue 14 when the form is listed there and the
labelled set has no instance of it. No application code is copied.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from dupguard.config import resolve
from dupguard.discovery import discover
from dupguard.pipeline import lint_paths
from linthelpers import run_cli

ROUTE = """\
from fastapi import FastAPI
{imports}

api = FastAPI()


@api.post("/chat")
async def chat(question: str):
    return {body}
"""

LANGCHAIN_AGENT = """\
from langchain.agents import AgentExecutor
from langchain.memory import ConversationBufferMemory

agent = AgentExecutor(agent=None, tools=[], memory=ConversationBufferMemory(memory_key="history"))
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _lint(root: Path, files: dict[str, str], *named: str) -> list[tuple[str, int, str, str]]:
    """(file, row, code, message) for the project, linted as ``dupguard check`` does (every
    file, or only ``named`` ones, as pre-commit passes them)."""
    _write(root, files)
    settings = resolve(cwd=root)
    paths = [root / n for n in named] or discover([str(root)], settings).files
    result = lint_paths(paths, settings, jobs=1, use_cache=False)
    assert not result.errors, result.errors
    return sorted(
        (Path(d.filename).resolve().relative_to(root.resolve()).as_posix(), d.row, d.code, d.message)
        for d in result.diagnostics
    )


def _codes(found: list[tuple[str, int, str, str]]) -> list[tuple[str, int, str]]:
    return [(f, row, code) for f, row, code, _ in found]


# ----------------------------------------------------------------------------- import forms


def test_absolute_import_of_a_module_level_agent(tmp_path: Path) -> None:
    """NeoFacturing/backend@174cfd9bc40a1f0058109a029c15a15f95626522, app/core/chat.py: the
    module imports the agent app/core/agent.py builds and runs it; the route imports no framework."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agent.py": LANGCHAIN_AGENT,
            "app/routes.py": ROUTE.format(
                imports="from app.agent import agent", body="await agent.ainvoke({'input': question})"
            ),
        },
    )
    assert _codes(found) == [("app/routes.py", 9, "DUP101")]
    message = found[0][3]
    assert "`agent` is a stateful langchain agent" in message
    assert "bound at module level in app/agent.py:4" in message and "used here in `chat` (line 9)" in message


def test_relative_import(tmp_path: Path) -> None:
    """mlennie/openai-agents-sdk-legal-assistant@f30f1b98e9 (app/agents/triage_agent.py imports
    its siblings with ``from .legal_agent import ...``): ``from .agent import agent``."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agent.py": LANGCHAIN_AGENT,
            "app/routes.py": ROUTE.format(imports="from .agent import agent", body="agent.invoke({'input': question})"),
        },
    )
    assert _codes(found) == [("app/routes.py", 9, "DUP101")]


def test_import_module_as_alias(tmp_path: Path) -> None:
    """Issue 14, class 1 (``import app.agents as agents``; no labelled repository uses it)."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agents.py": LANGCHAIN_AGENT,
            "app/routes.py": ROUTE.format(
                imports="import app.agents as agents", body="agents.agent.invoke({'input': question})"
            ),
        },
    )
    assert _codes(found) == [("app/routes.py", 9, "DUP101")]
    assert found[0][3].startswith("`agents.agent` is a stateful langchain agent")


def test_depends_on_a_cached_factory_in_another_module(tmp_path: Path) -> None:
    """Issue 14, class 1 (``from app.deps import get_agent`` with FastAPI ``Depends``); the
    Depends form is serkanh/sre-bot-strands@d1e2e440a9f36b83ca2d13a4a21491a57f6edf22,
    app/api/routes.py. The cached factory hands every request the same agent."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/deps.py": """\
                from functools import lru_cache

                from llama_index.core.agent import ReActAgent


                @lru_cache
                def get_agent():
                    return ReActAgent.from_tools(tools=[])
                """,
            "app/routes.py": """\
                from fastapi import Depends, FastAPI

                from app.deps import get_agent

                api = FastAPI()


                @api.post("/chat")
                async def chat(question: str, agent=Depends(get_agent)):
                    return await agent.achat(question)
                """,
        },
    )
    assert _codes(found) == [("app/routes.py", 10, "DUP101")]
    assert "returned by the cached factory `get_agent()` (app/deps.py:7)" in found[0][3]


def test_src_layout(tmp_path: Path) -> None:
    """agentika/agentize@e1e93ef9bc88c49798064a63c5ea6fb4cfb65577 keeps its package in
    src/agentize/: ``from shop.agent import agent`` finds src/shop/agent.py."""
    found = _lint(
        tmp_path,
        {
            "src/shop/__init__.py": "",
            "src/shop/agent.py": LANGCHAIN_AGENT,
            "src/shop/api.py": ROUTE.format(
                imports="from shop.agent import agent", body="agent.invoke({'input': question})"
            ),
        },
    )
    assert _codes(found) == [("src/shop/api.py", 9, "DUP101")]


def test_reexport_through_package_init(tmp_path: Path) -> None:
    """pncnfb/fastapi-llamaindex-chatbot@17358b391a537eea046f9b9b9bd4a820eea3f239,
    src/config/__init__.py re-exports its submodules' names: the route imports the package."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agents/__init__.py": "from .core import agent\n",
            "app/agents/core.py": LANGCHAIN_AGENT,
            "app/routes.py": ROUTE.format(imports="from app.agents import agent", body="agent.run(question)"),
        },
    )
    assert _codes(found) == [("app/routes.py", 9, "DUP101")]
    assert "app/agents/core.py:4" in found[0][3]


def test_import_roots_from_config(tmp_path: Path) -> None:
    """``src = [...]`` in ``[tool.dupguard]`` (ruff's key): the roots imports are resolved from.
    Without it, ``svc.agent`` is not a module of this project and nothing is known about it."""
    files = {
        "backend/svc/__init__.py": "",
        "backend/svc/agent.py": LANGCHAIN_AGENT,
        "backend/svc/api.py": ROUTE.format(imports="from svc.agent import agent", body="agent.run(question)"),
    }
    assert _lint(tmp_path, files) == []
    (tmp_path / "pyproject.toml").write_text('[tool.dupguard]\nsrc = ["backend"]\n')
    assert _codes(_lint(tmp_path, {})) == [("backend/svc/api.py", 9, "DUP101")]
    (tmp_path / "pyproject.toml").write_text('[tool.dupguard]\nsrc = "backend"\n')
    bad = run_cli("check", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "src: expected a list of strings" in bad.stderr.decode()


def test_project_factory_bound_at_module_level(tmp_path: Path) -> None:
    """hoannc0506/Youtube-Chatbot@0288d0a32bc59822b10091834f3bd6d136ac535e, api.py:13: the
    module binds the agent a factory of agent_utils.py builds (into a local, then returned)."""
    found = _lint(
        tmp_path,
        {
            "agent_utils.py": """\
                from llama_index.core.agent import ReActAgent


                def get_agent(verbose=False):
                    react = ReActAgent.from_tools([], verbose=verbose)
                    return react
                """,
            "api.py": """\
                from fastapi import FastAPI

                import agent_utils

                app = FastAPI()
                agent = agent_utils.get_agent()


                @app.post("/chat")
                def chat(query: str):
                    return agent.chat(query).response
                """,
        },
    )
    assert _codes(found) == [("api.py", 6, "DUP101")]


def test_function_that_runs_a_shared_agent_three_modules_away(tmp_path: Path) -> None:
    """NeoFacturing/backend@174cfd9bc40a1f0058109a029c15a15f95626522: the memory is built in
    app/core/memory.py, the agent in app/core/agent.py, run by get_response() in app/core/chat.py,
    which the route in app/main.py calls. The finding is at the call and names every place; the
    index also tells app/core/chat.py that the route calls ``get_response`` per request, and
    agent.py and memory.py that a function reached per request runs their objects, so each is
    reported where it is built (where the labels put these defects and a maintainer fixes them)."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/core/__init__.py": "",
            "app/core/memory.py": """\
                from langchain.memory import ConversationBufferMemory

                memory = ConversationBufferMemory(memory_key="memory")
                """,
            "app/core/agent.py": """\
                from langchain.agents import initialize_agent

                from app.core.memory import memory

                bot = initialize_agent([], None, memory=memory)
                """,
            "app/core/chat.py": """\
                from app.core.agent import bot


                def get_response(text):
                    cleaned = text.strip()
                    return bot(cleaned)["output"]
                """,
            "app/main.py": """\
                from fastapi import FastAPI

                from app.core.chat import get_response

                app = FastAPI()


                @app.post("/chat")
                async def read_chat(text: str):
                    return get_response(text)
                """,
        },
    )
    assert _codes(found) == [
        ("app/core/agent.py", 5, "DUP101"),
        ("app/core/chat.py", 6, "DUP101"),
        ("app/core/chat.py", 6, "DUP102"),
        ("app/core/memory.py", 3, "DUP102"),
        ("app/main.py", 10, "DUP101"),
        ("app/main.py", 10, "DUP102"),
    ]
    assert "run per request by `get_response` at app/core/chat.py:6" in found[0][3]
    assert "held by `bot` (app/core/agent.py:5), run per request by `get_response`" in found[3][3]
    found = found[4:]
    message = found[0][3]
    assert message.startswith("`get_response()` runs `bot` (app/core/chat.py:6)")
    assert "bound at module level in app/core/agent.py:5" in message and "called here in `read_chat`" in message
    # the memory the agent was built with, as one file reports it (a second finding, DUP102)
    memory = found[1][3]
    assert memory.startswith("`memory` (app/core/memory.py:3) is a stateful memory held by the agent `get_response()`")


def test_lifespan_stores_a_memory_holding_class_on_app_state(tmp_path: Path) -> None:
    """pncnfb/fastapi-llamaindex-chatbot@17358b391a537eea046f9b9b9bd4a820eea3f239:
    src/agents/core.py's class holds a LlamaIndex Memory; src/config/loader.py's factory builds
    one; src/config/lifespan.py stores it on app.state; src/routes/chat.py calls it per request;
    src/main.py wires the two into one application. (Another application in the same tree, not
    linked to it by imports, does not see that state.)"""
    found = _lint(
        tmp_path,
        {
            "src/__init__.py": "",
            "src/agents/__init__.py": "",
            "src/agents/core.py": """\
                from llama_index.core.memory import Memory


                class Assistant:
                    def __init__(self, size):
                        self.memory = Memory.from_defaults(token_limit=size)

                    async def __call__(self, message):
                        self.memory.put_messages([message])
                        return self.memory.get()

                    def describe(self):
                        return "assistant"
                """,
            "src/config/__init__.py": "from .loader import build_assistant\n",
            "src/config/loader.py": """\
                from src.agents.core import Assistant


                async def build_assistant(size):
                    return Assistant(size)
                """,
            "src/config/lifespan.py": """\
                from contextlib import asynccontextmanager

                from src.config import build_assistant


                @asynccontextmanager
                async def lifespan(app):
                    app.state.assistant = await build_assistant(4000)
                    yield
                """,
            "src/main.py": """\
                from fastapi import FastAPI

                from src.config.lifespan import lifespan
                from src.routes import chat

                app = FastAPI(lifespan=lifespan)
                app.include_router(chat.router)
                """,
            "src/routes/chat.py": """\
                from fastapi import APIRouter, Request

                router = APIRouter()


                @router.post("/send")
                async def send(req: Request, message: str):
                    return await req.app.state.assistant(message)


                @router.get("/about")
                async def about(req: Request):
                    return req.app.state.assistant.describe()
                """,
        },
    )
    assert _codes(found) == [("src/routes/chat.py", 8, "DUP102")]
    message = found[0][3]
    assert "`app.state.assistant` is a stateful llama_index memory" in message
    other = tmp_path / "demo" / "app.py"  # another application of the tree, not linked by imports
    other.parent.mkdir()
    other.write_text((tmp_path / "src" / "routes" / "chat.py").read_text())
    assert _codes(_lint(tmp_path, {})) == [("src/routes/chat.py", 8, "DUP102")]
    assert "stored on the application state by a startup hook at src/config/lifespan.py:8" in message


def test_startup_hook_assigns_another_modules_global_read_through_depends(tmp_path: Path) -> None:
    """serkanh/sre-bot-strands@d1e2e440a9f36b83ca2d13a4a21491a57f6edf22: app/main.py's lifespan
    sets ``routes.agent`` to a class holding a Strands Agent; app/api/routes.py hands its
    module global to the route through ``Depends(get_agent)``."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/coordinator.py": """\
                from strands import Agent


                class Coordinator:
                    def __init__(self):
                        self.agent = Agent(tools=[])

                    async def chat(self, prompt):
                        async for event in self.agent.stream_async(prompt):
                            yield event
                """,
            "app/routes.py": """\
                from fastapi import APIRouter, Depends

                from app.coordinator import Coordinator

                router = APIRouter()
                agent: Coordinator | None = None


                def get_agent():
                    return agent


                @router.post("/chat")
                async def chat(prompt: str, bot=Depends(get_agent)):
                    return [event async for event in bot.chat(prompt)]
                """,
            "app/main.py": """\
                from contextlib import asynccontextmanager

                from fastapi import FastAPI

                from app import routes
                from app.coordinator import Coordinator


                @asynccontextmanager
                async def lifespan(_app):
                    routes.agent = Coordinator()
                    yield


                app = FastAPI(lifespan=lifespan)
                """,
        },
    )
    assert _codes(found) == [("app/routes.py", 6, "DUP101")]
    assert "assigned to this module at startup by app/main.py:11" in found[0][3]


def test_streamlit_script_importing_a_module_level_memory(tmp_path: Path) -> None:
    """amitkharche/agents_agentic_ai_rag_langgraph_orchestrator@0f16092825b9caeb1a826a3deb5a289643da0b77:
    agents/calculator.py binds a memory at module level and builds an executor over it per call;
    the Streamlit script calls the router that calls that factory. Imported modules are loaded
    once per process, so every session writes to that one memory. A memory the script itself
    binds is rebuilt on every run (tests/data/traps/streamlit_main_script.py) and stays clean."""
    found = _lint(
        tmp_path,
        {
            "agents/__init__.py": "",
            "agents/calculator.py": """\
                from langchain.agents import AgentExecutor
                from langchain.memory import ConversationBufferMemory

                memory = ConversationBufferMemory(memory_key="chat_history")


                def calculator_executor():
                    return AgentExecutor(agent=None, tools=[], memory=memory)
                """,
            "agents/router.py": """\
                from agents.calculator import calculator_executor


                def route(query):
                    return calculator_executor().run(query)
                """,
            "app.py": """\
                import streamlit as st
                from langchain.memory import ConversationBufferMemory

                from agents.router import route

                own = ConversationBufferMemory()
                query = st.text_input("Ask")
                if query:
                    own.save_context({"input": query}, {"output": ""})
                    st.write(route(query))
                """,
        },
    )
    assert _codes(found) == [("agents/calculator.py", 4, "DUP102"), ("app.py", 10, "DUP102")]
    assert "which is called per request by `route` at agents/router.py:5" in found[0][3]
    assert "`route()` runs `memory` (agents/calculator.py:8)" in found[1][3]


def test_what_another_module_builds_per_call_is_not_shared(tmp_path: Path) -> None:
    """The near misses of bench/real-apps/labels-a.toml (LineaLabs/autogen-fastapi, anjosluc/
    strands-base-agent-api): a factory called in the handler, a stateless agent shared by
    design, a runner called only from ``__main__``. Nothing to report."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/agent.py": """\
                from agents import Agent
                from langchain.agents import AgentExecutor
                from langchain.memory import ConversationBufferMemory

                assistant = Agent(name="assistant")
                shared = AgentExecutor(agent=None, tools=[], memory=ConversationBufferMemory())


                def build():
                    return AgentExecutor(agent=None, tools=[], memory=ConversationBufferMemory())


                def nightly(text):
                    return shared.invoke({"input": text})
                """,
            "app/routes.py": """\
                from agents import Runner
                from fastapi import FastAPI

                from app.agent import assistant, build, nightly

                api = FastAPI()


                @api.post("/chat")
                async def chat(question: str):
                    fresh = build()
                    await Runner.run(assistant, question)
                    return fresh.invoke({"input": question})


                if __name__ == "__main__":
                    nightly("report")
                """,
        },
    )
    assert found == []


# ----------------------------------------------------------------------------- session keys

GRAPH = """\
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import StateGraph

builder = StateGraph(dict)
graph = builder.compile(checkpointer=MemorySaver())
"""


def _route(body: str, imports: str = "from app.graph import graph") -> str:
    return ROUTE.format(imports=imports, body=body)


def test_session_key_from_a_module_constant(tmp_path: Path) -> None:
    """Issue 14, class 3: ``SESSION_ID = "default"`` reaching the framework by name."""
    route = _route("graph.invoke({}, {'configurable': {'thread_id': THREAD}})").replace(
        "api = FastAPI()", 'api = FastAPI()\nTHREAD = "main"'
    )
    found = _lint(tmp_path, {"app/__init__.py": "", "app/graph.py": GRAPH, "app/routes.py": route})
    assert _codes(found) == [("app/routes.py", 10, "DUP103")]
    assert '`thread_id` is the constant "main" (the module constant `THREAD`)' in found[0][3]


def test_session_key_imported_from_a_config_module(tmp_path: Path) -> None:
    """abi-asatsuma/langchain@3c589585f348faa53d89b3d433dca4680555a506, langchainapp/main.py: the
    route keys the graph another module compiles; here the key comes from a config module too."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/graph.py": GRAPH,
            "app/config.py": 'SESSION_ID = "session1"\n',
            "app/routes.py": _route(
                "graph.invoke({}, {'configurable': {'thread_id': SESSION_ID}})",
                "from app.config import SESSION_ID\nfrom app.graph import graph",
            ),
        },
    )
    assert _codes(found) == [("app/routes.py", 10, "DUP103")]
    assert '"session1" (`SESSION_ID`, a constant from app/config.py:1)' in found[0][3]


def test_session_key_from_a_default_parameter(tmp_path: Path) -> None:
    """Issue 14, class 3: a helper's ``thread_id="default"`` that the route does not pass."""
    route = textwrap.dedent(
        """\
        from fastapi import FastAPI

        from app.graph import graph

        api = FastAPI()


        def ask(question, thread_id="default"):
            return graph.invoke({"q": question}, {"configurable": {"thread_id": thread_id}})


        @api.post("/chat")
        async def chat(question: str):
            return ask(question)


        @api.post("/chat/{thread}")
        async def chat_in_thread(question: str, thread: str):
            return ask(question, thread)
        """
    )
    found = _lint(tmp_path, {"app/__init__.py": "", "app/graph.py": GRAPH, "app/routes.py": route})
    assert _codes(found) == [("app/routes.py", 14, "DUP103")]
    assert "the default of `ask`'s parameter `thread_id`, not passed here" in found[0][3]


def test_session_key_from_an_fstring_with_no_per_request_part(tmp_path: Path) -> None:
    """Issue 14, class 3: ``f"{APP}-session"`` is one key; ``f"{APP}-{user}"`` is not."""
    route = textwrap.dedent(
        """\
        from fastapi import FastAPI

        from app.graph import graph

        api = FastAPI()
        APP = "shop"


        @api.post("/chat")
        async def chat(question: str, user: str):
            graph.invoke({}, {"configurable": {"thread_id": f"{APP}-{user}"}})
            return graph.invoke({}, {"configurable": {"thread_id": f"{APP}-session"}})
        """
    )
    found = _lint(tmp_path, {"app/__init__.py": "", "app/graph.py": GRAPH, "app/routes.py": route})
    assert _codes(found) == [("app/routes.py", 12, "DUP103")]
    assert "an f-string with no per-request part" in found[0][3]


def test_session_key_from_a_config_object(tmp_path: Path) -> None:
    """Issue 14, class 3: a literal attribute of a settings class, read through its module-level
    instance in another module (pncnfb/fastapi-llamaindex-chatbot@17358b391a537eea046f9b9b9bd4a820eea3f239
    keeps such a ``settings`` object in src/config/settings.py)."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/graph.py": GRAPH,
            "app/settings.py": """\
                class Settings:
                    THREAD_ID: str = "support"
                    TIMEOUT = 30


                settings = Settings()
                """,
            "app/routes.py": _route(
                "graph.invoke({}, {'configurable': {'thread_id': settings.THREAD_ID}})",
                "from app.graph import graph\nfrom app.settings import settings",
            ),
        },
    )
    assert _codes(found) == [("app/routes.py", 10, "DUP103")]
    assert '"support" (`settings.THREAD_ID`, a constant from app/settings.py:2)' in found[0][3]


def test_streamlit_session_key_on_an_imported_graph(tmp_path: Path) -> None:
    """abi-asatsuma/langchain@3c589585f348faa53d89b3d433dca4680555a506, langchain_streamlit.py:11:
    the script keys a graph (with its checkpointer) that another module compiled, with a constant:
    every visitor continues one thread. A history the script builds itself per run is already
    per session (langchain-ai/streamlit-agent@634e1cecf23d7ca3a4c5e708944673e057765b2a,
    streamlit_agent/basic_memory.py:60, a near miss): not flagged."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/graph.py": GRAPH,
            "ui.py": """\
                import streamlit as st
                from langchain_core.runnables.history import RunnableWithMessageHistory

                from app.graph import graph

                prompt = st.chat_input("Ask")
                if prompt:
                    graph.invoke({"q": prompt}, {"configurable": {"thread_id": "web"}})
                    local = RunnableWithMessageHistory(graph, lambda session_id: st.session_state.history)
                    local.invoke({"q": prompt}, {"configurable": {"session_id": "any"}})
                """,
        },
    )
    assert _codes(found) == [("ui.py", 8, "DUP103")]
    assert "code that runs for every Streamlit session" in found[0][3]


def test_constant_thread_on_a_checkpointer_made_for_the_request_is_fine(tmp_path: Path) -> None:
    """The near miss of bench/real-apps/facts-a.md ("a constant thread_id is harmless only when
    the checkpointer itself is private to the run"): a graph compiled in the handler with an
    in-memory checkpointer made there, or with none. With a module-level checkpointer it is shared."""
    route = textwrap.dedent(
        """\
        from fastapi import FastAPI
        from langgraph.checkpoint.memory import MemorySaver
        from langgraph.graph import StateGraph

        api = FastAPI()
        builder = StateGraph(dict)
        saver = MemorySaver()


        @api.post("/private")
        async def private(question: str):
            graph = builder.compile(checkpointer=MemorySaver())
            config = {"configurable": {"thread_id": "1"}}
            return graph.invoke({"q": question}, config)


        @api.post("/none")
        async def no_checkpointer(question: str):
            graph = builder.compile()
            return graph.invoke({"q": question}, {"configurable": {"thread_id": "1"}})


        @api.post("/shared")
        async def shared(question: str):
            graph = builder.compile(checkpointer=saver)
            return graph.invoke({"q": question}, {"configurable": {"thread_id": "1"}})
        """
    )
    found = _lint(tmp_path, {"app.py": route})
    assert _codes(found) == [("app.py", 26, "DUP103")]


def test_constant_thread_in_a_config_helper_of_another_module(tmp_path: Path) -> None:
    """lenaar/financial-ai-agent@63389a34effbd2bd2463ed3565be14d9a8858ce1: memory.py's
    ``get_thread_config()`` returns a config with a constant thread id; the Streamlit page opens a
    new in-memory checkpointer for every press and runs the graph with that config. The helper
    hands its key back; the store it keys is the caller's, so the helper is not reported. The
    counterpart: a helper of another module that runs the graph itself with the constant key, on a
    module-level checkpointer, is reported."""
    page = """\
        import streamlit as st
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import StateGraph

        from settings import thread_config

        builder = StateGraph(dict)


        def main():
            if st.button("Start"):
                with SqliteSaver.from_conn_string(":memory:") as saver:
                    config = thread_config()
                    st.write(builder.compile(checkpointer=saver).invoke({"q": 1}, config))


        if __name__ == "__main__":
            main()
        """
    helper = """\
        from langgraph.checkpoint.sqlite import SqliteSaver


        def saver():
            return SqliteSaver.from_conn_string(":memory:")


        def thread_config():
            return {"configurable": {"thread_id": 1}}
        """
    found = _lint(tmp_path, {"page.py": page, "settings.py": helper})
    assert _codes(found) == []

    runner = """\
        from langgraph.checkpoint.memory import MemorySaver
        from langgraph.graph import StateGraph

        graph = StateGraph(dict).compile(checkpointer=MemorySaver())


        def thread_config():
            return graph.invoke({"q": 1}, {"configurable": {"thread_id": 1}})
        """
    found = _lint(tmp_path, {"settings.py": runner})
    assert _codes(found) == [("settings.py", 8, "DUP103")]


# ----------------------------------------------------------------------------- front ends


def _agent_project(root: Path, *, shared: bool = True) -> None:
    agent = LANGCHAIN_AGENT if shared else LANGCHAIN_AGENT.replace("agent = ", "def make():\n    return ")
    _write(
        root,
        {
            "app/__init__.py": "",
            "app/agent.py": agent,
            "app/routes.py": ROUTE.format(imports="from app.agent import agent", body="agent.run(question)"),
        },
    )


def test_cache_is_invalidated_when_an_imported_module_changes(tmp_path: Path) -> None:
    """A change to app/agent.py changes what app/routes.py reports, though routes.py's bytes do
    not change: its cache entry is keyed by the facts it consumed too."""
    _agent_project(tmp_path)
    first = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert [d["code"] for d in json.loads(first.stdout)] == ["DUP101"], first.stderr.decode()
    _agent_project(tmp_path, shared=False)  # the agent is now built per call: nothing is shared
    second = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert json.loads(second.stdout) == [], second.stderr.decode()
    _agent_project(tmp_path)
    (tmp_path / "app" / "agent.py").write_text("\n\n" + (tmp_path / "app" / "agent.py").read_text())
    third = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert [(d["code"], "app/agent.py:6" in d["message"]) for d in json.loads(third.stdout)] == [("DUP101", True)]
    assert (tmp_path / ".dupguard_cache").is_dir()


def test_only_the_route_file_named(tmp_path: Path) -> None:
    """pre-commit passes only the changed files: the index still covers the project's tree."""
    _agent_project(tmp_path)
    proc = run_cli("check", "--force-exclude", "--no-cache", "app/routes.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr.decode()
    assert "app/routes.py:9:12: DUP101" in proc.stdout.decode()


def test_fix_reports_what_check_reports(tmp_path: Path) -> None:
    """``fix`` sees the same cross-module finding (it has no automatic fix: the agent is built elsewhere)."""
    _agent_project(tmp_path)
    proc = run_cli("fix", "--diff", ".", cwd=tmp_path)
    assert "app/routes.py:9:12: DUP101" in proc.stderr.decode() + proc.stdout.decode()
    assert "built in another module (app/agent.py:4): fix it there" in proc.stderr.decode()


def test_trees_without_agent_code_never_parse(tmp_path: Path) -> None:
    """Modules that import each other but no agent framework: the index stops at the text scan
    (no ``ast``, no libcst)."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import value\nfrom .b import other\n",
            "pkg/b.py": "value = 1\nother = 'x'\n",
        },
    )
    probe = (
        "import sys\n"
        "sys.argv = ['dupguard', 'check', '--no-cache', '.']\n"
        "from dupguard.cli import main\n"
        "assert main() == 0\n"
        "print(sorted(m for m in ('libcst', 'ast', 'dupguard.semantic.catalog_data') if m in sys.modules))\n"
    )
    import subprocess

    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines()[-1] == "[]"


@pytest.mark.parametrize("text", ["from .agent import (\n    agent,\n)\n", "import app.agent as a, os\n"])
def test_import_scan_reads_the_forms_the_model_resolves(text: str) -> None:
    from dupguard.project import scan_imports

    found = {(i.local, i.qualified) for i in scan_imports(text, "app")}
    assert found & {("agent", "app.agent.agent"), ("a", "app.agent")}


def test_bad_projects_never_crash_the_index(tmp_path: Path) -> None:
    """Import cycles, a chain of re-exports and of runners far longer than any real one, a module
    that does not parse, one nested past Python's limits and one that is not text: the index
    gives up on what it cannot follow (``MAX_NESTING``) and still answers the rest, and the run
    reports the files it cannot read as it does without the index."""
    files = {
        "app/__init__.py": "",
        "app/agent.py": LANGCHAIN_AGENT,
        "app/a.py": "from app.b import agent\n",
        "app/b.py": "from app.a import agent\n",
        "app/broken.py": "from app.agent import agent\ndef f(:\n",
        "app/deep.py": "from app.agent import agent\nx = " + "(" * 250 + ")" * 250 + "\n",
    }
    for i in range(300):
        files[f"app/chain{i}.py"] = (
            f"from app.chain{i + 1} import agent\n" if i < 299 else "from app.agent import agent\n"
        )
        nxt = f"from app.run{i + 1} import go as inner\n" if i < 299 else "from app.agent import agent\n"
        body = "inner(q)" if i < 299 else "agent.run(q)"
        files[f"app/run{i}.py"] = f"{nxt}\n\ndef go(q):\n    return {body}\n"
    files["app/routes.py"] = ROUTE.format(
        imports="from app.a import agent as cyclic\nfrom app.chain0 import agent\nfrom app.run0 import go\n"
        "from app.broken import agent as broken\nfrom app.deep import agent as deep\nfrom app.agent import agent as direct",
        body="[cyclic.run(question), agent.run(question), go(question), broken.run(question), direct.run(question)]",
    )
    _write(tmp_path, files)
    (tmp_path / "app" / "binary.py").write_bytes(b"\x00\xff\xfe import app.agent\n")
    proc = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    report = json.loads(proc.stdout)
    found = [(Path(d["filename"]).name, d["message"].split("`")[1]) for d in report if d["code"] >= "DUP1"]
    assert found == [("routes.py", "direct")]
    # the files that could not be checked are in the report too (DUP000/DUP001: docs/ci.md)
    not_checked = {(Path(d["filename"]).name, d["code"]) for d in report if d["code"] < "DUP1"}
    assert not_checked == {("broken.py", "DUP001"), ("binary.py", "DUP000"), ("deep.py", "DUP000")}
    errors = proc.stderr.decode()
    assert "app/broken.py: syntax error" in errors and "app/binary.py: cannot decode" in errors
    assert "app/deep.py: too deeply nested to parse" in errors


# ----------------------------------------------------------------------------- per-request callers elsewhere

AGENT_MODULE = """\
from langchain.agents import AgentExecutor
from langchain.memory import ConversationBufferMemory

memory = ConversationBufferMemory(memory_key="history")


def answer(question):
    executor = AgentExecutor(agent=None, tools=[], memory=memory)
    return executor.run(question)
"""


def test_route_in_another_module_calls_a_function_that_writes_a_shared_memory(tmp_path: Path) -> None:
    """NeoFacturing/backend@174cfd9bc40a1f0058109a029c15a15f95626522: the route of app/main.py
    calls a function of app/core/chat.py that runs the shared agent; that module has no route of
    its own, so only the index can tell it that ``answer`` runs per request. Here the module is
    reached with ``import app.brain as brain; brain.answer(...)`` and is reported where its
    memory is bound, naming the route's call."""
    found = _lint(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/brain.py": AGENT_MODULE,
            "app/routes.py": ROUTE.format(imports="import app.brain as brain", body="brain.answer(question)"),
        },
    )
    assert ("app/brain.py", 4, "DUP102") in _codes(found)
    message = next(m for f, row, _, m in found if f == "app/brain.py")
    assert "used in `answer` (line 8), which is called per request by `chat` at app/routes.py:9" in message, message


def test_streamlit_page_calls_a_function_of_an_imported_module(tmp_path: Path) -> None:
    """amitkharche/agents_agentic_ai_rag_langgraph_orchestrator@0f16092825b9caeb1a826a3deb5a289643da0b77:
    streamlit_app/app.py (the page) calls the router, which calls each agents/*.py module's
    executor factory over that module's one memory. Modules a page imports load once per process,
    and the page's module level runs per session: the memory is reported in its own module."""
    page = """\
        import streamlit as st

        from app.brain import answer

        question = st.chat_input("Ask")
        if question:
            st.write(answer(question))
        """
    found = _lint(tmp_path, {"app/__init__.py": "", "app/brain.py": AGENT_MODULE, "page.py": page})
    mine = [(f, row, code, m) for f, row, code, m in found if f == "app/brain.py"]
    assert _codes(mine) == [("app/brain.py", 4, "DUP102")]
    assert "called per request by the Streamlit page at page.py:7" in mine[0][3]


def test_gradio_listener_registered_in_another_module(tmp_path: Path) -> None:
    """jorge-armando-navarro-flores/Simple_Natural_Language_AI_Agent_Calculator@d1e314bcc6ceb3b2f63c1cd5e5de8f14db17ad8d:
    main.py builds the Blocks UI and registers app.py's functions as listeners
    (``msg.submit(app.response, ...)``); app.py invokes the checkpointed graph with one constant
    thread id, which only a listener makes a defect. Registered here by keyword, ``fn=``."""
    app = """\
        from langgraph.checkpoint.memory import MemorySaver
        from langgraph.graph import StateGraph

        graph = StateGraph(dict).compile(checkpointer=MemorySaver())


        def response(message, history):
            return graph.invoke({"q": message}, {"configurable": {"thread_id": "1"}})
        """
    ui = """\
        import gradio as gr

        import app

        with gr.Blocks() as demo:
            box = gr.Textbox()
            out = gr.Textbox()
            box.submit(fn=app.response, inputs=[box, out], outputs=[out])

        demo.launch()
        """
    found = _lint(tmp_path, {"app.py": app, "main.py": ui})
    assert _codes(found) == [("app.py", 8, "DUP103")]
    assert "(`response`)" in found[0][3]


def test_chainlit_handler_reaches_a_function_through_another(tmp_path: Path) -> None:
    """amitkharche/agents_agentic_ai_rag_langgraph_orchestrator@0f16092825b9caeb1a826a3deb5a289643da0b77
    again, one step longer: agents/supervisor.py's ``supervisor_route`` (called by the page)
    calls the executor factory that uses the memory. Here a Chainlit ``@cl.on_message`` hook
    calls ``route`` of app/brain.py, which calls ``answer`` of the same module: the memory is
    reported, and the call that reaches the module is named."""
    brain = AGENT_MODULE + "\n\ndef route(question):\n    return answer(question.strip())\n"
    hook = """\
        import chainlit as cl

        from app.brain import route


        @cl.on_message
        async def on_message(message: cl.Message):
            await cl.Message(content=route(message.content)).send()
        """
    found = _lint(tmp_path, {"app/__init__.py": "", "app/brain.py": brain, "hooks.py": hook})
    assert _codes(found) == [("app/brain.py", 4, "DUP102"), ("hooks.py", 8, "DUP102")]  # and where it is reached
    assert "used in `answer` (line 8)" in found[0][3]


@pytest.mark.parametrize(
    ("caller", "row"),
    [
        ("import gradio as gr\n\nfrom app.brain import answer\n\ngr.ChatInterface(fn=answer).launch()\n", 5),
        (
            (
                "from celery import shared_task\n\nimport app.brain as brain\n\n\n@shared_task\n"
                "def job(question):\n    return brain.answer(question)\n"
            ),
            8,
        ),
        (
            (
                "from fastapi import APIRouter\n\nfrom app import brain\n\nrouter = APIRouter()\n"
                'router.add_api_route("/ask", brain.answer, methods=["POST"])\n'
            ),
            6,
        ),
    ],
    ids=["chat-interface", "celery-task", "add-api-route"],
)
def test_more_hosts_reach_a_function_of_another_module(tmp_path: Path, caller: str, row: int) -> None:
    """Issue 14, class 2 lists these hosts: ``gr.ChatInterface(fn=...)``, a Celery task and a route
    added by reference (``semantic/entrypoints.py``'s tables) run the function they are handed, or
    call, per request or job; each is another module's per-request code for app/brain.py."""
    found = _lint(tmp_path, {"app/__init__.py": "", "app/brain.py": AGENT_MODULE, "caller.py": caller})
    mine = [(f, r, code, m) for f, r, code, m in found if f == "app/brain.py"]
    assert _codes(mine) == [("app/brain.py", 4, "DUP102")], found
    assert f"at caller.py:{row}" in mine[0][3]


def test_calls_at_import_time_or_under_main_are_not_per_request(tmp_path: Path) -> None:
    """The counterpart of the NeoFacturing case: a script that calls the function once when it is
    imported and once under ``if __name__ == "__main__":`` (a command-line entry, as the labelled
    repositories' CLI scripts do) runs it once per process, not per request; nothing is reported."""
    script = """\
        from fastapi import FastAPI

        from app.brain import answer

        api = FastAPI()
        WARMUP = answer("hello")

        if __name__ == "__main__":
            print(answer("once"))
        """
    found = _lint(tmp_path, {"app/__init__.py": "", "app/brain.py": AGENT_MODULE, "script.py": script})
    assert found == []


def _caller_project(root: Path, *, calls: bool) -> None:
    body = "brain.answer(question)" if calls else "question.upper()"
    _write(
        root,
        {
            "app/__init__.py": "",
            "app/brain.py": AGENT_MODULE,
            "app/routes.py": ROUTE.format(imports="import app.brain as brain", body=body),
        },
    )


def test_cache_follows_the_caller_in_another_module(tmp_path: Path) -> None:
    """app/brain.py's finding depends on app/routes.py's bytes: when the route stops calling
    ``answer``, the warm cache must not replay brain.py's finding (its entry is keyed by the
    facts it consumed, which name the caller), and it comes back when the call does."""
    _caller_project(tmp_path, calls=True)
    first = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert [(Path(d["filename"]).name, d["code"]) for d in json.loads(first.stdout)] == [
        ("brain.py", "DUP102"),
        ("routes.py", "DUP102"),
    ], first.stdout
    _caller_project(tmp_path, calls=False)
    second = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert json.loads(second.stdout) == [], second.stdout
    _caller_project(tmp_path, calls=True)
    third = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert json.loads(third.stdout) == json.loads(first.stdout)
    assert (tmp_path / ".dupguard_cache").is_dir()


def test_the_index_never_opens_a_fifo_in_the_tree(tmp_path: Path) -> None:
    """A FIFO named like a module sits next to agent code: pass 1 reads every module of the
    tree, and opening a FIFO for reading blocks until a writer comes, so the run hung (found
    when the per-request callers of another module made every agent file build the index).
    It is skipped unopened and reported as not processed, like any other non-regular file."""
    import os

    _write(
        tmp_path,
        {
            "app/agent.py": LANGCHAIN_AGENT,
            "app/routes.py": ROUTE.format(imports="from .agent import agent", body="agent.invoke(question)"),
        },
    )
    os.mkfifo(tmp_path / "app" / "pipe.py")
    proc = run_cli("check", "--no-cache", "--isolated", "app/agent.py", "app/routes.py", "app/pipe.py", cwd=tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "app/routes.py" in out and "DUP000" in out and "not a regular file" in out


# ----------------------------------------------------------------------------- scripts' own directories


FLASK_SCRIPT = """\
from flask import Flask, request

from {module} import answer

app = Flask(__name__)


@app.route("/ask", methods=["POST"])
def ask():
    return answer(request.json["q"])
"""


def test_script_imports_its_sibling_in_a_nested_subproject(tmp_path: Path) -> None:
    """gsbadhan/gen-ai-examples@639f19cde62576cd9279346d0b75e1fea1d638e5: an examples monorepo
    whose every folder (``crew-ai/agent-example-002/``) is a project of its own, run as
    ``python src/app.py``; src/app.py imports ``from agentflow import ...``, its sibling, which no
    import root of the repository reaches (a hyphen in the path). The sibling's memory is
    reported; a second sub-project whose module of the same name builds its memory per call is
    not (each directory's modules are its own, not one module named ``agentflow``)."""
    per_call = AGENT_MODULE.replace('memory = ConversationBufferMemory(memory_key="history")\n', "").replace(
        "    executor = ", '    memory = ConversationBufferMemory(memory_key="history")\n    executor = '
    )
    found = _lint(
        tmp_path,
        {
            "demos/example-one/src/agentflow.py": AGENT_MODULE,
            "demos/example-one/src/app.py": FLASK_SCRIPT.format(module="agentflow"),
            "demos/example-two/src/agentflow.py": per_call,
            "demos/example-two/src/app.py": FLASK_SCRIPT.format(module="agentflow"),
        },
    )
    # the memory where it is bound, and the route's call that reaches it (as for a package import)
    assert _codes(found) == [
        ("demos/example-one/src/agentflow.py", 4, "DUP102"),
        ("demos/example-one/src/app.py", 10, "DUP102"),
    ]
    assert "called per request by `ask` at demos/example-one/src/app.py:10" in found[0][3]


def test_script_imports_a_sibling_package_module(tmp_path: Path) -> None:
    """bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667: a Hugging Face space in
    ``hugging-face/openai-assistants/`` whose app.py imports its neighbour by a top-level name; here
    the neighbour is a package of the script's directory (``from brains.core import answer``), and
    the script directory is inside an importable package too (``examples/``, the root's module
    space): Python still resolves the name against the script's own directory."""
    found = _lint(
        tmp_path,
        {
            "examples/__init__.py": "",
            "examples/space/brains/__init__.py": "",
            "examples/space/brains/core.py": AGENT_MODULE,
            "examples/space/app.py": FLASK_SCRIPT.format(module="brains.core"),
        },
    )
    assert _codes(found) == [("examples/space/app.py", 10, "DUP102"), ("examples/space/brains/core.py", 4, "DUP102")]


def test_subproject_with_its_own_src_layout(tmp_path: Path) -> None:
    """hubenschmidt/openai-agents-sdk-react@1bcf69fceb7395e5190ae3ba0768fa12da3b8072: the service in
    ``modules/agent/`` has its own ``src/`` layout, and ``src/agent/orchestrator.py`` imports
    ``agent.workers``: the package in the directory above it, which only that sub-project's
    ``src/`` puts on the path. Here the sub-project's directory has a hyphen (no module name from
    the repository's roots) and the route imports the module that holds the shared memory."""
    found = _lint(
        tmp_path,
        {
            "services/bot-api/pyproject.toml": "[project]\nname = 'bot'\n",
            "services/bot-api/src/bot/__init__.py": "",
            "services/bot-api/src/bot/brain.py": AGENT_MODULE,
            "services/bot-api/src/bot/routes.py": FLASK_SCRIPT.format(module="bot.brain"),
        },
    )
    assert ("services/bot-api/src/bot/brain.py", 4, "DUP102") in _codes(found)


def test_the_import_roots_win_over_a_scripts_directory(tmp_path: Path) -> None:
    """Issue 14 ("the import roots from config"): when a root holds the name a script imports,
    the root's module is meant (an application run as a package), not a same-named file beside it."""
    found = _lint(
        tmp_path,
        {
            "brain.py": AGENT_MODULE,
            "web/brain.py": AGENT_MODULE.replace("memory = Conv", "def unused():\n    pass\n\n\nmemory = Conv"),
            "web/app.py": FLASK_SCRIPT.format(module="brain"),
        },
    )
    assert _codes(found) == [("brain.py", 4, "DUP102"), ("web/app.py", 10, "DUP102")]
    assert "brain.py:4" in found[1][3]


# ----------------------------------------------------------------------------- CrewAI members


CREW_RUNNER = """\
from crewai import Crew, Task

from agents.planner import planner


def run_crew(request: str):
    plan = Task(description=request, expected_output="a plan", agent=planner)
    crew = Crew(agents=[planner], tasks=[plan])
    return crew.kickoff()
"""


def test_agent_of_another_module_run_by_per_request_crews(tmp_path: Path) -> None:
    """Midhun-12345678/Multi-Agentic-AI-System@135ff0e3978d64a0858c88dc514abaf3b22d68be: each
    agents/*.py binds one CrewAI ``Agent``; crew.py's ``run_crew`` puts them into a new ``Task``
    and ``Crew`` per call, and main.py's route calls it. A crew's run re-targets each member
    agent's one executor (catalog ``member_of``), so the agent is reported where it is built."""
    found = _lint(
        tmp_path,
        {
            "agents/__init__.py": "",
            "agents/planner.py": 'from crewai import Agent\n\nplanner = Agent(role="r", goal="g", backstory="b")\n',
            "crew.py": CREW_RUNNER,
            "main.py": ROUTE.format(imports="from crew import run_crew", body="run_crew(question)"),
        },
    )
    assert _codes(found) == [("agents/planner.py", 3, "DUP101")]
    assert "run per request by `run_crew` at crew.py:" in found[0][3]


def test_agent_of_another_module_run_alone_is_not_shared_state(tmp_path: Path) -> None:
    """The counterpart: ``planner.kickoff(...)`` on its own builds a fresh executor per call
    (crewai ``Agent._prepare_kickoff``); with no crew around it nothing is reported."""
    runner = (
        "from agents.planner import planner\n\n\ndef run_crew(request: str):\n    return planner.kickoff(request)\n"
    )
    found = _lint(
        tmp_path,
        {
            "agents/__init__.py": "",
            "agents/planner.py": 'from crewai import Agent\n\nplanner = Agent(role="r", goal="g", backstory="b")\n',
            "crew.py": runner,
            "main.py": ROUTE.format(imports="from crew import run_crew", body="run_crew(question)"),
        },
    )
    assert _codes(found) == []
