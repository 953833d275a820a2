"""Classes of misses and false positives seen on the real-application set (bench/real-apps.md),
one test each, with the counterpart that must still be reported so that no case passes by going
blind. Each module is written for the test in the shape the cited application had (repository,
path and commit from bench/real-apps/repos-*.toml); none is copied.
"""

from __future__ import annotations

from pathlib import Path

from linthelpers import lint_codes, run_cli

_codes = lint_codes


# ------------------------------------------------------------------------------ DUP103


GRAPH_ROUTE = """\
    from uuid import uuid4

    from fastapi import FastAPI
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.prebuilt import create_react_agent

    app = FastAPI()
    graph = create_react_agent("openai:gpt-4o-mini", tools=[], checkpointer=MemorySaver())
    NAME = "helper"


    @app.post("/chat")
    async def chat(text: str):
        key = (
            f"{{NAME}}"
            {second}
        )
        return await graph.ainvoke({{"messages": [("user", text)]}}, {{"configurable": {{"thread_id": key}}}})
    """


def test_adjacent_fstrings_with_a_call_are_a_key_per_request() -> None:
    """eshulman2/MeetingActions src/shared/base/base_agent_server.py (0f6d98f): the session id is
    two adjacent f-strings, the second holding ``uuid4()``; Python joins them into one f-string, a
    new id per call. Adjacent strings were read as one literal."""
    assert _codes(GRAPH_ROUTE.format(second='f"-chat-{uuid4()}"')) == []


def test_adjacent_fstrings_with_only_constants_are_still_constant() -> None:
    """The counterpart: the same key made only of a module constant and text is one thread for
    every request (issue 14, class 3: "an f-string with no per-request part")."""
    assert _codes(GRAPH_ROUTE.format(second='"-chat"')) == [(18, "DUP103")]


STRANDS_ROUTE = """\
    from fastapi import FastAPI
    from strands import Agent

    app = FastAPI()


    @app.post("/v1/chat/completions")
    async def completions(body: dict):
        agent = Agent(system_prompt="Answer briefly.")
        return {{"text": str({run})}}
    """


def test_strands_run_keyword_named_session_id_is_no_conversation_key() -> None:
    """klogins-hash/strands-agent-api main.py (f3815fb): ``agent(prompt, session_id="openai-compat")``.
    Strands 1.62 ``Agent.__call__``/``invoke_async``/``stream_async`` put unknown keywords into that
    call's invocation_state; the conversation is the agent's own ``messages`` (catalog
    ``unkeyed_run_kwargs``, strands/agent/agent.py)."""
    assert _codes(STRANDS_ROUTE.format(run='agent(body["q"], session_id="openai-compat")')) == []
    assert _codes(STRANDS_ROUTE.format(run='await agent.invoke_async(body["q"], session_id="web")')) == []


def test_a_session_manager_keyed_by_a_constant_is_still_reported() -> None:
    """The counterpart: Strands' ``FileSessionManager(session_id=...)`` is keyed by its session id
    (strands/session/file_session_manager.py); a constant one, built per request, is one stored
    conversation for everyone."""
    source = """\
        from fastapi import FastAPI
        from strands import Agent
        from strands.session import FileSessionManager

        app = FastAPI()


        @app.post("/chat")
        async def chat(body: dict):
            manager = FileSessionManager(session_id="openai-compat", storage_dir="/tmp/sessions")
            agent = Agent(session_manager=manager)
            return str(agent(body["q"]))
        """
    assert _codes(source) == [(10, "DUP103")]


# ------------------------------------------------------------------------------ DUP101, CrewAI


def test_module_level_crewai_agents_and_tasks_in_a_crew_built_per_request() -> None:
    """gsbadhan/gen-ai-examples crew-ai/agent-example-002/src/agentflow.py (639f19c): agents and
    tasks bound at module level, a ``Crew`` over them built and kicked off for every request. The
    crew re-targets each agent's one executor (crewai agent/core.py ``create_agent_executor``) and
    writes each task's output and description (crewai/task.py): every module-level member is
    shared run state (catalog ``member_of``)."""
    source = """\
        from crewai import Agent, Crew, Task
        from flask import Flask, request

        app = Flask(__name__)
        researcher = Agent(role="r", goal="g", backstory="b")
        research = Task(description="Research {topic}", expected_output="notes", agent=researcher)


        @app.route("/research", methods=["POST"])
        def run():
            crew = Crew(agents=[researcher], tasks=[research])
            return str(crew.kickoff(inputs={"topic": request.json["topic"]}))
        """
    assert _codes(source) == [(5, "DUP101"), (6, "DUP101")]


