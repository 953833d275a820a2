"""DUP50x: the user's idempotency checks (``extend-idempotency-guards``) reach the rules.

A check the built-in vocabulary cannot recognise (``myapp.dedup.first_time``) is a finding
until the project declares it; then the same file is clean for every rule that asks whether
a run is guarded (retry loops, redelivered tasks, tool loops).
"""

from __future__ import annotations

import textwrap

import pytest

from dupguard.config import Settings
from dupguard.pipeline import lint_text

RETRY = textwrap.dedent("""
    from llama_index.core.agent import ReActAgent
    from myapp.dedup import first_time

    async def chat(payload: dict, tools: list):
        agent = ReActAgent.from_tools(tools=tools)
        if not first_time(payload["request_id"]):
            return None
        for attempt in range(3):
            try:
                return await agent.achat(payload["message"])
            except TimeoutError:
                continue
""")

TASK = textwrap.dedent("""
    from celery import shared_task
    from smolagents import InferenceClientModel, ToolCallingAgent
    from myapp.dedup import first_time

    @shared_task(acks_late=True)
    def report(region: str, event_id: str):
        if not first_time(event_id):
            return None
        agent = ToolCallingAgent(tools=[], model=InferenceClientModel())
        return agent.run(region)
""")

LOOP = textwrap.dedent("""
    import json
    from openai import OpenAI
    from myapp.dedup import first_time
    from .tools import DISPATCH, SCHEMAS

    client = OpenAI()

    def run(messages: list) -> str:
        while True:
            msg = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SCHEMAS).choices[0].message
            if not msg.tool_calls:
                return msg.content
            for call in msg.tool_calls:
                if first_time(call.id):
                    DISPATCH[call.function.name](**json.loads(call.function.arguments))
""")


@pytest.mark.parametrize(("code", "source"), [("DUP501", RETRY), ("DUP504", TASK), ("DUP505", LOOP)])
def test_user_guard_silences_the_finding(code: str, source: str) -> None:
    plain = lint_text("app.py", source, Settings(), frozenset({code}))
    assert [d.code for d in plain] == [code]
    declared = Settings(extend_idempotency_guards=("myapp.dedup.first_time",))
    assert lint_text("app.py", source, declared, frozenset({code})) == []


def test_guard_must_be_the_declared_name() -> None:
    other = Settings(extend_idempotency_guards=("myapp.dedup.other_check",))
    assert [d.code for d in lint_text("app.py", RETRY, other, frozenset({"DUP501"}))] == ["DUP501"]


def test_lint_hash_changes_with_the_guards() -> None:
    assert Settings().lint_hash() != Settings(extend_idempotency_guards=("a.b",)).lint_hash()
