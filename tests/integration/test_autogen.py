"""AutoGen AgentChat adapter against the real ``autogen-agentchat`` ``AssistantAgent``.

The model is AutoGen's own ``ReplayChatCompletionClient`` (``autogen-ext``), which records
the messages of every ``create`` call, so the tests assert on the
``FunctionExecutionResult`` s the model actually received.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from adapters_support import require

require("autogen_agentchat")
require("autogen_ext.models.replay")

from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import (
    CreateResult,
    FunctionExecutionResultMessage,
    ModelFamily,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import FunctionTool
from autogen_ext.models.replay import ReplayChatCompletionClient

from dupguard.runtime import (
    ConcurrentInvocationError,
    InvocationGuard,
    ToolPolicy,
    TurnToolGuard,
)
from dupguard.runtime.adapters.autogen import AutoGenGuard

pytestmark = pytest.mark.timeout(30)

INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family=ModelFamily.UNKNOWN,
    structured_output=False,
)


def calls(*pairs: tuple[str, str]) -> CreateResult:
    """A model response asking for ``send_email(to=...)`` once per ``(call_id, to)``."""
    return CreateResult(
        finish_reason="function_calls",
        cached=False,
        usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
        content=[FunctionCall(id=cid, name="send_email", arguments=json.dumps({"to": to})) for cid, to in pairs],
    )


def client(*responses) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(responses), model_info=INFO)


def results_seen(model: ReplayChatCompletionClient, index: int) -> list:
    """The function results in the last message of the ``index``-th model request."""
    last = model.create_calls[index]["messages"][-1]
    assert isinstance(last, FunctionExecutionResultMessage)
    return last.content


def make_tool(effects, delay: float = 0.02) -> FunctionTool:
    async def send_email(to: str) -> str:
        """Send an email (a side effect that must happen once)."""
        n = effects.record(to=to)
        await asyncio.sleep(delay)
        return f"sent email #{n} to {to}"

    return FunctionTool(send_email, description="Send an email.")


def make_agent(model, tools) -> AssistantAgent:
    return AssistantAgent("assistant", model_client=model, tools=tools, reflect_on_tool_use=True)


async def turn_then_retry(effects, guard):
    """One turn asks for the same call twice (ids c1, c2); the retried turn replays c1."""
    first = client(calls(("c1", "bob"), ("c2", "bob")), "done")
    retry = client(calls(("c1", "bob")), "done again")
    tools = [make_tool(effects)]
    if guard:
        tools = guard.tools(tools)
    for model in (first, retry):
        agent = make_agent(model, tools)
        if guard:
            guard.protect(agent)
        await agent.run(task="email bob")
    return first, retry


async def test_without_adapter_the_side_effect_repeats(effects):
    await turn_then_retry(effects, None)
    assert effects.count == 3


async def test_duplicate_in_turn_and_retried_turn_execute_once(effects):
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    first, retry = await turn_then_retry(effects, AutoGenGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-1")))
    assert effects.count == 1
    one, two = results_seen(first, 1)
    assert (one.call_id, one.content, one.is_error) == ("c1", "sent email #1 to bob", False)
    assert two.call_id == "c2" and not two.is_error
    assert "identical arguments" in two.content and "sent email #1 to bob" in two.content
    (replayed,) = results_seen(retry, 1)
    assert replayed.call_id == "c1"
    assert "already executed" in replayed.content and "sent email #1 to bob" in replayed.content


async def test_limit_reason_reaches_the_model(effects):
    guard = AutoGenGuard(turn_guard=lambda: TurnToolGuard({"send_email": ToolPolicy(max_calls=1)}))
    model = client(calls(("a", "bob"), ("b", "eve")), "stop")
    await guard.protect(make_agent(model, guard.tools([make_tool(effects)]))).run(task="email two")
    assert [c["to"] for c in effects.calls] == ["bob"]
    refused = [r for r in results_seen(model, 1) if r.call_id == "b"][0]
    assert "reached its limit of 1" in refused.content


async def test_plain_functions_are_wrapped_too(effects):
    async def send_email(to: str) -> str:
        """Send an email."""
        effects.record(to=to)
        return "sent"

    guard = AutoGenGuard()
    (wrapped,) = guard.tools([send_email])
    assert wrapped.name == "send_email" and wrapped.schema["parameters"]["required"] == ["to"]
    model = client(calls(("x", "bob"), ("y", "bob")), "ok")
    await guard.protect(make_agent(model, [wrapped])).run(task="go")
    assert effects.count == 1


async def context(agent) -> list[tuple[str, str]]:
    """The agent's model context (its conversation state), flattened."""
    state = await agent.save_state()
    out = []
    for m in state["llm_context"]["messages"]:
        content = m["content"]
        if m["type"] == "UserMessage":
            out.append(("user", content))
        elif m["type"] == "AssistantMessage":
            out.append(("assistant", content if isinstance(content, str) else "call " + content[0]["id"]))
        else:
            out.append(("result", content[0]["content"]))
    return out


