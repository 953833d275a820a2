"""One minimal application per host: the shared-state finding it must get, or the silence.

What each host shares and runs at once is data (``dupguard.semantic.hosts.HOSTS``, with the
source read for it; ``entrypoints.py`` says which functions become handlers). Every module
below runs one Strands ``Agent`` (it keeps ``messages`` between calls: catalog_data.py) from
the host's entry point, so the only thing that changes the answer is the host.

Script mode regenerates the "Hosts" table of docs/catalog.md::

    python tests/test_hosts.py --write-docs
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from dupguard.config import Settings
from dupguard.semantic.hosts import HOSTS
from linthelpers import lint_codes


def _model(source: str):
    import libcst as cst

    from dupguard.semantic.builder import build_model
    from dupguard.semantic.catalog_loader import catalog_for

    return build_model(cst.parse_module(source), catalog_for(Settings()), Settings())


_codes = lint_codes


# ------------------------------------------------------------------------------ Streamlit


def test_streamlit_cache_resource_used_from_main_under_dunder_main_is_shared() -> None:
    """Streamlit runs the page as ``__main__`` on every interaction of every session, so
    ``main()`` is page code; the cached agent is one object for all of them."""
    source = """\
        import streamlit as st
        from strands import Agent


        @st.cache_resource
        def load_agent():
            return Agent(system_prompt="You answer questions about invoices.")


        def main():
            agent = load_agent()
            question = st.chat_input("Your question")
            if question:
                st.markdown(str(agent(question)))


        if __name__ == "__main__":
            main()
        """
    assert _codes(source) == [(7, "DUP101")]


def test_streamlit_cache_resource_nested_in_a_closure_is_one_cache() -> None:
    """The cache key is the function's module, qualified name and source: a cached function
    defined inside the page function is the same cache on every run."""
    source = """\
        import streamlit as st
        from strands import Agent


        def page():
            @st.cache_resource
            def shared_agent():
                return Agent(system_prompt="Support bot")

            prompt = st.chat_input("Ask")
            if prompt:
                st.write(str(shared_agent()(prompt)))


        page()
        """
    assert _codes(source) == [(8, "DUP101")]


def test_streamlit_page_module_level_agent_and_session_scoped_cache_are_per_session() -> None:
    source = """\
        import streamlit as st
        from strands import Agent

        agent = Agent(system_prompt="rebuilt on every run of this page")


        @st.cache_resource(scope="session")
        def my_agent():
            return Agent(system_prompt="one per browser session")


        prompt = st.chat_input("Ask")
        if prompt:
            st.write(str(agent(prompt)))
            st.write(str(my_agent()(prompt)))
        """
    assert _codes(source) == []


def test_streamlit_helper_module_is_imported_once_per_process() -> None:
    """A module that imports streamlit but renders nothing is imported by pages once per
    process: its module-level agent is shared by every session that calls into it."""
    source = """\
        import streamlit as st
        from strands import Agent

        assistant = Agent(system_prompt="shared by every page and session")


        @st.cache_resource
        def connection():
            return make_connection()


        def answer(question: str) -> str:
            return str(assistant(question))


        def render():
            q = st.chat_input("Ask")
            if q:
                st.write(answer(q))
        """
    # the uses are in functions a page calls (cross-module): the object itself counts as shared
    from dupguard.semantic.hosts import reruns_per_session, streamlit_page
    from dupguard.semantic.shared import shared_objects

    model = _model(textwrap.dedent(source))
    assert not streamlit_page(model) and not reruns_per_session(model)
    assert [s.label for s in shared_objects(model)] == ["assistant"]


# ------------------------------------------------------------------------------ Gradio


def test_gradio_chat_interface_function_is_a_request_handler() -> None:
    source = """\
        import gradio as gr
        from strands import Agent

        agent = Agent(system_prompt="Travel helper")


        def reply(message, history):
            return str(agent(message))


        demo = gr.ChatInterface(fn=reply)
        demo.launch()
        """
    assert _codes(source) == [(4, "DUP101")]


def test_gradio_handler_runs_a_global_agent_built_by_a_setup_function() -> None:
    """juliensimon/smolagents-mcp-demo client/multi_agent_client/client.py:178 (f49090f): the
    manager agent is assigned to a module global by a setup function (``global manager``) and
    run by the function two listeners register."""
    source = """\
        import gradio as gr
        from smolagents import ToolCallingAgent

        manager = None


        def setup():
            global manager
            manager = ToolCallingAgent(tools=TOOLS, model=MODEL)


        def respond(message, history):
            return str(manager.run(message))


        with gr.Blocks() as demo:
            box = gr.Textbox()
            send = gr.Button()
            box.submit(respond, [box, history], [history])
            send.click(respond, [box, history], [history])
        setup()
        """
    assert _codes(source) == [(9, "DUP101")]


def test_gradio_submit_and_click_are_event_registrations_not_executor_submits() -> None:
    """``box.submit(respond, [box, chat], [chat])`` registers an event (positional inputs and
    outputs, as most Blocks apps write it): the history it returns is the visitor's own."""
    source = """\
        import gradio as gr
        from openai import OpenAI

        client = OpenAI()


        def respond(message, chat_history):
            chat_history.append({"role": "user", "content": message})
            answer = client.chat.completions.create(model="gpt-4o-mini", messages=chat_history)
            chat_history.append({"role": "assistant", "content": answer.choices[0].message.content})
            return "", chat_history


        with gr.Blocks() as demo:
            chat = gr.Chatbot(type="messages")
            box = gr.Textbox()
            send = gr.Button("Send")
            box.submit(respond, [box, chat], [box, chat])
            send.click(respond, [box, chat], [box, chat])
        """
    assert _codes(source) == []


