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
from dupguard.rulemeta import all_rules
from linthelpers import lint_codes, run_cli

_codes = lint_codes


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
        from tools import execute_tool

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


def test_tool_loop_whose_dispatch_table_only_reads_is_not_reported() -> None:
    """bstraehle/ai-ml-dl agentic-ai/evaluating-ai-agents/L3.ipynb cell 47 (9f0a595): an uncapped
    model↔tool loop whose helper dispatches through a module-level table to a lookup, an analysis
    and a tool with no verb in its name whose body only asks the model and edits the reply's
    text. A stuck model repeats reads; nothing a user sees is done twice. The same loop with a
    tool that makes something new (``place_order``, cf. openai/reasoning-with-o1/L3.ipynb's
    ``place_purchase_order``) or sets a state (``restart_service``) is still reported, and so is
    a table the code does not show whole."""
    source = """\
        import json

        from openai import OpenAI

        client = OpenAI()


        def find_rows(question: str) -> str:
            return DB.execute(question).fetchall()


        def write_chart_code(goal: str) -> str:
            reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": goal}])
            return reply.choices[0].message.content.replace("```", "").strip()


        def chart(goal: str) -> str:
            return write_chart_code(goal)


        HANDLERS = {"find_rows": find_rows, "chart": chart}


        def dispatch_tool_calls(calls, messages):
            for call in calls:
                fn = HANDLERS[call.function.name]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": fn(**json.loads(call.function.arguments))})
            return messages


        def run(messages, tools):
            while True:
                reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
                message = reply.choices[0].message
                messages.append(message)
                if not message.tool_calls:
                    return message.content
                messages = dispatch_tool_calls(message.tool_calls, messages)
        """
    assert _codes(source) == []
    ordering = source.replace('"chart": chart}', '"chart": chart, "place_order": place_order}')
    assert [code for _, code in _codes(ordering)] == ["DUP505"]
    restarting = source.replace('"chart": chart}', '"chart": chart, "restart_service": restart_service}')
    assert [code for _, code in _codes(restarting)] == ["DUP505"]
    unknown = source.replace('"chart": chart}', '"chart": chart, **PLUGINS}')
    assert [code for _, code in _codes(unknown)] == ["DUP505"]


def test_tool_loop_whose_executor_the_file_never_defines_is_not_reported() -> None:
    """bstraehle/ai-ml-dl mcp/L5.ipynb cell 7 (9f0a595): a notebook cell that recalls an earlier
    lesson's model↔tool loop, whose ``execute_tool`` (and tool list) only that lesson defines. As
    written the loop stops at a NameError before any tool runs. Once the file defines or imports
    the executor, or star-imports a module that may, the loop is reported."""
    source = """\
        import anthropic

        client = anthropic.Anthropic()


        def answer(query, tools):
            messages = [{"role": "user", "content": query}]
            reply = client.messages.create(model="claude-3-7-sonnet", max_tokens=1024, tools=tools, messages=messages)
            going = True
            while going:
                for block in reply.content:
                    if block.type == "tool_use":
                        result = execute_tool(block.name, block.input)
                        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id, "content": result}]})
                        reply = client.messages.create(model="claude-3-7-sonnet", max_tokens=1024, tools=tools, messages=messages)
                    elif len(reply.content) == 1:
                        going = False
        """
    assert _codes(source) == []
    defined = source + "\n\n        def execute_tool(name, args):\n            return REGISTRY[name](**args)\n"
    assert [code for _, code in _codes(defined)] == ["DUP505"]
    imported = source.replace("import anthropic\n", "import anthropic\n        from tools import execute_tool\n")
    assert [code for _, code in _codes(imported)] == ["DUP505"]
    starred = source.replace("import anthropic\n", "import anthropic\n        from tools import *\n")
    assert [code for _, code in _codes(starred)] == ["DUP505"]


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