def expected(user: str, call_id: str, to: str, n: int) -> list[tuple[str, str]]:
    return [
        ("user", user),
        ("assistant", "call " + call_id),
        ("result", f"sent email #{n} to {to}"),
        ("assistant", f"done {to}"),
    ]


async def test_wait_mode_serialises_two_runs_on_one_agent(effects):
    guard = AutoGenGuard(invocation=InvocationGuard("wait"))
    model = client(calls(("b1", "bob")), "done bob", calls(("e1", "eve")), "done eve")
    agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, 0.05)])))
    results = await asyncio.gather(agent.run(task="email bob"), agent.run(task="email eve"))
    assert [r.messages[-1].content for r in results] == ["done bob", "done eve"]
    assert await context(agent) == expected("email bob", "b1", "bob", 1) + expected("email eve", "e1", "eve", 2)


async def test_run_stream_is_guarded_too(effects):
    guard = AutoGenGuard(invocation="wait")
    model = client(calls(("b1", "bob")), "done bob", calls(("e1", "eve")), "done eve")
    agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, 0.05)])))

    async def drain(task):
        return [m async for m in agent.run_stream(task=task)]

    await asyncio.gather(drain("email bob"), drain("email eve"))
    assert await context(agent) == expected("email bob", "b1", "bob", 1) + expected("email eve", "e1", "eve", 2)


async def test_throw_mode_fails_the_second_run_fast(effects):
    guard = AutoGenGuard(invocation="throw")
    model = client(calls(("b1", "bob")), "done bob", calls(("e1", "eve")), "done eve")
    agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, 0.05)])))
    first = asyncio.ensure_future(agent.run(task="email bob"))
    while not guard.invocation.busy:
        await asyncio.sleep(0)
    with pytest.raises(ConcurrentInvocationError):
        await agent.run(task="email eve")
    assert (await first).messages[-1].content == "done bob"
    assert await context(agent) == expected("email bob", "b1", "bob", 1)
    assert effects.count == 1


async def test_failing_tool_is_not_hammered_in_a_turn_but_may_run_again_when_retried(effects):
    """A failure is committed to the turn (an identical retry gets the same error) and the
    ledger id is released (a retried turn replaying the id may try again)."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    async def send_email(to: str) -> str:
        """Send an email."""
        effects.record(to=to)
        raise ConnectionError("smtp down")

    guard = AutoGenGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-f"))
    tools = guard.tools([send_email])
    model = client(calls(("f1", "bob")), calls(("f2", "bob")), "gave up")
    agent = guard.protect(
        AssistantAgent("a", model_client=model, tools=tools, reflect_on_tool_use=True, max_tool_iterations=2)
    )
    await agent.run(task="email bob")
    assert effects.count == 1
    (second,) = results_seen(model, 2)
    assert second.call_id == "f2" and "smtp down" in second.content and "identical arguments" in second.content
    retry = client(calls(("f1", "bob")), "gave up again")
    await guard.protect(make_agent(retry, tools)).run(task="email bob")
    assert effects.count == 2


async def test_two_workers_handling_the_same_message_run_its_tool_call_once(effects):
    """Seed 001, cause 2: two workers pick up the same job at once (no lease on the queue).
    Each has its own agent and guard, but they share the ledger store and scope: the call id
    runs once, the second worker waits for it and gets the recorded result."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    store = MemoryBackend()  # stands for the shared SQLite/Redis store
    models, runs = [], []
    for _ in range(2):
        guard = AutoGenGuard(ledger=ToolCallLedger(store, scope="job-7"))
        model = client(calls(("j1", "bob")), "done")
        models.append(model)
        agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, delay=0.1)])))
        runs.append(agent.run(task="email bob"))
    await asyncio.gather(*runs)
    assert effects.count == 1
    seen = [results_seen(m, 1)[0].content for m in models]
    ran = [text for text in seen if text == "sent email #1 to bob"]
    waited = [text for text in seen if "already executed" in text and "sent email #1 to bob" in text]
    assert len(ran) == 1 and len(waited) == 1


async def test_without_protect_two_runs_corrupt_the_shared_context(effects):
    """Why protect() exists: AutoGen does not guard an agent, and the second run's task lands
    in the middle of the first run's tool call (typically before its result, which AutoGen
    then rejects); whatever the scheduling, the context is not two clean turns."""
    model = client(calls(("b1", "bob")), "done bob", calls(("e1", "eve")), "done eve")
    agent = make_agent(model, [make_tool(effects, 0.05)])
    await asyncio.gather(agent.run(task="email bob"), agent.run(task="email eve"), return_exceptions=True)
    flat = await context(agent)
    serial = [expected("email bob", "b1", "bob", 1), expected("email eve", "e1", "eve", 1)]
    assert flat not in (serial[0] + serial[1], serial[1] + serial[0])
    assert sorted(entry for entry in flat if entry[0] == "user") == [
        ("user", "email bob"),
        ("user", "email eve"),
    ]
