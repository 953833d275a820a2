"""AutoGen AgentChat adapter against the real ``autogen-agentchat`` ``AssistantAgent``.

The model is AutoGen's own ``ReplayChatCompletionClient`` (``autogen-ext``), which records
the messages of every ``create`` call, so the tests assert on the
``FunctionExecutionResult`` s the model actually received. Like a real model API, it gives
every function call a fresh id in every response: a retried run never sees the ids of the
first attempt.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid

import pytest
from adapters_support import SHAPES, require, retry_request

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


def fc(tool: str = "send_email", **kwargs) -> FunctionCall:
    """A scripted function call; the client gives it a fresh id each time it sends it."""
    return FunctionCall(id="(issued by the model)", name=tool, arguments=json.dumps(kwargs))


def calls(*uses: FunctionCall) -> CreateResult:
    """A model response asking for the function calls ``uses``."""
    return CreateResult(
        finish_reason="function_calls",
        cached=False,
        usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
        content=list(uses),
    )


class ModelDown(RuntimeError):
    """The model API failed (a 500, a timeout): what ``FAIL`` in a script raises."""


FAIL = "<the model call fails>"


class ScriptedClient(ReplayChatCompletionClient):
    """AutoGen's replay client, answering like a real API: each response's function calls
    get fresh ids (``issued`` lists them), and a scripted ``FAIL`` raises ``ModelDown``."""

    def __init__(self, responses: list) -> None:
        super().__init__(responses, model_info=INFO)
        self.issued: list[str] = []

    async def create(self, messages, **kwargs) -> CreateResult:
        if self._current_index < len(self.chat_completions) and self.chat_completions[self._current_index] == FAIL:
            self._current_index += 1
            self._create_calls.append({"messages": messages, **kwargs})
            raise ModelDown("the model API returned 500")
        result = await super().create(messages, **kwargs)
        if isinstance(result.content, list):
            fresh = []
            for use in result.content:
                self.issued.append(f"call_{uuid.uuid4().hex[:12]}")
                fresh.append(dataclasses.replace(use, id=self.issued[-1]))
            result = result.model_copy(update={"content": fresh})
        return result


def client(*responses) -> ScriptedClient:
    return ScriptedClient(list(responses))


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


async def turn_then_retry(effects, guard, turn_id: str | None = "request-1"):
    """One turn asks for the same call twice; the request is retried with its turn id, and
    the model asks again under a new id, as a real model does."""
    first = client(calls(fc(to="bob"), fc(to="bob")), "done")
    retry = client(calls(fc(to="bob")), "done again")
    tools = [make_tool(effects)]
    if guard:
        tools = guard.tools(tools)
    for model in (first, retry):
        agent = make_agent(model, tools)
        if guard:
            await guard.run(guard.protect(agent), task="email bob", turn_id=turn_id)
        else:
            await agent.run(task="email bob")
    assert not set(first.issued) & set(retry.issued)
    return first, retry


async def test_without_adapter_the_side_effect_repeats(effects):
    await turn_then_retry(effects, None)
    assert effects.count == 3


async def test_duplicate_in_turn_and_retried_turn_execute_once(effects):
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    first, retry = await turn_then_retry(effects, AutoGenGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-1")))
    assert effects.count == 1
    one, two = results_seen(first, 1)
    assert (one.call_id, one.content, one.is_error) == (first.issued[0], "sent email #1 to bob", False)
    assert two.call_id == first.issued[1] and not two.is_error
    assert "identical arguments" in two.content and "sent email #1 to bob" in two.content
    (replayed,) = results_seen(retry, 1)
    assert replayed.call_id == retry.issued[0]
    assert "already executed" in replayed.content and "sent email #1 to bob" in replayed.content


async def test_without_a_turn_id_a_retried_turn_runs_again(effects):
    """The model's call ids are new in the retried run: without a turn id nothing identifies
    the retry, and only the turn guard acts (within each run)."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    await turn_then_retry(effects, AutoGenGuard(ledger=ToolCallLedger(MemoryBackend(), scope="c")), None)
    assert effects.count == 2