def test_an_upload_that_stages_the_input_of_a_model_call_is_not_a_write() -> None:
    """bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667 hugging-face/gaia/crew.py:408
    (the agent) and 256-286 (its "Code Execution Tool"): the tool's name says nothing, and its
    body uploads the script to the model provider's file store and asks the model to run it. The
    upload is the question's input; a retry stages a second temporary copy and asks again."""
    assert [c for c in _codes(_CREW_TOOL.format(name="Gemini File Tool")) if c[1] == "DUP507"] == []


def test_a_tool_whose_name_says_nothing_is_judged_by_its_body() -> None:
    """The counterparts: under the same name, a body that uploads without asking a model (the
    upload is the point), or that posts to a webhook, is taken to write, so the retry is reported."""
    keeps = _CREW_TOOL.format(name="Gemini File Tool").replace(
        'return client.models.generate_content(model="gemini-2.5-flash", contents=[uploaded, question]).text',
        "return uploaded.name",
    )
    assert (14, "DUP507") in _codes(keeps)
    posts = _CREW_TOOL.format(name="Gemini File Tool").replace(
        "uploaded = client.files.upload(file=file_path)", "uploaded = requests.post(HOOK, json={'q': question})"
    )
    assert (15, "DUP507") in _codes("import requests\n" + textwrap.dedent(posts))  # one line added above


def test_a_tool_class_named_for_the_notification_it_sends_writes() -> None:
    """Inventora-Digital/crewai-gmail-automation@e79fe56c77f62b29cb960e4cbd3ec9055528ddac
    src/gmail_crew_ai/crew.py:102: a CrewAI agent (default task retries) holds a tool class
    imported from another module, named for what it sends (``SlackNotificationTool``); each run
    posts a new Slack message. A name that reads first (``get_notifications``) stays a read."""
    source = """\
        from crewai import Agent

        from .tools.slack import {tool}

        notifier = Agent(role="notifier", goal="tell the team", backstory="brief", tools=[{tool}()])
        """
    assert (5, "DUP507") in _codes(source.format(tool="SlackNotificationTool"))
    assert [c for c in _codes(source.format(tool="GetNotificationsTool")) if c[1] == "DUP507"] == []


# ------------------------------------------------------------------------------ DUP204


_SINK_AGENT = """\
    from agents import Agent, function_tool
    from pydantic import BaseModel


    class Plan(BaseModel):
        queries: list[str]


    def build_planner() -> Agent:
        @function_tool
        def submit_plan(plan: Plan) -> Plan:
            \"\"\"Hand the plan back unchanged.\"\"\"
            {body}

        return Agent(name="planner", tools=[submit_plan], output_type=Plan, tool_use_behavior="stop_on_first_tool")
    """


def test_a_stop_tool_that_hands_back_its_argument_is_an_output_sink() -> None:
    """Open-Earth-Foundation/Query_mechanism_urbind@3a310cc053045bd901b0e0d6e9bdd16fc8cfc024
    backend/modules/orchestrator/agent.py:41-52 (and six agents like it): the agent's one tool
    returns the structured answer it is given, and ``stop_on_first_tool`` makes that the output.
    Two parallel calls are two answers, one kept: nothing is submitted anywhere, whatever the
    tool's name says."""
    assert [c for c in _codes(_SINK_AGENT.format(body="return plan")) if c[1] == "DUP204"] == []


def test_a_stop_tool_named_for_a_write_whose_body_does_more_is_still_reported() -> None:
    """The counterpart: the same name with a body that builds something else (a stub that
    stands for the submission) is judged by its name, a write."""
    source = _SINK_AGENT.format(body='return Plan(queries=plan.queries + ["audit"])')
    assert (15, "DUP204") in _codes(source)


def test_stop_tool_names_are_evidence_when_the_tool_list_is_built_elsewhere() -> None:
    """h4ks-com/CloudBot plugins/agent.py (the version of the search index that builds its tools
    with ``build_custom_tools`` from another module; its commit is not resolvable there): the
    agent stops at ``create_video``/``create_voice``, each call dispatching a render. The tool
    list cannot be followed, but the stop tools are tools of the agent by construction."""
    source = """\
        from agents import Agent
        from agents.agent import StopAtTools

        from .toolbox import build_tools


        def make_agent(cfg):
            return Agent(
                name="bot",
                tools=build_tools(cfg),
                tool_use_behavior=StopAtTools(stop_at_tool_names={names}),
            )
        """
    assert (11, "DUP204") in _codes(source.format(names='["create_video", "create_voice"]'))
    assert [c for c in _codes(source.format(names='["get_weather"]')) if c[1] == "DUP204"] == []


