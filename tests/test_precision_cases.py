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
    assert _codes(source) == []


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