async def test_without_a_turn_id_the_call_id_dedupes_a_replayed_message(effects):
    """What the model's id is still good for: the *same* assistant message executed again
    (its ``tool_calls`` replayed from a stored history, without asking the model) carries the
    same ids, so its call runs once; a new id is a new call."""
    from autogen_core import CancellationToken

    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = AutoGenGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-r"))
    (tool,) = guard.tools([make_tool(effects, delay=0)])
    results = []
    for call_id in ("call_a", "call_a", "call_b"):
        guard.new_round()  # each execution in a turn of its own: only the ledger can tell
        results.append(await tool.run_json({"to": "bob"}, CancellationToken(), call_id=call_id))
    assert effects.count == 2
    assert results[0] == "sent email #1 to bob" and "already executed" in results[1]
    assert results[2] == "sent email #2 to bob"


async def test_limit_reason_reaches_the_model(effects):
    guard = AutoGenGuard(turn_guard=lambda: TurnToolGuard({"send_email": ToolPolicy(max_calls=1)}))
    model = client(calls(fc(to="bob"), fc(to="eve")), "stop")
    await guard.protect(make_agent(model, guard.tools([make_tool(effects)]))).run(task="email two")
    assert [c["to"] for c in effects.calls] == ["bob"]
    refused = next(r for r in results_seen(model, 1) if r.call_id == model.issued[1])
    assert "reached its limit of 1" in refused.content


async def test_plain_functions_are_wrapped_too(effects):
    async def send_email(to: str) -> str:
        """Send an email."""
        effects.record(to=to)
        return "sent"

    guard = AutoGenGuard()
    (wrapped,) = guard.tools([send_email])
    assert wrapped.name == "send_email" and wrapped.schema["parameters"]["required"] == ["to"]
    model = client(calls(fc(to="bob"), fc(to="bob")), "ok")
    await guard.protect(make_agent(model, [wrapped])).run(task="go")
    assert effects.count == 1


async def context(agent) -> list[tuple[str, str]]:
    """The agent's model context (its conversation state), flattened; each function result
    must answer the call just before it."""
    state = await agent.save_state()
    out, last_call = [], None
    for m in state["llm_context"]["messages"]:
        content = m["content"]
        if m["type"] == "UserMessage":
            out.append(("user", content))
        elif m["type"] == "AssistantMessage" and isinstance(content, str):
            out.append(("assistant", content))
        elif m["type"] == "AssistantMessage":
            last_call = content[0]["id"]
            out.append(("assistant", "call " + content[0]["name"]))
        else:
            answers = content[0]["call_id"] == last_call
            out.append(("result", content[0]["content"] if answers else "<answers another call>"))
    return out


def expected(user: str, to: str, n: int) -> list[tuple[str, str]]:
    return [
        ("user", user),
        ("assistant", "call send_email"),
        ("result", f"sent email #{n} to {to}"),
        ("assistant", f"done {to}"),
    ]


async def test_wait_mode_serialises_two_runs_on_one_agent(effects):
    guard = AutoGenGuard(invocation=InvocationGuard("wait"))
    model = client(calls(fc(to="bob")), "done bob", calls(fc(to="eve")), "done eve")
    agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, 0.05)])))
    results = await asyncio.gather(agent.run(task="email bob"), agent.run(task="email eve"))
    assert [r.messages[-1].content for r in results] == ["done bob", "done eve"]
    assert await context(agent) == expected("email bob", "bob", 1) + expected("email eve", "eve", 2)


async def test_run_stream_is_guarded_too(effects):
    guard = AutoGenGuard(invocation="wait")
    model = client(calls(fc(to="bob")), "done bob", calls(fc(to="eve")), "done eve")
    agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, 0.05)])))

    async def drain(task):
        return [m async for m in agent.run_stream(task=task)]

    await asyncio.gather(drain("email bob"), drain("email eve"))
    assert await context(agent) == expected("email bob", "bob", 1) + expected("email eve", "eve", 2)


async def test_throw_mode_fails_the_second_run_fast(effects):
    guard = AutoGenGuard(invocation="throw")
    model = client(calls(fc(to="bob")), "done bob", calls(fc(to="eve")), "done eve")
    agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, 0.05)])))
    first = asyncio.ensure_future(agent.run(task="email bob"))
    while not guard.invocation.busy:
        await asyncio.sleep(0)
    with pytest.raises(ConcurrentInvocationError):
        await agent.run(task="email eve")
    assert (await first).messages[-1].content == "done bob"
    assert await context(agent) == expected("email bob", "bob", 1)
    assert effects.count == 1