def test_crewai_agent_kicked_off_alone_per_request_is_not_reported() -> None:
    """The counterpart: ``Agent.kickoff()`` builds a fresh executor per call (crewai agent/core.py
    ``_prepare_kickoff``): a module-level agent run alone keeps nothing between requests."""
    source = """\
        from crewai import Agent
        from flask import Flask, request

        app = Flask(__name__)
        researcher = Agent(role="r", goal="g", backstory="b")


        @app.route("/research", methods=["POST"])
        def run():
            return str(researcher.kickoff(request.json["topic"]))
        """
    assert _codes(source) == []


# ------------------------------------------------------------------------------ test-module policy


_EMAIL_CREW = """\
import requests
from crewai import Agent, Crew, Task
from crewai.tools import tool


@tool("Send email")
def send_email(to: str, body: str) -> str:
    \"\"\"Send an email.\"\"\"
    return requests.post("https://mail.example.com/send", json={"to": to, "body": body}, timeout=10).text


mailer = Agent(role="mailer", goal="send the report", backstory="b", tools=[send_email])
job = Task(description="Mail the report to {to}", expected_output="sent", agent=mailer)
print(Crew(agents=[mailer], tasks=[job]).kickoff(inputs={"to": "someone@example.com"}))
"""


def test_a_script_named_like_a_test_is_linted(tmp_path: Path) -> None:
    """janduplessis883/crewai-research crewai_r/send_email_singe_agent_test.py (949ab9c): a script
    that kicks off a crew sending an email, named ``*_test.py`` but holding no test and importing
    no test framework. Only a test module is left out; this one is linted (DUP507: CrewAI's
    default agent retries re-send the email)."""
    (tmp_path / "pyproject.toml").write_text("[tool.dupguard]\n")
    (tmp_path / "send_report_test.py").write_text(_EMAIL_CREW)
    (tmp_path / "test_send_report.py").write_text(_EMAIL_CREW + "\n\ndef test_sends():\n    assert True\n")
    proc = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    reported = {line.split(":")[0] for line in proc.stdout.decode().splitlines() if ": DUP" in line}
    # the real test module (a test function) stays out
    assert reported == {"send_report_test.py"}, (proc.stdout + proc.stderr).decode()


# ------------------------------------------------------------------------------ Gradio closures


_BLOCKS_BUILDER = """\
    import gradio as gr
    from smolagents import InferenceClientModel, ToolCallingAgent
    {module_level}

    def build_ui():
        {builder_level}
        with gr.Blocks() as demo:
            box = gr.Textbox()
            out = gr.Textbox()
            send = gr.Button("Send")

            def respond(message):
                {handler_level}
                return str(agent.run(message))

            box.submit(respond, [box], [out])
            send.click(respond, [box], [out])
        return demo


    if __name__ == "__main__":
        build_ui().launch()
    """
_AGENT = "agent = ToolCallingAgent(tools=[], model=InferenceClientModel())"


def test_agent_built_by_a_blocks_builder_and_closed_over_by_its_listeners() -> None:
    """juliensimon/smolagents-mcp-demo client/code_client/client.py (f49090f): the function that
    builds the Blocks UI builds the agent once; the listeners it defines and registers
    (``msg.submit(respond, ...)``, ``submit_btn.click(respond, ...)``: two queues) run it for every
    visitor. Gradio's listeners run per request (hosts.py) even when defined inside the builder,
    and their bodies do not run inside its ``with gr.Blocks()``."""
    found = _codes(_BLOCKS_BUILDER.format(module_level="", builder_level=_AGENT, handler_level="pass"))
    assert found == [(6, "DUP101")]
    # the same agent at module level, used by the nested listeners, is reported too
    found = _codes(_BLOCKS_BUILDER.format(module_level=_AGENT, builder_level="pass", handler_level="pass"))
    assert found == [(3, "DUP101")]