# ------------------------------------------------------------------------------ Chainlit


def test_chainlit_on_message_shares_module_state_and_user_session_does_not() -> None:
    source = """\
        import chainlit as cl
        from strands import Agent

        agent = Agent(system_prompt="one conversation for every chat")


        @cl.on_chat_start
        async def start():
            cl.user_session.set("agent", Agent(system_prompt="this chat's own"))


        @cl.on_message
        async def on_message(message: cl.Message):
            mine = cl.user_session.get("agent")
            await cl.Message(content=str(mine(message.content))).send()
            await cl.Message(content=str(agent(message.content))).send()


        @cl.on_chat_resume
        async def resume(thread):
            agent("resume " + thread["id"])
        """
    assert _codes(source) == [(4, "DUP101")]


def test_chainlit_on_app_startup_runs_once() -> None:
    source = """\
        import chainlit as cl
        from strands import Agent

        agent = Agent(system_prompt="warm-up only")


        @cl.on_app_startup
        def warm_up():
            agent("ping")
        """
    assert _codes(source) == []


# ------------------------------------------------------------------------------ Panel


def test_panel_servable_script_is_run_per_session() -> None:
    source = """\
        import panel as pn
        from strands import Agent

        agent = Agent(system_prompt="built again for every session by panel serve")


        def callback(contents, user, instance):
            return str(agent(contents))


        pn.chat.ChatInterface(callback=callback).servable()
        """
    assert _codes(source) == []


def test_panel_cache_is_shared_by_every_session() -> None:
    source = """\
        import panel as pn
        from strands import Agent


        @pn.cache
        def get_agent():
            return Agent(system_prompt="one for the process")


        def callback(contents, user, instance):
            return str(get_agent()(contents))


        pn.chat.ChatInterface(callback=callback).servable()
        """
    assert _codes(source) == [(7, "DUP101")]


# ------------------------------------------------------------------------------ AWS Lambda


def test_lambda_module_level_agent_outlives_the_invocation() -> None:
    source = """\
        from strands import Agent

        agent = Agent(system_prompt="kept warm between invocations")


        def lambda_handler(event, context):
            return {"body": str(agent(event["prompt"]))}
        """
    assert _codes(source) == [(3, "DUP101")]


# ------------------------------------------------------------------------------ Bedrock AgentCore


def test_agentcore_entrypoint_module_state_is_per_session() -> None:
    """Each runtime session has its own microVM: the module's agent is that session's
    conversation (bench/real-apps/labels-b.toml, damonf/agentcore-tutorials near-misses)."""
    source = """\
        from bedrock_agentcore.runtime import BedrockAgentCoreApp
        from strands import Agent

        app = BedrockAgentCoreApp()
        agent = Agent(system_prompt="this session's agent")


        @app.entrypoint
        def invoke(payload):
            return {"result": str(agent(payload["prompt"]))}


        if __name__ == "__main__":
            app.run()
        """
    assert _codes(source) == []