# ------------------------------------------------------------------------------ DUP205


_SESSION_FACTORY = """\
    from agents import SQLiteSession
    from fastapi import FastAPI

    api = FastAPI()
    sessions: dict = {{}}


    class Chatbot:
        def __init__(self, session_id: str):
            self.session_id = session_id
            self.memory = SQLiteSession(session_id)
            self.history: list[str] = []


    async def make_chatbot(session_id: str) -> Chatbot:
        {body}


    @api.post("/chat")
    async def chat(session_id: str, text: str) -> dict:
        if session_id not in sessions:
            sessions[session_id] = await make_chatbot(session_id)
        sessions[session_id].history.append(text)
        return {{"turns": len(sessions[session_id].history)}}
    """


def test_awaiting_a_factory_that_never_suspends_is_not_a_suspension() -> None:
    """krinya/gen_ai_demo_rag_bot@06ddfa104b7fc3afe2c5ed41b470bec1f011316b app/server.py:168 with
    packages/chatbot/main.py:673: the session's chatbot is stored from ``await create_chatbot(...)``,
    an ``async def`` with no ``await`` inside. The coroutine runs to its return without giving the
    event loop away, so the check and the store cannot interleave with another request."""
    assert [c for c in _codes(_SESSION_FACTORY.format(body="return Chatbot(session_id)")) if c[1] == "DUP205"] == []


def test_awaiting_a_factory_that_suspends_is_still_reported() -> None:
    """The counterpart: a factory that awaits (loads the history first) does give the loop away."""
    body = "await asyncio.sleep(0)\n        return Chatbot(session_id)"
    source = "import asyncio\n" + textwrap.dedent(_SESSION_FACTORY.format(body=body))
    assert (24, "DUP205") in _codes(source)


_THREAD_ACCESSORS = """\
    import asyncio

    from fastapi import FastAPI, Request
    from openai import AsyncOpenAI

    api = FastAPI()


    async def still_open(thread_id: str) -> bool:
        return (await AsyncOpenAI().beta.threads.retrieve(thread_id)) is not None


    class Conversations:
        def __init__(self):
            self._sender_threads = {{}}
            self._lock = asyncio.Lock()

        def thread_of(self, sender: str):
            return self._sender_threads.get(sender)

        def remember_thread(self, sender: str, thread_id: str) -> None:
            self._sender_threads[sender] = thread_id

        async def ensure_thread(self, sender: str) -> str:
        {body}


    conversations = Conversations()


    @api.post("/sms")
    async def sms(request: Request) -> dict:
        form = await request.form()
        thread_id = await conversations.ensure_thread(form["From"])
        return {{"thread": thread_id}}
    """

_UNLOCKED_ENSURE = """\
    known = self.thread_of(sender)
            if known:
                if await still_open(known):
                    return known
            created = await AsyncOpenAI().beta.threads.create()
            self.remember_thread(sender, created.id)
            return created.id"""


def test_a_thread_looked_up_and_stored_through_accessor_methods_is_reported() -> None:
    """brickflows/twilocall@731e086d7c685479206c868ceb5359f0100ffa78 app.py:226-244
    (bench/real-apps/labels-pub16.toml): a Twilio webhook's sender is mapped to an Assistants thread
    through a getter that only returns ``self._user_threads.get(uid)`` and a setter that only stores
    into it; between them the thread is created with awaits. Two quick messages of one sender both
    find no thread, both create one, and the second store wins."""
    assert (30, "DUP205") in _codes(_THREAD_ACCESSORS.format(body=_UNLOCKED_ENSURE))