async def test_failing_tool_is_not_hammered_in_a_turn_but_may_run_again_when_retried(effects):
    """A failure is committed to the turn (an identical retry gets the same error) and the
    ledger key is released (a retried turn may try again)."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    async def send_email(to: str) -> str:
        """Send an email."""
        effects.record(to=to)
        raise ConnectionError("smtp down")

    guard = AutoGenGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-f"))
    tools = guard.tools([send_email])
    model = client(calls(fc(to="bob")), calls(fc(to="bob")), "gave up")
    agent = guard.protect(
        AssistantAgent("a", model_client=model, tools=tools, reflect_on_tool_use=True, max_tool_iterations=2)
    )
    await guard.run(agent, task="email bob", turn_id="request-f")
    assert effects.count == 1
    (second,) = results_seen(model, 2)
    assert second.call_id == model.issued[1]
    assert "smtp down" in second.content and "identical arguments" in second.content
    retry = client(calls(fc(to="bob")), "gave up again")
    await guard.run(guard.protect(make_agent(retry, tools)), task="email bob", turn_id="request-f")
    assert effects.count == 2


async def test_two_workers_handling_the_same_message_run_its_tool_call_once(effects):
    """Seed 001, cause 2: two workers pick up the same job at once (no lease on the queue).
    Each has its own agent and guard, and asks the model, which gives each worker's call its
    own id; they share the ledger store and scope, and key the turn by the job's id: the call
    runs once, the second worker waits for it and gets the recorded result."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    store = MemoryBackend()  # stands for the shared SQLite/Redis store
    models, runs = [], []
    for _ in range(2):
        guard = AutoGenGuard(ledger=ToolCallLedger(store, scope="job-7"))
        model = client(calls(fc(to="bob")), "done")
        models.append(model)
        agent = guard.protect(make_agent(model, guard.tools([make_tool(effects, delay=0.1)])))
        runs.append(guard.run(agent, task="email bob", turn_id="job-7"))
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
    model = client(calls(fc(to="bob")), "done bob", calls(fc(to="eve")), "done eve")
    agent = make_agent(model, [make_tool(effects, 0.05)])
    await asyncio.gather(agent.run(task="email bob"), agent.run(task="email eve"), return_exceptions=True)
    flat = await context(agent)
    serial = [expected("email bob", "bob", 1), expected("email eve", "eve", 1)]
    assert flat not in (serial[0] + serial[1], serial[1] + serial[0])
    assert sorted(entry for entry in flat if entry[0] == "user") == [
        ("user", "email bob"),
        ("user", "email eve"),
    ]


def make_refund(effects) -> FunctionTool:
    async def refund(order: int) -> str:
        """Refund an order (money must leave once)."""
        return f"refund #{effects.record(order=order)}: order {order} refunded"

    return FunctionTool(refund, description="Refund an order.")


REFUND = "refund order 7"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("turn_guard", [TurnToolGuard, None], ids=["turn-guard", "ledger-only"])
async def test_a_run_retried_after_the_model_failed_refunds_once(effects, turn_guard, shape):
    """The refund ran, then the model call after it failed (the run raises); the caller
    retries with the same turn id, on a new agent. The retry's model asks again under a new
    id: the refund does not run again, and the model gets the recorded result."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = AutoGenGuard(turn_guard=turn_guard, ledger=ToolCallLedger(MemoryBackend(), scope="shop"))
    tools = guard.tools([make_refund(effects)])
    models = [client(calls(fc("refund", order=7)), FAIL), client(calls(fc("refund", order=7)), "refunded")]

    async def attempt(n, turn_id):
        return await guard.run(guard.protect(make_agent(models[n], tools)), task=REFUND, turn_id=turn_id)

    result, errors = await retry_request(guard, "request-7", attempt, shape=shape)
    assert result.messages[-1].content == "refunded" and len(errors) == 1 and "returned 500" in str(errors[0])
    assert effects.count == 1
    assert models[0].issued != models[1].issued
    (seen,) = results_seen(models[1], 1)
    assert seen.call_id == models[1].issued[0] and not seen.is_error
    assert "already executed" in seen.content and "refund #1: order 7 refunded" in seen.content
