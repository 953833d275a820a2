"""LlamaIndex adapter against the real ``llama-index-core`` workflow ``FunctionAgent``.

The model is LlamaIndex's own ``MockFunctionCallingLLM`` driven by a scripted response
generator that also records every message list it is given, so the tests assert on what the
model actually received. Like a real model API, it gives every tool call a fresh id in every
response: a retried turn never sees the ids of the first attempt.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from adapters_support import SHAPES, require, retry_request

require("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool

from dupguard.runtime import ConcurrentInvocationError, InvocationGuard, TurnToolGuard
from dupguard.runtime.adapters.llamaindex import LlamaIndexGuard

pytestmark = [
    pytest.mark.timeout(30),
    # LlamaIndex's workflow step discovery runs inspect.getmembers over pydantic models
    pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect"),
]


def call(tool: str = "send_email", **kwargs) -> tuple[str, dict]:
    """A scripted tool call: the model gives it a fresh id each time it sends it."""
    return (tool, kwargs)


class ModelDown(RuntimeError):
    """The model API failed (a 500, a timeout): what ``FAIL`` in a script raises."""


FAIL = "<the model call fails>"


class ScriptedModel:
    """Answers by position inside the current turn: the n-th model call after the last user
    message gets ``script[user_text][n]`` (a list of tool calls, the final text, or ``FAIL``).
    Keyed by the user text so that concurrent runs stay deterministic. Records what it was
    sent (``seen``) and the tool-call ids it issued (``issued``), fresh per response."""

    def __init__(self, script: dict[str, list]) -> None:
        self.script = script
        self.seen: list[list[ChatMessage]] = []
        self.issued: list[str] = []

    def __call__(self, messages, **kwargs) -> ChatMessage:
        messages = list(messages)
        self.seen.append(messages)
        users = [i for i, m in enumerate(messages) if m.role == MessageRole.USER]
        # a corrupted conversation (unguarded concurrent runs) can ask for more steps than
        # scripted, or arrive without a user message at all (the other run's turn replaced
        # it): answer without tools, so the run ends and the test can inspect the damage
        script = self.script[messages[users[-1]].content] if users else []
        step = sum(1 for m in messages[users[-1] :] if m.role == MessageRole.ASSISTANT) if users else 0
        reply = script[step] if step < len(script) else "script exhausted"
        if reply == FAIL:
            raise ModelDown("the model API returned 500")
        if isinstance(reply, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=reply)
        selections = []
        for tool, tool_kwargs in reply:
            self.issued.append(f"call_{uuid.uuid4().hex[:12]}")
            selections.append(ToolSelection(tool_id=self.issued[-1], tool_name=tool, tool_kwargs=tool_kwargs))
        return ChatMessage(role=MessageRole.ASSISTANT, content="", additional_kwargs={"tool_calls": selections})

    def tool_messages(self, index: int) -> list[str]:
        return [m.content for m in self.seen[index] if m.role == MessageRole.TOOL]


def make_tool(effects, delay: float = 0.02) -> FunctionTool:
    async def send_email(to: str) -> str:
        """Send an email (a side effect that must happen once)."""
        n = effects.record(to=to)
        await asyncio.sleep(delay)  # keeps parallel duplicates overlapping
        return f"sent email #{n} to {to}"

    return FunctionTool.from_defaults(async_fn=send_email)


def make_agent(model: ScriptedModel, tools) -> FunctionAgent:
    return FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=model))


def make_agent_of(guard: LlamaIndexGuard, agent_class: bool, model: ScriptedModel, tools) -> FunctionAgent:
    """A ``FunctionAgent``, or (``agent_class``) the docs' ``guard.agent_class(FunctionAgent)``,
    whose tools see the model's tool-call id."""
    cls = guard.agent_class(FunctionAgent) if agent_class else FunctionAgent
    return cls(tools=tools, llm=MockFunctionCallingLLM(response_generator=model))


DUPLICATE_SCRIPT = {"email bob": [[call(to="bob"), call(to="bob")], "done"]}
RETRY_SCRIPT = {"email bob": [[call(to="bob")], "done again"]}