def test_accessor_stores_under_a_lock_or_without_an_await_are_not_reported() -> None:
    """The counterparts: the same check-and-create under the instance's ``asyncio.Lock``, and a
    setter call with no ``await`` between the lookup and the store, cannot interleave."""
    locked = """\
    async with self._lock:
                known = self.thread_of(sender)
                if known:
                    if await still_open(known):
                        return known
                created = await AsyncOpenAI().beta.threads.create()
                self.remember_thread(sender, created.id)
                return created.id"""
    assert [c for c in _codes(_THREAD_ACCESSORS.format(body=locked)) if c[1] == "DUP205"] == []
    no_await = """\
    known = self.thread_of(sender)
            if known:
                return known
            self.remember_thread(sender, "local-" + sender)
            return self.thread_of(sender)"""
    assert [c for c in _codes(_THREAD_ACCESSORS.format(body=no_await)) if c[1] == "DUP205"] == []


_MANAGER_WITH_DEMO = """\
    import asyncio

    from openai import AsyncOpenAI


    class ChatThreads:
        def __init__(self) -> None:
            self.chat_threads = {{}}
            self.client = AsyncOpenAI()

        async def ask(self, chat_id: int, text: str) -> str:
            if {key} not in self.chat_threads:
                thread = await self.client.beta.threads.create()
                self.chat_threads[{key}] = thread.id
            thread_id = self.chat_threads[{key}]
            await self.client.beta.threads.messages.create(thread_id=thread_id, role="user", content=text)
            return thread_id


    async def demo() -> None:
        threads = ChatThreads()
        print(await threads.ask(1, "hello"))


    if __name__ == "__main__":
        asyncio.run(demo())
    """


def test_a_per_chat_store_only_the_modules_demo_calls_is_still_reported() -> None:
    """senylar/latoken_hack@84576907ec57e0b3116a556bea9de97558bd2eea chat_gpt_api/assistant.py:38-41
    (bench/real-apps/labels-pub16.toml): the class's ``__main__`` demo is the only caller in its
    module, but the method stores an item keyed by its own parameter, and aiogram handlers in other
    modules call it for every message of every chat (concurrently: ``handle_as_tasks``). Being
    reached from a script demo does not make it start-up code."""
    assert (14, "DUP205") in _codes(_MANAGER_WITH_DEMO.format(key="chat_id"))


def test_a_store_under_a_fixed_key_in_a_script_is_still_start_up_code() -> None:
    """The counterpart: the same demo-only method storing under a constant key fills one slot once,
    as a script's set-up does; nothing keyed by the caller can interleave."""
    assert [c for c in _codes(_MANAGER_WITH_DEMO.format(key='"main"')) if c[1] == "DUP205"] == []


# ------------------------------------------------------------------------------ DUP506


_LOGGED_CALLS = """\
    import json

    from openai import AsyncOpenAI

    from .store import actions, payments

    llm = AsyncOpenAI()


    async def step(conversation_id: int, messages: list) -> None:
        reply = (await llm.chat.completions.create(model="gpt-4o-mini", messages=messages)).choices[0].message
        for call in reply.tool_calls or []:
            args = json.loads(call.function.arguments)
            {line}
    """


def test_a_tool_call_id_given_to_a_log_row_is_not_a_guard() -> None:
    """SatuRnBolt/NookIt@b9e4cc9cfd0b7f01c2b37f7ff4785fcd56598211 ai-service/app/agent/loop.py:244-272:
    every tool call is written to an action log with ``idempotency_key=tc.id``; the id names the
    row (it is the tool message's ``tool_call_id`` later), and the write waits for the user's
    confirmation, which checks the row's status. A key handed to a log or audit call guards nothing."""
    for line in (
        "await actions.log_action(conversation_id, call.function.name, args, idempotency_key=call.id)",
        'logger.info("tool_call", idempotency_key=call.id)',
    ):
        assert [c for c in _codes(_LOGGED_CALLS.format(line=line)) if c[1] == "DUP506"] == [], line


def test_a_tool_call_id_given_to_the_write_is_still_reported() -> None:
    """The counterpart: the same id handed to the write as its idempotency key is the defect."""
    line = "await payments.refund(args['order_id'], idempotency_key=call.id)"
    assert (14, "DUP506") in _codes(_LOGGED_CALLS.format(line=line))