def test_agentcore_custom_container_contract_gets_the_same_answer() -> None:
    """The same host spelled as a FastAPI container serving ``POST /invocations`` and
    ``GET /ping`` (damonf/agentcore-tutorials custom-agent/agent.py at 716b873, reported as
    DUP101 by the baseline while the ``@app.entrypoint`` spelling was not)."""
    source = """\
        from fastapi import FastAPI
        from strands import Agent

        app = FastAPI()
        agent = Agent(system_prompt="this session's agent")


        @app.post("/invocations")
        async def invocations(body: dict):
            return {"output": str(agent(body["input"]["prompt"]))}


        @app.get("/ping")
        async def ping():
            return {"status": "Healthy"}
        """
    assert _codes(source) == []
    # without the runtime contract it is an ordinary shared server
    assert _codes(source.replace('"/invocations"', '"/chat"')) == [(5, "DUP101")]


# ------------------------------------------------------------------------------ Azure Functions


def test_azure_functions_route_and_queue_trigger() -> None:
    source = """\
        import azure.functions as func
        from strands import Agent

        app = func.FunctionApp()
        agent = Agent(system_prompt="one per worker process")


        @app.route(route="chat", methods=["POST"])
        def chat(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse(str(agent(req.get_json()["prompt"])))


        @app.queue_trigger(arg_name="msg", queue_name="tickets", connection="Storage")
        def ticket(msg: func.QueueMessage) -> None:
            agent(msg.get_body().decode())
        """
    assert _codes(source) == [(5, "DUP101")]
    model = _model(textwrap.dedent(source))
    contexts = {fn.name: fn.contexts for fn in model.functions}
    assert contexts == {"chat": {"handler"}, "ticket": {"worker"}}


def test_azure_functions_v1_main_with_an_http_request() -> None:
    source = """\
        import azure.functions as func
        from strands import Agent

        agent = Agent(system_prompt="v1 programming model")


        def main(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse(str(agent(req.params.get("q"))))
        """
    assert _codes(source) == [(4, "DUP101")]


# ------------------------------------------------------------------------------ Django, Channels


def test_django_view_shares_module_state() -> None:
    source = """\
        from django.http import JsonResponse
        from strands import Agent

        agent = Agent(system_prompt="per worker process")


        def ask(request):
            return JsonResponse({"answer": str(agent(request.POST["q"]))})
        """
    assert _codes(source) == [(4, "DUP101")]


def test_channels_consumer_instance_is_per_connection() -> None:
    """A consumer instance per connection: ``self.agent`` made in ``connect`` is this
    connection's; the module-level one is every connection's, whatever method runs it."""
    source = """\
        from channels.generic.websocket import AsyncJsonWebsocketConsumer
        from strands import Agent

        shared = Agent(system_prompt="every connection")


        class ChatConsumer(AsyncJsonWebsocketConsumer):
            async def connect(self):
                self.agent = Agent(system_prompt="this connection")
                await self.accept()

            async def receive_json(self, content):
                await self.send_json({"mine": str(self.agent(content["q"]))})

            async def chat_message(self, event):
                await self.send_json({"shared": str(shared(event["text"]))})
        """
    assert _codes(source) == [(4, "DUP101")]


# ------------------------------------------------------------------------------ task queues


def test_celery_task_reuses_the_worker_process_agent() -> None:
    source = """\
        from celery import Celery
        from strands import Agent

        app = Celery("jobs")
        agent = Agent(system_prompt="kept by the worker process")


        @app.task
        def summarise(text):
            return str(agent(text))
        """
    assert _codes(source) == [(5, "DUP101")]


def test_rq_job_runs_in_a_forked_work_horse() -> None:
    source = """\
        from redis import Redis
        from rq import Queue
        from strands import Agent

        agent = Agent(system_prompt="imported fresh by each work horse")


        def summarise(text):
            return str(agent(text))


        def submit(text):
            Queue(connection=Redis()).enqueue(summarise, text)
        """
    assert _codes(source) == []
    # SimpleWorker runs every job in the worker process: the agent is kept between jobs
    in_process = textwrap.dedent(source) + "\n\nworker = SimpleWorker([Queue(connection=Redis())])\n"
    in_process = in_process.replace("from rq import Queue", "from rq import Queue, SimpleWorker")
    assert _codes(in_process) == [(5, "DUP101")]


