"""DESIGN §4's precision traps: each is a realistic file that every rule must leave clean.

One file per trap in ``tests/data/traps/``; the module docstring of each names the trap.
The counterpart that must be flagged (``st.cache_resource`` shares across sessions) is here
too, so the Streamlit trap cannot pass by ignoring Streamlit altogether.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dupguard.config import Settings
from dupguard.pipeline import lint_text
from linthelpers import ROOT

TRAPS = sorted((ROOT / "tests" / "data" / "traps").glob("*.py"))


def _lint(name: str, text: str):
    settings = Settings()
    return lint_text(name, text, settings, settings.enabled_codes())


@pytest.mark.parametrize("path", TRAPS, ids=[p.stem for p in TRAPS])
def test_trap_stays_clean(path: Path) -> None:
    assert _lint(str(path), path.read_text()) == []


def test_streamlit_cache_resource_is_shared_and_flagged() -> None:
    source = textwrap.dedent(
        """\
        import streamlit as st
        from llama_index.core.agent import ReActAgent


        @st.cache_resource
        def get_agent():
            return ReActAgent.from_tools(tools=[])


        prompt = st.chat_input("Ask me")
        if prompt:
            st.write(get_agent().chat(prompt).response)
        """
    )
    assert [(d.row, d.code) for d in _lint("app.py", source)] == [(7, "DUP101")]


def test_agent_executor_with_memory_is_flagged() -> None:
    source = textwrap.dedent(
        """\
        from fastapi import FastAPI
        from langchain.agents import AgentExecutor
        from langchain.memory import ConversationBufferMemory

        app = FastAPI()
        memory = ConversationBufferMemory(memory_key="chat_history")
        executor = AgentExecutor(agent=AGENT, tools=[], memory=memory)


        @app.post("/chat")
        async def chat(payload: dict):
            return await executor.ainvoke({"input": payload["message"]})
        """
    )
    assert {(d.row, d.code) for d in _lint("app.py", source)} == {(6, "DUP102"), (7, "DUP101")}