# ------------------------------------------------------------------------------ DUP104: Streamlit pages


def test_streamlit_page_writes_the_visitors_prompt_to_an_imported_agent() -> None:
    """RaoulLetschka/strategist-agent@0a1a3da8282dafb9a9b13c831f8f05320f32ef41 streamlit_app.py:130:
    the page's ``app()`` (run under the ``__main__`` guard, which Streamlit runs for every session)
    writes the system prompt each visitor edits in the sidebar to an OpenAI Agents SDK agent that
    another module builds once per process, then runs it: a concurrent visitor's prompt wins."""
    source = """\
        import asyncio

        import streamlit as st
        from agents import Runner

        from strategy.agents import rival_agent


        async def page():
            st.session_state.setdefault("prompt", "Find the company's main rivals.")
            st.sidebar.text_area("System prompt", key="prompt")
            rival_agent.instructions = st.session_state.prompt
            if question := st.chat_input("Company"):
                result = await Runner.run(rival_agent, question)
                st.write(result.final_output)


        if __name__ == "__main__":
            asyncio.run(page())
        """
    assert (12, "DUP104") in _codes(source)


def test_streamlit_page_hands_its_connection_to_an_agent_it_imports_in_the_function() -> None:
    """floreaGabriel/NEXXT_AI_PROJECT@04518ee583f2777255275ffa1c81f0d82de057f0
    pages/2_Product_Recommendations_Florea.py:1207: a coroutine defined in the page script imports
    the process-wide e-mail agent inside its body, opens an MCP stdio connection for this visitor,
    assigns it to the agent and runs it; two visitors sending at once swap connections."""
    source = """\
        import asyncio

        import streamlit as st
        from agents import Runner
        from agents.mcp import MCPServerStdio

        st.title("Send my plan")
        address = st.text_input("E-mail")
        if st.button("Send"):

            async def send():
                from mailer.agents import mail_agent

                server = MCPServerStdio({"command": "python", "args": ["-m", "mail_server"]})
                await server.connect()
                mail_agent.mcp_servers = [server]
                return await Runner.run(mail_agent, f"Send the plan to {address}")

            st.write(asyncio.run(send()).final_output)
        """
    assert (16, "DUP104") in _codes(source)


def test_streamlit_page_reconfiguring_what_it_owns_is_not_reported() -> None:
    """The counterparts, each one value per session: strategist-agent's later HEAD (b0daeac) builds
    the agent in the run and then sets its instructions; a page script's own module-level agent is
    rebuilt on every run of the page; a cached factory runs once; a constant is the same for every
    visitor. LlamaIndex's process-wide ``Settings`` set from a visitor's choice is still reported."""
    source = """\
        import streamlit as st
        from agents import Agent, Runner
        from llama_index.core import Settings
        from llama_index.llms.ollama import Ollama

        from strategy.agents import build_rival_agent, rival_agent

        page_agent = Agent(name="page", instructions="Answer.")


        @st.cache_resource
        def configured():
            rival_agent.instructions = "Find rivals."
            return rival_agent


        def run(question):
            agent = build_rival_agent()
            agent.instructions = st.session_state.prompt
            page_agent.instructions = st.session_state.prompt
            rival_agent.model = "gpt-4o-mini"
            return Runner.run_sync(agent, question)


        Settings.llm = Ollama(model="llama3.2")
        choice = st.selectbox("Model", ["llama3.2", "qwen2.5"])
        Settings.llm = Ollama(model=choice)
        st.write(run(st.chat_input("Question")).final_output)
        """
    assert [c for c in _codes(source) if c[1] == "DUP104"] == [(27, "DUP104")]


# ------------------------------------------------------------------------------ DUP107: handed agents