def test_agent_built_by_each_listener_run_is_not_shared() -> None:
    """The counterpart: the listener builds its own agent for every event."""
    assert _codes(_BLOCKS_BUILDER.format(module_level="", builder_level="pass", handler_level=_AGENT)) == []


def test_agent_held_by_a_client_object_the_builder_makes_once() -> None:
    """juliensimon/smolagents-mcp-demo client/code_client/client.py:147, 314, 396 (f49090f): the
    builder makes one ``MultiServerMCPClient`` whose ``setup_agent`` (called by ``__init__``) sets
    ``self.agent``; the listeners run ``client.agent.run(...)``. Reported where the agent is set."""
    source = """\
        import gradio as gr
        from smolagents import InferenceClientModel, ToolCallingAgent


        class Client:
            def __init__(self):
                self.agent = None
                self.setup()

            def setup(self):
                self.agent = ToolCallingAgent(tools=[], model=InferenceClientModel())


        def build_ui():
            client = Client()
            with gr.Blocks() as demo:
                box = gr.Textbox()

                def respond(message):
                    return str(client.agent.run(message))

                box.submit(respond, [box], [box])
            return demo
        """
    assert _codes(source) == [(11, "DUP101")]
    # the counterpart: a client made by each event is the event's own
    per_event = source.replace("            client = Client()\n", "").replace(
        "                    return str(client",
        "                    client = Client()\n                    return str(client",
    )
    assert _codes(per_event) == []


# ------------------------------------------------------------------------------ DUP101 (smolagents runs)


CHAINLIT_SMOLAGENT = """\
    import chainlit as cl
    from smolagents import CodeAgent, LiteLLMModel

    planner = CodeAgent(tools=[], model=LiteLLMModel(model_id="ollama/qwen2.5"))


    @cl.on_message
    async def reply(message: cl.Message):
        {body}
    """


def _chainlit(body: str) -> list[tuple[int, str]]:
    return _codes(CHAINLIT_SMOLAGENT.format(body=body))


def test_resetting_smolagents_run_that_holds_the_event_loop_is_not_shared() -> None:
    """nick0918964388/smolagent chainlit_app.py:33/49 (216cc34e14): a Chainlit message coroutine
    calls the module-level CodeAgent's ``run`` synchronously. Chainlit awaits the coroutine on its
    event loop (chainlit/utils.py ``wrap_user_function``), so the run holds the loop until it
    returns and no two runs overlap; smolagents ``run(task, stream=False, reset=True)`` clears
    the memory first (smolagents/agents.py, ``MultiStepAgent.run``), so none inherits another
    visitor's steps (catalog ``resetting_run``). Reported still: the same agent run in a worker
    thread, kept across runs (``reset=False``), or streamed (steps interleave across awaits)."""
    assert _chainlit("await cl.Message(planner.run(message.content)).send()") == []
    threaded = "await cl.Message(await cl.make_async(planner.run)(message.content)).send()"
    assert [code for _, code in _chainlit(threaded)] == ["DUP101"]
    kept = "await cl.Message(planner.run(message.content, reset=False)).send()"
    assert [code for _, code in _chainlit(kept)] == ["DUP101"]
    streamed = "for step in planner.run(message.content, stream=True):\n            await cl.Message(str(step)).send()"
    assert [code for _, code in _chainlit(streamed)] == ["DUP101"]


def test_async_for_over_a_coroutine_never_runs_the_agent() -> None:
    """nick0918964388/smolagent multi-agent/chainlit_app.py:23/40 (216cc34e14): ``async for``
    over ``cl.make_async(agent.run)(...)``. ``make_async`` returns a coroutine function
    (chainlit/sync.py, asyncer's ``asyncify``), and ``async for`` raises TypeError on a coroutine
    before it starts: the handler never runs the shared agent. Awaiting the same call runs it in
    a worker thread, where runs overlap, and is reported."""
    iterated = (
        "async for piece in cl.make_async(planner.run)(message.content):\n            await cl.Message(piece).send()"
    )
    assert _chainlit(iterated) == []
    awaited = "piece = await cl.make_async(planner.run)(message.content)\n        await cl.Message(piece).send()"
    assert [code for _, code in _chainlit(awaited)] == ["DUP101"]


