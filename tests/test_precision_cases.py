"""The reports that were wrong on real applications (issue 14, "Precision"), one test each,
with the counterpart that must still be reported so that no case passes by going blind.

Each module is written for the test, in the shape the cited application had (repository,
path and commit from bench/real-apps/); none is copied.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from dupguard.config import Settings
from dupguard.fixer import fix_bytes
from dupguard.pipeline import lint_text
from linthelpers import run_cli


def _codes(source: str, name: str = "app.py") -> list[tuple[int, str]]:
    settings = Settings()
    found = lint_text(name, textwrap.dedent(source), settings, settings.enabled_codes())
    return sorted((d.row, d.code) for d in found)


def _fixed(source: str, code: str) -> str:
    _, data, _ = fix_bytes("app.py", textwrap.dedent(source).encode(), Settings(), frozenset({code}), unsafe=False)
    return data.decode()


# ------------------------------------------------------------------------------ DUP501


def test_retry_around_an_agent_whose_tools_only_read_is_not_reported() -> None:
    """hfhoffman1144/langchain_neo4j_rag_app chatbot_api/src/main.py:12 (fc9aa4d): a retry
    decorator around an AgentExecutor whose tools only search and compute. Replaying the run
    repeats model calls and reads, no side effect."""
    source = """\
        import requests
        from fastapi import FastAPI
        from langchain.agents import AgentExecutor
        from langchain_community.tools import DuckDuckGoSearchRun
        from langchain_core.tools import tool
        from tenacity import retry, stop_after_attempt

        app = FastAPI()


        @tool
        def multiply(a: float, b: float) -> float:
            \"\"\"Multiply two numbers.\"\"\"
            return round(a * b, 4)


        @tool
        def weather(city: str) -> str:
            \"\"\"Current weather for a city.\"\"\"
            reply = requests.get("https://wttr.in/" + city, params={"format": "j1"}, timeout=5)
            reply.raise_for_status()
            return reply.json()["current_condition"][0]["temp_C"]


        executor = AgentExecutor(agent=AGENT, tools=[DuckDuckGoSearchRun(), multiply, weather])


        @retry(stop=stop_after_attempt(3))
        async def answer(question: str):
            return await executor.ainvoke({"input": question})


        @app.post("/ask")
        async def ask(question: str):
            return await answer(question)
        """
    assert _codes(source) == []
    # one tool that writes is enough for the retry to repeat a side effect
    writes = source.replace("return round(a * b, 4)", "return db.insert_payment(a, b)")
    assert [code for _, code in _codes(writes)] == ["DUP501"]


def test_retry_around_an_agent_without_tools_is_not_reported() -> None:
    source = """\
        from strands import Agent

        summariser = Agent(system_prompt="Summarise the ticket in one line.")


        def summarise(ticket: str) -> str:
            for attempt in range(3):
                try:
                    return str(summariser(ticket))
                except TimeoutError:
                    continue
            return ""
        """
    assert _codes(source) == []
    with_tool = source.replace('Agent(system_prompt="Summarise the ticket in one line.")', "Agent(tools=[refund])")
    assert [code for _, code in _codes(with_tool)] == ["DUP501"]


# ------------------------------------------------------------------------------ DUP505


def test_tool_loop_bounded_by_a_tool_call_budget_is_not_reported() -> None:
    """A model↔tool loop stopped by a budget of tool calls (``remaining -= len(calls)``,
    ``while remaining:``) rather than by an iteration counter."""
    source = """\
        import json

        from openai import OpenAI

        client = OpenAI()
        TOOL_CALL_BUDGET = 12


        def run(messages, tools):
            remaining = TOOL_CALL_BUDGET
            while remaining:
                reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
                message = reply.choices[0].message
                messages.append(message)
                if not message.tool_calls:
                    return message.content
                remaining -= len(message.tool_calls)
                for call in message.tool_calls:
                    result = execute_tool(call.function.name, json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            return "tool budget spent"
        """
    assert _codes(source) == []
    budget_object = source.replace("while remaining:", "while True:").replace(
        "if not message.tool_calls:", "if not message.tool_calls or budget.exhausted():"
    )
    assert _codes(budget_object) == []
    unbounded = source.replace("while remaining:", "while True:")
    assert [code for _, code in _codes(unbounded)] == ["DUP505"]


# ------------------------------------------------------------------------------ DUP503


def test_two_elements_of_one_pair_are_two_messages() -> None:
    """``history.append(pair[0]); history.append(pair[1])``: the user's turn and the reply
    (the shape of NathanFant/disclaude bot.py:503/520 at e85e8a4 and
    mlennie/openai-agents-sdk-legal-assistant app/app.py:111-112 at f30f1b9: two appends per
    turn of two different messages)."""
    source = """\
        from openai import OpenAI

        client = OpenAI()


        def replay(history: list, pairs: list) -> list:
            for pair in pairs:
                history.append(pair[0])
                history.append(pair[1])
            return client.chat.completions.create(model="gpt-4o-mini", messages=history)
        """
    assert _codes(source) == []
    same = source.replace("history.append(pair[1])", "history.append(pair[0])")
    assert _codes(same) == [(9, "DUP503")]


def test_a_name_rebound_by_unpacking_is_another_message() -> None:
    source = """\
        from openai import OpenAI


        def drain(messages: list, inbox) -> None:
            msg, meta = inbox.get()
            messages.append(msg)
            msg, meta = inbox.get()
            messages.append(msg)
        """
    assert _codes(source) == []
    assert _fixed(source, "DUP503") == textwrap.dedent(source)


def test_safe_fix_removes_only_a_proven_copy() -> None:
    """The safe fix deletes the second append only when nothing between the two can change
    what the expression names: consecutive statements, or a plain local name."""
    local = """\
        from openai import OpenAI


        def turn(messages: list, reply) -> None:
            messages.append(reply)
            print("stored")
            messages.append(reply)
        """
    assert _codes(local) == [(7, "DUP503")]
    assert "messages.append(reply)\n    print" in _fixed(local, "DUP503")
    assert _fixed(local, "DUP503").count("messages.append(reply)") == 1

    attribute = """\
        from openai import OpenAI


        class Session:
            def turn(self, messages: list) -> None:
                messages.append(self.last_reply)
                self.refresh()  # may assign self.last_reply
                messages.append(self.last_reply)
        """
    assert _codes(attribute) == [(8, "DUP503")]
    assert _fixed(attribute, "DUP503") == textwrap.dedent(attribute)  # reported, never deleted

    consecutive = attribute.replace("                self.refresh()  # may assign self.last_reply\n", "")
    assert _fixed(consecutive, "DUP503").count("messages.append(self.last_reply)") == 1


# ------------------------------------------------------------------------------ DUP402


def test_one_decorator_factory_applied_to_two_functions_is_two_registrations() -> None:
    """``agent.register_for_execution()(score)`` then ``(...)(fetch)``: AutoGen's decorator
    factory registering two tools, the shape of the Berkeley LLM Agents MOOC lab template
    (main.py, ``entrypoint_agent.register_for_execution()(...)`` once per tool). Deleting the
    second (DUP402's safe fix) would have unregistered ``fetch``."""
    source = """\
        from autogen import ConversableAgent


        def fetch(name: str) -> dict:
            return {}


        def score(name: str) -> float:
            return 1.0


        def main(query: str):
            entry = ConversableAgent("entry", llm_config=False)
            entry.register_for_execution()(score)
            entry.register_for_execution()(fetch)
            entry.initiate_chat(entry, message=query)
        """
    assert _codes(source) == []
    twice = source.replace(
        "entry.register_for_execution()(fetch)\n",
        "entry.register_for_execution()(fetch)\n            entry.register_for_execution()(fetch)\n",
    )
    assert _codes(twice) == [(16, "DUP402")]


# ------------------------------------------------------------------------------ test modules

_DELIBERATE_DUPLICATE = """\
from strands import Agent, tool


@tool
def lookup(order_id: str) -> str:
    return order_id


def test_the_framework_rejects_a_tool_given_twice():
    agent = Agent(tools=[lookup, lookup])
    assert len(agent.tool_names) == 1
"""


def test_a_deliberate_duplicate_in_a_test_module_is_not_served_code(tmp_path: Path) -> None:
    """Test modules (``tests/``, ``test_*.py``, ``*_test.py``, ``conftest.py``) run under a test
    runner, not for users, and hold duplicates on purpose; ``check-test-modules = true`` lints
    them too. Through the real CLI, from the project root."""
    (tmp_path / "pyproject.toml").write_text("[tool.dupguard]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "agent_dedup.py").write_text(_DELIBERATE_DUPLICATE)
    (tmp_path / "test_tools.py").write_text(_DELIBERATE_DUPLICATE)
    (tmp_path / "tools_test.py").write_text(_DELIBERATE_DUPLICATE)
    (tmp_path / "served.py").write_text(_DELIBERATE_DUPLICATE.replace("def test_the", "def the"))
    proc = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout + proc.stderr).decode()
    reported = {line.split(":")[0] for line in proc.stdout.decode().splitlines() if ": DUP" in line}
    assert reported == {"served.py"}

    (tmp_path / "pyproject.toml").write_text("[tool.dupguard]\ncheck-test-modules = true\n")
    proc = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    reported = {line.split(":")[0] for line in proc.stdout.decode().splitlines() if ": DUP" in line}
    assert reported == {"served.py", "test_tools.py", "tools_test.py", "tests/agent_dedup.py"}


# ------------------------------------------------------------------------------ Gradio


def test_gradio_submit_is_not_an_executor_submit_for_dup202() -> None:
    """juliensimon/smolagents-mcp-demo client/multi_agent_client/client.py:414 (f49090f):
    ``msg.submit(respond, ...)`` registers an event; it starts no thread over the agent."""
    source = """\
        import gradio as gr
        from strands import Agent


        def build():
            agent = Agent(system_prompt="per interface")

            def respond(message, history):
                return str(agent(message))

            with gr.Blocks() as demo:
                box = gr.Textbox()
                box.submit(respond, [box], [box])
                box.submit(respond, [box], [box])
            return demo
        """
    # no DUP202; the agent the two listeners close over is shared by them (DUP101, hosts.py Gradio)
    assert _codes(source) == [(6, "DUP101")]


# ------------------------------------------------------------------------------ related traps


def test_module_level_agno_agent_given_session_and_user_per_run() -> None:
    """Agno 2.9 (agno/agent/_session.py ``initialize_session``): a run given ``session_id``
    uses it and leaves ``agent.session_id`` alone; only a run without one makes a generated id
    sticky. History is read and written per session in the db; ``cache_session`` is off by
    default (agno/agent/agent.py). So the shared agent object holds no conversation here."""
    source = """\
        from agno.agent import Agent
        from agno.db.sqlite import SqliteDb
        from fastapi import FastAPI

        app = FastAPI()
        agent = Agent(db=SqliteDb(db_file="chat.db"), add_history_to_context=True)


        @app.post("/chat")
        def chat(session_id: str, user_id: str, text: str):
            return agent.run(text, session_id=session_id, user_id=user_id).content
        """
    assert _codes(source) == []


def test_reset_false_on_a_per_request_smolagents_agent() -> None:
    """geirfreysson/smolagents-template backend/api.py:66 (763afb8): ``run(reset=False)`` keeps
    memory between runs, but of an agent built for this request one line earlier."""
    source = """\
        from fastapi import FastAPI
        from smolagents import CodeAgent, LiteLLMModel

        app = FastAPI()
        model = LiteLLMModel(model_id="gpt-4o-mini")


        @app.post("/ask")
        def ask(question: str, history: list):
            agent = CodeAgent(tools=[], model=model)
            agent.memory.steps.extend(history)
            return agent.run(question, reset=False)
        """
    assert _codes(source) == []


def test_compiled_graph_with_a_checkpointer_keyed_by_thread_id() -> None:
    source = """\
        from fastapi import FastAPI
        from langgraph.checkpoint.memory import MemorySaver
        from langgraph.prebuilt import create_react_agent

        app = FastAPI()
        graph = create_react_agent(MODEL, tools=[], checkpointer=MemorySaver())


        @app.post("/chat/{thread_id}")
        async def chat(thread_id: str, text: str):
            config = {"configurable": {"thread_id": thread_id}}
            return await graph.ainvoke({"messages": [("user", text)]}, config)
        """
    assert _codes(source) == []


# ------------------------------------------------------------------------------ DUP106 and locks

_GRADIO_KEY_SPACE = """\
    import os
    import threading

    import gradio as gr

    from crew import run_crew

    {module_lock}


    def answer(question, openai_api_key):
        {local_lock}
        with lock:
            os.environ["OPENAI_API_KEY"] = openai_api_key
            result = run_crew(question)
            del os.environ["OPENAI_API_KEY"]
            return result


    gr.Interface(fn=answer, inputs=["text", "text"], outputs="text").launch()
    """


def test_visitor_key_written_under_a_shared_lock_held_for_the_run_is_not_reported() -> None:
    """bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667 hugging-face/agentic-ai/app.py:35
    (and six more spaces of that repository): the Gradio handler writes the visitor's key to the
    environment, runs, and deletes it, all under one module-level lock: one visitor at a time."""
    source = _GRADIO_KEY_SPACE.format(module_lock="lock = threading.Lock()", local_lock="")
    assert [c for c in _codes(source) if c[1] == "DUP106"] == []


def test_a_lock_built_by_the_handler_serialises_nothing() -> None:
    """bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667 hugging-face/gaia/app.py:33-39:
    the same write, run and delete, but under a lock the handler builds on every call, so two
    visitors hold two locks and overwrite (or delete) each other's key mid-run."""
    source = _GRADIO_KEY_SPACE.format(module_lock="", local_lock="lock = threading.Lock()")
    assert (14, "DUP106") in _codes(source)


def test_a_lock_around_the_write_alone_does_not_protect_the_run() -> None:
    """The lock must stay held while the key is used: released right after the write, another
    visitor's write lands before this visitor's run reads the environment."""
    source = """\
        import os
        import threading

        import gradio as gr

        from crew import run_crew

        lock = threading.Lock()


        def answer(question, openai_api_key):
            with lock:
                os.environ["OPENAI_API_KEY"] = openai_api_key
            return run_crew(question)


        gr.Interface(fn=answer, inputs=["text", "text"], outputs="text").launch()
        """
    assert (13, "DUP106") in _codes(source)


def test_streamlit_page_lock_is_rebuilt_for_every_session() -> None:
    """bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667 hugging-face/streamlit/app.py:6,24:
    the lock is bound at the top of a Streamlit page script, which Streamlit runs as a fresh
    module for every run of every session (hosts.py, Streamlit): each session holds its own
    lock while it writes its visitor's key to the one process environment."""
    source = """\
        import os
        import threading

        import streamlit as st
        from openai import OpenAI

        lock = threading.Lock()


        def ask(openai_api_key, prompt):
            with lock:
                os.environ["OPENAI_API_KEY"] = openai_api_key
                client = OpenAI()
                reply = client.responses.create(model="gpt-4o", input=prompt)
                del os.environ["OPENAI_API_KEY"]
            return reply.output_text


        st.title("Ask")
        key = st.text_input("OpenAI API key", type="password")
        prompt = st.text_input("Prompt")
        if st.button("Send"):
            st.write(ask(key, prompt))
        """
    assert (12, "DUP106") in _codes(source)


def test_streamlit_page_top_level_writes_the_visitors_key_to_the_environment() -> None:
    """amitkharche/agents_agentic_ai_rag_langgraph_orchestrator@0f16092825b9caeb1a826a3deb5a289643da0b77
    streamlit_app/app.py:16-19: the page asks for a key when the process has none and writes it to
    os.environ; every later session of the process then runs on the first visitor's key. The
    app's own secret written the same way is one value for everybody and is not reported."""
    source = """\
        import os

        import streamlit as st
        from langchain_openai import ChatOpenAI

        os.environ["LANGSMITH_API_KEY"] = st.secrets["LANGSMITH_API_KEY"]
        st.title("Orchestrator")
        if not os.getenv("OPENAI_API_KEY"):
            api_key = st.text_input("OpenAI API key", type="password")
            if api_key:
                os.environ["OPENAI_API_KEY"] = api_key
        else:
            api_key = os.getenv("OPENAI_API_KEY")
        question = st.text_input("Task")
        if question:
            st.write(ChatOpenAI(model="gpt-4o-mini").invoke(question).content)
        """
    assert [c for c in _codes(source) if c[1] == "DUP106"] == [(11, "DUP106")]


# ------------------------------------------------------------------------------ DUP101: wrappers


_CHAINLIT_WRAPPER = """\
    from functools import cache

    import chainlit as cl
    from agents import Agent, Runner


    class Assistant:
        def __init__(self):
            self.agent = Agent(name="assistant", instructions="Help.")
            self.{state} = []

        async def reply(self, text):
            {turn}
            result = await Runner.run(self.agent, {given})
            {keep}
            return result.final_output


    @cache
    def get_assistant():
        return Assistant()


    @cl.on_message
    async def on_message(message: cl.Message):
        answer = await get_assistant().reply(message.content)
        await cl.Message(content=answer).send()
    """


def test_cached_wrapper_that_keeps_the_conversation_on_itself() -> None:
    """agentika/agentize@e1e93ef9bc88c49798064a63c5ea6fb4cfb65577 examples/chatbot_agent.py:15-45:
    the OpenAI Agents SDK ``Agent`` is stateless configuration, but the project's wrapper class
    appends every turn to ``self.messages`` and stores the run's input list back, and
    ``@functools.cache`` hands one wrapper to every Chainlit session."""
    source = _CHAINLIT_WRAPPER.format(
        state="messages",
        turn='self.messages.append({"role": "user", "content": text})',
        given="self.messages",
        keep="self.messages = result.to_input_list()",
    )
    assert (21, "DUP101") in _codes(source)


def test_cached_wrapper_that_keeps_nothing_between_runs_is_not_reported() -> None:
    """The same shape with a wrapper that only reads its configuration (here a list of
    instructions it never changes) and runs the stateless agent on the turn's own input:
    sharing it is sharing configuration (agentika/agentize@e1e93ef9bc88c49798064a63c5ea6fb4cfb65577
    examples/research_agents.py:84 builds its agents the same way and is a labelled near-miss)."""
    source = _CHAINLIT_WRAPPER.format(state="notes", turn="pass", given="text", keep="pass")
    assert [c for c in _codes(source) if c[1] == "DUP101"] == []


# ------------------------------------------------------------------------------ DUP507


_CREW_TOOL = """\
    from crewai import Agent
    from crewai.tools import tool
    from google import genai


    @tool("{name}")
    def the_tool(question: str, file_path: str) -> str:
        \"\"\"Answer a question about a file.\"\"\"
        client = genai.Client()
        uploaded = client.files.upload(file=file_path)
        return client.models.generate_content(model="gemini-2.5-flash", contents=[uploaded, question]).text


    analyst = Agent(role="analyst", goal="answer", backstory="careful", tools=[the_tool])
    """


def test_a_tool_named_for_an_analysis_reads_even_if_it_uploads_its_input() -> None:
    """bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667 hugging-face/gaia/crew.py:81-106:
    "Image Analysis Tool" uploads the file it is asked about to the model provider and asks the
    model; CrewAI's default retry repeats a question, not a side effect. The name says what the
    tool does (an analysis: a read), so the ``upload`` in its body is not taken for a write."""
    assert [c for c in _codes(_CREW_TOOL.format(name="Image Analysis Tool")) if c[1] == "DUP507"] == []


def test_a_tool_whose_name_says_nothing_is_judged_by_its_body() -> None:
    """The counterpart: the same body under a name with no known verb is still taken to write
    (the body uploads), so the retry setting is reported."""
    assert (14, "DUP507") in _codes(_CREW_TOOL.format(name="Gemini File Tool"))