def test_dramatiq_actor_threads_share_the_agent() -> None:
    source = """\
        import dramatiq
        from strands import Agent

        agent = Agent(system_prompt="8 worker threads use it")


        @dramatiq.actor
        def summarise(text):
            agent(text)
        """
    # DUP504 is the redelivery of the same message (Dramatiq's Retries middleware), apart
    assert _codes(source) == [(4, "DUP101"), (7, "DUP504")]


def test_arq_functions_registered_with_func_run_concurrently() -> None:
    source = """\
        from arq import func
        from strands import Agent

        agent = Agent(system_prompt="max_jobs at once")


        async def summarise(ctx, text):
            return str(agent(text))


        class WorkerSettings:
            functions = [func(summarise, timeout=60)]
        """
    assert _codes(source) == [(4, "DUP101")]


# ------------------------------------------------------------------------------ servers


def test_websockets_serve_handler_runs_per_connection() -> None:
    source = """\
        import asyncio

        import websockets
        from strands import Agent

        agent = Agent(system_prompt="every connection")


        async def handler(ws):
            async for message in ws:
                await ws.send(str(agent(message)))


        async def main():
            async with websockets.serve(handler, "0.0.0.0", 8765):
                await asyncio.Future()
        """
    assert _codes(source) == [(6, "DUP101")]


def test_mcp_tool_runs_for_every_client() -> None:
    source = """\
        from mcp.server.fastmcp import FastMCP
        from strands import Agent

        mcp = FastMCP("research")
        agent = Agent(system_prompt="one for every MCP client")


        @mcp.tool()
        def research(question: str) -> str:
            return str(agent(question))
        """
    assert _codes(source) == [(5, "DUP101")]


def test_low_level_mcp_server_call_tool() -> None:
    source = """\
        from mcp.server.lowlevel import Server
        from strands import Agent

        server = Server("research")
        agent = Agent(system_prompt="one for every MCP client")


        @server.call_tool()
        async def call_tool(name, arguments):
            return [str(agent(arguments["q"]))]
        """
    assert _codes(source) == [(5, "DUP101")]


def test_a2a_executor_runs_one_agent_for_every_task() -> None:
    source = """\
        from a2a.server.agent_execution import AgentExecutor
        from strands import Agent

        agent = Agent(system_prompt="every A2A client")


        class Executor(AgentExecutor):
            async def execute(self, context, event_queue):
                await event_queue.enqueue_event(str(agent(context.get_user_input())))

            async def cancel(self, context, event_queue):
                raise NotImplementedError
        """
    assert _codes(source) == [(4, "DUP101")]


# ------------------------------------------------------------------------------ the record


def test_every_host_cites_a_version_and_a_source() -> None:
    names = [h.name for h in HOSTS]
    assert len(names) == len(set(names))
    for host in HOSTS:
        assert host.modules and host.version and host.source and host.dupguard, host.name


DOCS = Path(__file__).resolve().parents[1] / "docs" / "catalog.md"
_START, _END = "<!-- host-tables:start -->", "<!-- host-tables:end -->"


def render_hosts() -> str:
    out = [
        (
            "| host | entry points | shared by every request | per request / session | at the same time | "
            "dupguard | version | source |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for h in HOSTS:
        cells = (h.entry, h.shared, h.per_request, h.concurrency, h.dupguard, h.version, h.source)
        out.append(f"| {h.name} | " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(out)


def test_docs_host_table_matches_the_data() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(_START) + len(_START), text.index(_END)
    assert text[start:end].strip("\n") == render_hosts()


@pytest.mark.parametrize("host", HOSTS, ids=[h.name for h in HOSTS])
def test_host_modules_are_import_roots(host) -> None:
    assert all(m and " " not in m for m in host.modules)


if __name__ == "__main__" and "--write-docs" in sys.argv:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(_START) + len(_START), text.index(_END)
    DOCS.write_text(text[:start] + "\n" + render_hosts() + "\n" + text[end:], encoding="utf-8")