# ------------------------------------------------------------------------------ DUP101 (agents picked from a table)


PICKED_CREW = """\
    from crewai import Agent, Crew, Task
    from fastapi import FastAPI

    app = FastAPI()
    {agents}

    @app.post("/ask")
    def ask(topic: str, question: str):
        {local}by_topic = {{"billing": billing, "shipping": shipping}}
        job = Task(description=question, expected_output="an answer", agent=by_topic[topic])
        return Crew(agents=[by_topic[topic]], tasks=[job]).kickoff()
    """
MODULE_AGENTS = 'billing = Agent(role="billing", goal="g", backstory="b")\n    shipping = Agent(role="shipping", goal="g", backstory="b")'


def test_module_agents_picked_from_a_table_into_a_per_request_crew_are_shared() -> None:
    """feng20000308-stack/crewai-customer-service customer_service.py:677-727, 852-924
    (0de1087fd4): four module-level CrewAI agents, one picked per request by intent from a dict
    (``agent_map[intent]``) into a new Task and Crew; the crew's kickoff re-targets the picked
    agent's one executor (catalog ``member_of``), so overlapping requests share it. Each agent of
    the table is reported; agents built in the handler are not."""
    shared = _codes(PICKED_CREW.format(agents=MODULE_AGENTS, local=""))
    assert [code for _, code in shared] == ["DUP101", "DUP101"]
    per_request = PICKED_CREW.format(agents="", local=MODULE_AGENTS.replace("\n    ", "\n        ") + "\n        ")
    assert _codes(per_request) == []


STREAMED_TO_GRADIO = """\
    import gradio as gr
    from smolagents import CodeAgent, InferenceClientModel, stream_to_gradio

    {module}

    def write_post(topic, history):
        {local}for chunk in stream_to_gradio(writer, task=topic, reset_agent_memory=False):
            yield chunk


    with gr.Blocks() as demo:
        box = gr.Textbox()
        chat = gr.Chatbot()
        box.submit(write_post, [box, chat], chat)
    """
WRITER = "writer = CodeAgent(tools=[], model=InferenceClientModel())"


def test_agent_run_by_stream_to_gradio_in_a_handler_is_a_use() -> None:
    """HuyRakn/smolagents-travel-squad app_gradio_legacy.py:19/83 (99db04c7a0): a Gradio event
    handler hands the module-level CodeAgent to smolagents' ``stream_to_gradio``, which runs
    ``agent.run(task, stream=True, reset=reset_agent_memory)`` with ``reset_agent_memory=False``
    by default (smolagents/gradio_ui.py; ``entrypoints.AGENT_RUNNERS``): every visitor continues
    one memory. An agent built in the handler is not shared."""
    shared = _codes(STREAMED_TO_GRADIO.format(module=WRITER, local=""))
    assert [code for _, code in shared] == ["DUP101"]
    assert _codes(STREAMED_TO_GRADIO.format(module="", local=WRITER + "\n        ")) == []


# ------------------------------------------------------------------------------ DUP507 (storing verbs)


DRAFTING_CREW = """\
    from crewai import Agent
    from crewai.tools import tool


    @tool("{name}")
    def {name}(to: str, body: str) -> str:
        \"\"\"Store the reply for the user to review.\"\"\"
        return MAILBOX.store(to, body)


    writer = Agent(role="writer", goal="answer mail", backstory="b", tools=[{name}])
    """


def test_saving_a_draft_makes_a_new_one_on_every_retry() -> None:
    """Inventora-Digital/crewai-gmail-automation src/gmail_crew_ai/crew.py:111 (e79fe56c77): a
    CrewAI agent under the default task retries holds SaveDraftTool (``save_email_draft``), which
    appends a new draft on every run. "save" sets a state when its object is a place
    (``save_user_settings``), but a draft, a message or a note saved again is one more of them
    (``vocabulary.STORING_STEMS``/``ADDED_THINGS``)."""
    assert [code for _, code in _codes(DRAFTING_CREW.format(name="save_email_draft"))] == ["DUP507"]
    assert _codes(DRAFTING_CREW.format(name="save_user_settings")) == []


# ------------------------------------------------------------------------------ DUP106 (served files)