def test_a2a_executor_keeps_the_strands_agent_it_is_handed() -> None:
    """zjaco13/ai-on-eks@620254d02d73028e9c89fb66b02ab88438aa54f5
    blueprints/agentic/multi-agent-strands-bedrock/weather/multiagent/a2a/executor.py:31: a copy of
    Strands' early A2A executor stores the agent its constructor is given (annotated as a Strands
    Agent) and calls it for every message; the server builds it once around one agent. Handed an
    OpenAI Agents SDK agent, which keeps no conversation, the same shape is fine."""
    source = """\
        from a2a.server.agent_execution import AgentExecutor
        from a2a.utils import new_agent_text_message
        from agents import Agent as ConfigAgent
        from agents import Runner
        from strands import Agent as ForecastAgent


        class ForecastExecutor(AgentExecutor):
            def __init__(self, agent: ForecastAgent):
                self.agent = agent

            async def execute(self, context, event_queue):
                reply = self.agent(context.get_user_input())
                await event_queue.enqueue_event(new_agent_text_message(str(reply)))


        class RouterExecutor(AgentExecutor):
            def __init__(self, agent: ConfigAgent):
                self.agent = agent

            async def execute(self, context, event_queue):
                reply = await Runner.run(self.agent, context.get_user_input())
                await event_queue.enqueue_event(new_agent_text_message(reply.final_output))
        """
    assert [c for c in _codes(source) if c[1] == "DUP107"] == [(10, "DUP107")]


def test_smolagents_gradio_ui_keeps_one_agent_for_every_visitor() -> None:
    """nick0918964388/smolagent@216cc34e14792269cfa75f2d661cc4abf1b9f78b gradio-smolagent.py:14,16: a
    module-level CodeAgent handed to smolagents' GradioUI, which runs that one object for every browser
    session without resetting its memory (huggingface/smolagents#703). Built with
    ``reset_agent_memory=True`` each run starts from an empty memory and is not reported."""
    source = """\
        from smolagents import CodeAgent, GradioUI, InferenceClientModel

        painter = CodeAgent(tools=[], model=InferenceClientModel())
        GradioUI(painter).launch()

        fresh = CodeAgent(tools=[], model=InferenceClientModel())
        GradioUI(fresh, reset_agent_memory=True).launch()
        """
    assert [c for c in _codes(source) if c[1] == "DUP107"] == [(3, "DUP107")]


# ------------------------------------------------------------------------------ DUP105: per-user caches

# by the rule's name: this module already quotes half the codes (test_rule_registry's limit)
TOOLKIT_SHARED = next(meta.code for meta in all_rules().values() if meta.name == "stateful-toolkit-shared")

_PER_USER_CACHE = """\
    from functools import lru_cache

    from agno.agent import Agent
    from agno.tools.gmail import GmailTools
    from fastapi import FastAPI

    from mailapp.oauth_store import stored_google_credentials

    app = FastAPI()


    @lru_cache(maxsize=512)
    def gmail_for(user_id: str) -> GmailTools:
        {body}


    @app.post("/mail/{{user_id}}")
    async def mail(user_id: str, payload: dict):
        agent = Agent(tools=[gmail_for(user_id)])
        return (await agent.arun(payload["message"], user_id=user_id)).content
    """


def test_a_cache_keyed_by_the_user_whose_credentials_build_the_toolkit_is_not_reported() -> None:
    """OmniGPT-Official/dev-team-poc services/tool_providers.py@1465970 builds agno's GmailTools
    per user from that user's stored OAuth credentials; cached by user id, that is one toolkit
    per user, the remedy DUP105 recommends, even through a local binding of the credentials."""
    direct = "return GmailTools(creds=stored_google_credentials(user_id))"
    assert [c for c in _codes(_PER_USER_CACHE.format(body=direct)) if c[1] == TOOLKIT_SHARED] == []
    via_local = "creds = stored_google_credentials(user_id)\n        return GmailTools(creds=creds)"
    assert [c for c in _codes(_PER_USER_CACHE.format(body=via_local)) if c[1] == TOOLKIT_SHARED] == []


def test_a_cache_keyed_by_user_that_ignores_the_user_is_still_reported() -> None:
    """The counterpart: keyed by user, but the toolkit reads the server's token file, so every
    user's cached toolkit acts as the one account that token belongs to."""
    source = _PER_USER_CACHE.format(body="return GmailTools()")
    assert (14, TOOLKIT_SHARED) in _codes(source)