async def run_turn_then_retry(
    effects,
    *,
    guard: LlamaIndexGuard | None,
    agent_class: bool = False,
    turn_id: str | None = "request-1",
) -> tuple[ScriptedModel, ScriptedModel]:
    """One turn asking for the same call twice, then the same request retried once, with the
    request's turn id; the model gives the retry's call a new id, as a real model does."""
    first = ScriptedModel(DUPLICATE_SCRIPT)
    retry = ScriptedModel(RETRY_SCRIPT)
    tool = make_tool(effects)
    tools = guard.tools([tool]) if guard else [tool]
    for model in (first, retry):
        if guard:
            await guard.run(make_agent_of(guard, agent_class, model, tools), "email bob", turn_id=turn_id)
        else:
            await make_agent(model, tools).run("email bob")
    assert not set(first.issued) & set(retry.issued)
    return first, retry


async def test_without_adapter_the_side_effect_repeats(effects):
    await run_turn_then_retry(effects, guard=None)
    assert effects.count == 3


@pytest.mark.parametrize("agent_class", [False, True], ids=["FunctionAgent", "agent_class"])
async def test_duplicate_in_turn_and_retried_turn_execute_once(effects, agent_class):
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = LlamaIndexGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-1"))
    first, retry = await run_turn_then_retry(effects, guard=guard, agent_class=agent_class)
    assert effects.count == 1
    # turn 1, second model call: both tool results, the second one a replay of the first
    results = first.tool_messages(1)
    assert len(results) == 2
    assert all("sent email #1 to bob" in text for text in results)
    replayed = [text for text in results if text != "sent email #1 to bob"]
    assert len(replayed) == 1 and "send_email" in replayed[0] and "identical arguments" in replayed[0]
    # retried turn: the ledger replays the recorded result, the tool does not run again
    (retried,) = retry.tool_messages(1)
    assert "already executed" in retried and "sent email #1 to bob" in retried


@pytest.mark.parametrize("agent_class", [False, True], ids=["FunctionAgent", "agent_class"])
async def test_without_a_turn_id_a_retried_turn_runs_again(effects, agent_class):
    """No turn id: nothing identifies the retry. The model's tool-call ids (``agent_class``)
    are new in the retried turn, so they do not either; only the turn guard acts."""
    guard = LlamaIndexGuard(ledger=fresh_ledger())
    await run_turn_then_retry(effects, guard=guard, agent_class=agent_class, turn_id=None)
    assert effects.count == 2


def fresh_ledger():
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    return ToolCallLedger(MemoryBackend(), scope="chat-2")


async def test_limit_reason_reaches_the_model(effects):
    from dupguard.runtime import ToolPolicy, TurnToolGuard

    guard = LlamaIndexGuard(turn_guard=lambda: TurnToolGuard({"send_email": ToolPolicy(max_calls=1)}))
    model = ScriptedModel({"email two": [[call(to="bob")], [call(to="eve")], "stop"]})
    await guard.run(make_agent(model, guard.tools([make_tool(effects)])), "email two")
    assert [c["to"] for c in effects.calls] == ["bob"]
    assert "reached its limit of 1" in model.tool_messages(2)[-1]


async def test_replay_result_mode_returns_the_earlier_output_unchanged(effects):
    guard = LlamaIndexGuard(replay="result")
    model = ScriptedModel({"email bob": [[call(to="bob")], [call(to="bob")], "done"]})
    await guard.run(make_agent(model, guard.tools([make_tool(effects)])), "email bob")
    assert effects.count == 1
    assert model.tool_messages(2) == ["sent email #1 to bob", "sent email #1 to bob"]


def conversation(memory: ChatMemoryBuffer) -> list[tuple[str, str]]:
    return [(m.role.value, m.content or "") for m in memory.get_all()]


def expected_turn(user: str, to: str, n: int) -> list[tuple[str, str]]:
    return [
        ("user", user),
        ("assistant", ""),
        ("tool", f"sent email #{n} to {to}"),
        ("assistant", f"done {to}"),
    ]


CONCURRENT_SCRIPT = {
    "email bob": [[call(to="bob")], "done bob"],
    "email eve": [[call(to="eve")], "done eve"],
}


async def test_wait_mode_serialises_two_runs_on_one_shared_agent(effects):
    guard = LlamaIndexGuard(invocation=InvocationGuard("wait"))
    model = ScriptedModel(CONCURRENT_SCRIPT)
    agent = make_agent(model, guard.tools([make_tool(effects, delay=0.05)]))
    memory = ChatMemoryBuffer.from_defaults()  # the shared conversation state
    results = await asyncio.gather(
        guard.run(agent, "email bob", memory=memory),
        guard.run(agent, "email eve", memory=memory),
    )
    assert [str(r) for r in results] == ["done bob", "done eve"]
    assert conversation(memory) == expected_turn("email bob", "bob", 1) + expected_turn("email eve", "eve", 2)


