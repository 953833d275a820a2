"""Agent-serving hosts as request handlers: Gradio event listeners, MCP tools and A2A executors.

The facts are data in ``dupguard.semantic.entrypoints`` (sources cited there and in
bench/real-apps/hosts-notes.md); these tests pin what each row makes of real code shapes, and
that files importing only such a host reach the rules at all.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dupguard.config import Settings
from dupguard.prefilter import might_matter
from dupguard.semantic.builder import build_model
from dupguard.semantic.catalog_loader import catalog_for


def _contexts(source: str) -> dict[str, set[str]]:
    model = build_model(cst.parse_module(textwrap.dedent(source)), catalog_for(Settings()), Settings())
    return {fn.qualname: fn.contexts | fn.reached_from for fn in model.functions}


def test_gradio_event_listeners_register_handlers() -> None:
    found = _contexts(
        """
        import gradio as gr

        def analyse(url):
            return url

        def reply(message, history):
            return answer(message)

        def answer(message):
            return message

        def unused(x):
            return x

        with gr.Blocks() as demo:
            button = gr.Button("Analyse")
            button.click(analyse, inputs=[], outputs=[])
            box = gr.Textbox()
            box.submit(fn=reply)
        """
    )
    assert found["analyse"] == {"handler"}
    assert found["reply"] == {"handler"}
    assert found["answer"] == {"handler"}  # reached from a handler
    assert found["unused"] == set()


def test_listener_names_count_only_in_files_that_import_gradio() -> None:
    found = _contexts(
        """
        from openai import OpenAI

        def on_press(event):
            return event

        widget.click(on_press)
        """
    )
    assert found["on_press"] == set()


@pytest.mark.parametrize(
    "server",
    [
        "from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('tools')",
        "from fastmcp import FastMCP\nmcp = FastMCP('tools')",
        "from mcp.server.mcpserver import MCPServer\nmcp = MCPServer('tools')",
    ],
)
def test_mcp_tools_resources_and_prompts_are_handlers(server: str) -> None:
    found = _contexts(
        server
        + textwrap.dedent(
            """

            @mcp.tool()
            async def search(query: str) -> str:
                return query

            @mcp.resource("notes://{name}")
            def note(name: str) -> str:
                return name

            @mcp.prompt()
            def greet() -> str:
                return "hi"

            def helper() -> None:
                pass
            """
        )
    )
    assert found["search"] == {"handler"}
    assert found["note"] == {"handler"}
    assert found["greet"] == {"handler"}
    assert found["helper"] == set()


def test_a2a_executor_execute_is_a_handler() -> None:
    found = _contexts(
        """
        from a2a.server.agent_execution import AgentExecutor

        class Executor(AgentExecutor):
            async def execute(self, context, event_queue):
                await self.work(context)

            async def work(self, context):
                pass

            async def cancel(self, context, event_queue):
                pass
        """
    )
    assert found["Executor.execute"] == {"handler"}
    assert found["Executor.work"] == {"handler"}
    assert found["Executor.cancel"] == set()


@pytest.mark.parametrize(
    "source",
    [
        "import gradio as gr\n",
        "from mcp.server.fastmcp import FastMCP\n",
        "from fastmcp import FastMCP\n",
        "from a2a.server.agent_execution import AgentExecutor\n",
    ],
)
def test_a_file_that_imports_only_a_host_reaches_the_rules(source: str) -> None:
    assert might_matter(source)


def test_a_file_without_a_framework_or_host_is_still_skipped() -> None:
    assert not might_matter("import json\nimport mcpx\n\ndef f():\n    return json.dumps({})\n")


def test_a_module_level_agent_run_by_an_mcp_tool_is_shared_by_every_client() -> None:
    """An MCP server is one process for every client (hosts-notes.md): its module-level
    stateful agent is DUP101, as in a web app."""
    from dupguard.pipeline import lint_text

    source = textwrap.dedent(
        """
        from mcp.server.fastmcp import FastMCP
        from strands import Agent

        mcp = FastMCP("research")
        researcher = Agent(system_prompt="Research.")

        @mcp.tool()
        async def research(question: str) -> str:
            return str(await researcher.invoke_async(question))
        """
    )
    found = lint_text("server.py", source, Settings(), frozenset({"DUP101"}))
    assert [(d.row, d.code) for d in found] == [(6, "DUP101")]