_MAIL_CREW = """\
from crewai import Agent, Crew, Task


class MailCrew:
    def crew(self):
        sorter = Agent(role="sorter", goal="sort the inbox", backstory="b")
        return Crew(agents=[sorter], tasks=[Task(description="sort", expected_output="labels", agent=sorter)])
"""
_MAIL_SERVER = """\
import os
import threading

from fastapi import FastAPI

from {module} import MailCrew

app = FastAPI()


def _run(address: str, password: str) -> None:
    os.environ["MAIL_ADDRESS"] = address
    os.environ["MAIL_PASSWORD"] = password
    MailCrew().crew().kickoff()


@app.post("/runs")
async def start(address: str, password: str):
    threading.Thread(target=_run, args=(address, password), daemon=True).start()
    return {{"started": True}}
"""


def test_server_importing_only_a_project_crew_class_is_linted(tmp_path: Path) -> None:
    """Inventora-Digital/crewai-gmail-automation src/gmail_crew_ai/server.py:118-122, 432
    (e79fe56c77): a FastAPI file that imports no framework, only the project's crew class, starts a
    thread per run that writes the user's mail password to ``os.environ``, where the tools the crew
    builds read it. The project index marks the imported name as agent code (``project.USES``), so
    the file is linted and DUP106 reports the writes; a helper module that reaches no agent code
    does not make the server agent code."""
    (tmp_path / "pyproject.toml").write_text('[tool.dupguard]\nsrc = ["src"]\n')
    package = tmp_path / "src" / "mailbot"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "crew.py").write_text(_MAIL_CREW)
    (package / "plain.py").write_text(_MAIL_CREW.replace("from crewai import Agent, Crew, Task\n", ""))
    (package / "server.py").write_text(_MAIL_SERVER.format(module="mailbot.crew"))
    (package / "plain_server.py").write_text(_MAIL_SERVER.format(module="mailbot.plain"))
    proc = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    reported = [
        line.split(": ")[0] + " " + line.split(": ")[1][:6]
        for line in proc.stdout.decode().splitlines()
        if ": DUP" in line
    ]
    assert reported == ["src/mailbot/server.py:12:5 DUP106", "src/mailbot/server.py:13:5 DUP106"], (
        proc.stdout + proc.stderr
    ).decode()


# ------------------------------------------------------------------------------ DUP205 (imported coroutines)


_BOT_FACTORY = """\
import asyncio

from langchain_openai import ChatOpenAI


class Bot:
    def __init__(self, session_id):
        self.session_id = session_id
        self.llm = ChatOpenAI(model="gpt-4o-mini")


async def make_bot(session_id):
    {pause}return Bot(session_id)
"""
_BOT_SERVER = """\
from fastapi import FastAPI

from bots.factory import make_bot

app = FastAPI()
chat_sessions = {}


@app.post("/chat/{session_id}")
async def chat(session_id: str, text: str):
    if session_id not in chat_sessions:
        chat_sessions[session_id] = await make_bot(session_id)
    return await chat_sessions[session_id].llm.ainvoke(text)
"""


def test_awaiting_an_imported_coroutine_that_never_awaits_does_not_yield(tmp_path: Path) -> None:
    """krinya/gen_ai_demo_rag_bot app/server.py:168 (06ddfa104b): the check-then-create of a
    per-session chatbot awaits ``create_chatbot`` of packages/chatbot/main.py:673, an ``async def``
    that only builds and returns the bot. Awaiting it never gives the event loop away, so no other
    request runs between the check and the store; the project index says so of the imported
    function (``project.NEVER_SUSPENDS``). The same factory with an ``await`` in it is reported."""
    (tmp_path / "pyproject.toml").write_text("[tool.dupguard]\n")
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "__init__.py").write_text("")
    (tmp_path / "server.py").write_text(_BOT_SERVER)
    factory = tmp_path / "bots" / "factory.py"
    factory.write_text(_BOT_FACTORY.format(pause=""))
    quiet = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert b": DUP" not in quiet.stdout, (quiet.stdout + quiet.stderr).decode()
    factory.write_text(_BOT_FACTORY.format(pause="await asyncio.sleep(0)\n    "))
    paused = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert b"server.py:12:9: DUP205" in paused.stdout, (paused.stdout + paused.stderr).decode()