async def test_throw_mode_fails_the_second_run_fast(effects):
    guard = LlamaIndexGuard(invocation="throw")
    model = ScriptedModel(CONCURRENT_SCRIPT)
    agent = make_agent(model, guard.tools([make_tool(effects, delay=0.05)]))
    memory = ChatMemoryBuffer.from_defaults()
    first = asyncio.ensure_future(guard.run(agent, "email bob", memory=memory))
    await asyncio.sleep(0)  # the first run holds the guard
    with pytest.raises(ConcurrentInvocationError):
        await guard.run(agent, "email eve", memory=memory)
    assert str(await first) == "done bob"
    assert conversation(memory) == expected_turn("email bob", "bob", 1)
    assert effects.count == 1


def test_sync_calls_outside_a_run_share_the_ambient_turn(effects):
    """Called directly (``tool(...)``/``tool.call``), a guarded tool uses the guard's ambient
    turn guard; ``new_round()`` starts a new turn."""

    def lookup(order: int) -> str:
        """Look an order up."""
        return f"order {order}: #{effects.record(order=order)}"

    guard = LlamaIndexGuard()
    (tool,) = guard.tools([lookup])
    assert isinstance(tool, FunctionTool) and tool.metadata.name == "lookup"
    first = tool(order=50)
    again = tool.call(order=50)
    other = tool(order=500)
    assert effects.count == 2
    assert first.content == "order 50: #1" and "identical arguments" in again.content and not again.is_error
    assert again.raw_output == "order 50: #1" and other.content == "order 500: #2"
    guard.new_round()
    assert tool(order=50).content == "order 50: #3"


async def test_without_the_guard_two_runs_on_shared_memory_corrupt_it(effects):
    """Why run() holds a guard: the second run's message lands in the shared memory while the
    first run is still working, so the runs read each other's turns (typically bob's request
    is answered as eve's and eve is emailed twice, seed 000). The exact damage depends on
    scheduling; that the history is not two clean turns does not."""
    agent = make_agent(ScriptedModel(CONCURRENT_SCRIPT), [make_tool(effects, delay=0.05)])
    memory = ChatMemoryBuffer.from_defaults()
    await asyncio.gather(agent.run("email bob", memory=memory), agent.run("email eve", memory=memory))
    history = conversation(memory)
    clean = [expected_turn("email bob", "bob", 1), expected_turn("email eve", "eve", 2)]
    assert history not in (clean[0] + clean[1], clean[1] + clean[0])
    assert sorted(entry for entry in history if entry[0] == "user") == [
        ("user", "email bob"),
        ("user", "email eve"),
    ]


def make_refund(effects) -> FunctionTool:
    async def refund(order: int) -> str:
        """Refund an order (money must leave once)."""
        return f"refund #{effects.record(order=order)}: order {order} refunded"

    return FunctionTool.from_defaults(async_fn=refund)


REFUND = "refund order 7"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("turn_guard", [TurnToolGuard, None], ids=["turn-guard", "ledger-only"])
@pytest.mark.parametrize("agent_class", [False, True], ids=["FunctionAgent", "agent_class"])
async def test_a_turn_retried_after_the_model_failed_refunds_once(effects, agent_class, turn_guard, shape):
    """The refund ran, then the model call after it failed (the request fails); the caller
    retries with the same turn id. The retry's model asks again, under a new tool-call id:
    the refund does not run again, and the model gets the recorded result."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = LlamaIndexGuard(turn_guard=turn_guard, ledger=ToolCallLedger(MemoryBackend(), scope="shop"))
    tools = guard.tools([make_refund(effects)])
    models = [
        ScriptedModel({REFUND: [[call("refund", order=7)], FAIL]}),
        ScriptedModel({REFUND: [[call("refund", order=7)], "refunded"]}),
    ]

    async def attempt(n, turn_id):
        return await guard.run(make_agent_of(guard, agent_class, models[n], tools), REFUND, turn_id=turn_id)

    result, errors = await retry_request(guard, "request-7", attempt, shape=shape)
    assert str(result) == "refunded" and len(errors) == 1 and "returned 500" in str(errors[0])
    assert effects.count == 1
    assert models[0].issued != models[1].issued
    (seen,) = models[1].tool_messages(1)
    assert "already executed" in seen and "refund #1: order 7 refunded" in seen
