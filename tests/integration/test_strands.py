"""Strands adapter against the real ``strands-agents`` ``Agent``.

The model is a minimal ``strands.models.Model`` subclass that streams scripted Converse-style
events (as Strands' own tests' ``MockedModelProvider`` does) and records the messages it is
sent, so the tests assert on what the model actually received. Like a real model API, it
gives every tool use a fresh ``toolUseId`` in every response: a retried invocation never sees
the ids of the first attempt.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
import uuid

import pytest
from adapters_support import SHAPES, require, retry_request

require("strands")

from strands import Agent, tool
from strands.models import Model
from strands.types.exceptions import ConcurrencyException

from dupguard.runtime import (
    ConcurrentInvocationError,
    InvocationGuard,
    ToolPolicy,
    TurnToolGuard,
)
from dupguard.runtime.adapters.strands import StrandsGuard

pytestmark = pytest.mark.timeout(30)


def call(tool: str = "send_email", **kwargs) -> dict:
    """A scripted tool use: the model gives it a fresh ``toolUseId`` each time it sends it."""
    return {"name": tool, "input": kwargs}


class ModelDown(RuntimeError):
    """The model API failed (a 500, a timeout): what ``FAIL`` in a script raises."""


FAIL = "<the model call fails>"


class ScriptedModel(Model):
    """The n-th model call after the last user text gets ``script[text][n]``: a list of tool
    calls, the final text, or ``FAIL``. Keyed by the user text so concurrent invocations stay
    deterministic. ``seen`` records a deep copy of each message list the model was sent,
    ``issued`` the tool-use ids it gave out."""

    def __init__(self, script: dict[str, list]) -> None:
        self.script = script
        self.seen: list[list[dict]] = []
        self.issued: list[str] = []

    def update_config(self, **model_config):
        pass

    def get_config(self):
        return {}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.seen.append(copy.deepcopy(messages))
        last_user = max(
            i for i, m in enumerate(messages) if m["role"] == "user" and any("text" in b for b in m["content"])
        )
        step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        reply = self.script[messages[last_user]["content"][0]["text"]][step]
        await asyncio.sleep(0)
        if reply == FAIL:
            raise ModelDown("the model API returned 500")
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(reply, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": reply}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for c in reply:
            self.issued.append(f"tooluse_{uuid.uuid4().hex[:12]}")
            yield {"contentBlockStart": {"start": {"toolUse": {"name": c["name"], "toolUseId": self.issued[-1]}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(c["input"])}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}

    def tool_results(self, index: int) -> list[dict]:
        """The toolResult blocks of the last user message in the ``index``-th request."""
        last = self.seen[index][-1]
        return [b["toolResult"] for b in last["content"] if "toolResult" in b]


def make_tool(effects, delay: float = 0.02):
    @tool
    async def send_email(to: str) -> str:
        """Send an email (a side effect that must happen once).

        Args:
            to: recipient
        """
        n = effects.record(to=to)
        await asyncio.sleep(delay)
        return f"sent email #{n} to {to}"

    return send_email


def text(result: dict) -> str:
    return "\n".join(b.get("text", "") for b in result["content"])


def run_turn_then_retry(effects, guard, turn_id: str | None = "request-1"):
    """Turn 1 asks for the same call twice; the request is retried with its turn id, and the
    model asks again under a new id, as a real model does."""
    model = ScriptedModel({"email bob": [[call(to="bob"), call(to="bob")], "done"]})
    retry_model = ScriptedModel({"email bob": [[call(to="bob")], "done again"]})
    hooks = [guard] if guard else []
    tools = [make_tool(effects)]
    first = Agent(model=model, tools=tools, hooks=hooks, callback_handler=None)
    # the request is retried (e.g. the client timed out): a new agent for the same session
    retry = Agent(model=retry_model, tools=tools, hooks=hooks, callback_handler=None)
    for agent in (first, retry):
        if guard:
            guard.protect(agent)("email bob", invocation_state={"turn_id": turn_id})
        else:
            agent("email bob")
    assert not set(model.issued) & set(retry_model.issued)
    return model, retry_model


def test_without_adapter_the_side_effect_repeats(effects):
    run_turn_then_retry(effects, None)
    assert effects.count == 3


def test_duplicate_in_turn_and_retried_turn_execute_once(effects):
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    model, retry_model = run_turn_then_retry(
        effects, StrandsGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-1"))
    )
    assert effects.count == 1
    first, second = model.tool_results(1)
    assert first["status"] == "success" and text(first) == "sent email #1 to bob"
    # the duplicate was cancelled before running, and the model got the earlier result
    assert second["status"] == "success" and second["toolUseId"] == model.issued[1]
    assert "identical arguments" in text(second) and "sent email #1 to bob" in text(second)
    (replayed,) = retry_model.tool_results(1)
    assert replayed["toolUseId"] == retry_model.issued[0] and replayed["status"] == "success"
    assert "already executed" in text(replayed) and "sent email #1 to bob" in text(replayed)


def test_without_a_turn_id_a_retried_turn_runs_again(effects):
    """The ``toolUseId`` s are new in the retried invocation: without a turn id nothing
    identifies the retry, and only the turn guard acts (within each invocation)."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    run_turn_then_retry(effects, StrandsGuard(ledger=ToolCallLedger(MemoryBackend(), scope="c")), None)
    assert effects.count == 2


def test_limit_is_a_cancelled_call_with_the_reason(effects):
    guard = StrandsGuard(turn_guard=lambda: TurnToolGuard({"send_email": ToolPolicy(max_calls=1)}))
    model = ScriptedModel({"email two": [[call(to="bob")], [call(to="eve")], "stop"]})
    agent = guard.protect(Agent(model=model, tools=[make_tool(effects)], hooks=[guard], callback_handler=None))
    agent("email two")
    assert [c["to"] for c in effects.calls] == ["bob"]
    (refused,) = model.tool_results(2)
    assert refused["status"] == "error" and "reached its limit of 1" in text(refused)


def test_each_invocation_is_a_new_round(effects):
    guard = StrandsGuard()  # no ledger: a new turn may legitimately repeat a call
    model = ScriptedModel({"email bob": [[call(to="bob")], "ok"], "again": [[call(to="bob")], "ok"]})
    agent = Agent(model=model, tools=[make_tool(effects)], hooks=[guard], callback_handler=None)
    agent("email bob")
    agent("again")
    assert effects.count == 2


CONCURRENT = {
    "email bob": [[call(to="bob")], "done bob"],
    "email eve": [[call(to="eve")], "done eve"],
}


def history(agent) -> list[tuple[str, str]]:
    """The agent's messages, flattened; each tool result must answer the tool use before it."""
    out, last_use = [], None
    for m in agent.messages:
        for b in m["content"]:
            if "text" in b:
                out.append((m["role"], b["text"]))
            elif "toolUse" in b:
                last_use = b["toolUse"]["toolUseId"]
                out.append((m["role"], "call " + b["toolUse"]["name"]))
            elif "toolResult" in b:
                answers = b["toolResult"]["toolUseId"] == last_use
                out.append((m["role"], text(b["toolResult"]) if answers else "<answers another call>"))
    return out


def expected(user: str, to: str, n: int) -> list[tuple[str, str]]:
    return [
        ("user", user),
        ("assistant", "call send_email"),
        ("user", f"sent email #{n} to {to}"),
        ("assistant", f"done {to}"),
    ]


def test_without_protect_strands_refuses_and_the_history_keeps_one_turn(effects):
    agent = Agent(model=ScriptedModel(CONCURRENT), tools=[make_tool(effects, 0.05)], callback_handler=None)

    async def both():
        return await asyncio.gather(
            agent.invoke_async("email bob"), agent.invoke_async("email eve"), return_exceptions=True
        )

    results = asyncio.run(both())
    assert isinstance(results[1], ConcurrencyException)
    assert history(agent) == expected("email bob", "bob", 1)


async def test_wait_mode_serialises_two_invocations_of_one_agent(effects):
    guard = StrandsGuard(invocation=InvocationGuard("wait"))
    agent = guard.protect(
        Agent(
            model=ScriptedModel(CONCURRENT),
            tools=[make_tool(effects, 0.05)],
            hooks=[guard],
            callback_handler=None,
        )
    )
    results = await asyncio.gather(agent.invoke_async("email bob"), agent.invoke_async("email eve"))
    assert [str(r).strip() for r in results] == ["done bob", "done eve"]
    assert history(agent) == expected("email bob", "bob", 1) + expected("email eve", "eve", 2)


def test_wait_mode_serialises_sync_calls_from_two_threads(effects):
    guard = StrandsGuard(invocation="wait")
    agent = guard.protect(
        Agent(
            model=ScriptedModel(CONCURRENT),
            tools=[make_tool(effects, 0.05)],
            hooks=[guard],
            callback_handler=None,
        )
    )
    threads = [threading.Thread(target=agent, args=(prompt,)) for prompt in ("email bob", "email eve")]
    threads[0].start()
    while not guard.invocation.busy:
        time.sleep(0.001)
    threads[1].start()
    for t in threads:
        t.join(10)
    assert history(agent) == expected("email bob", "bob", 1) + expected("email eve", "eve", 2)


async def test_throw_mode_fails_fast_with_the_runtime_error(effects):
    guard = StrandsGuard(invocation="throw")
    agent = guard.protect(
        Agent(
            model=ScriptedModel(CONCURRENT),
            tools=[make_tool(effects, 0.05)],
            hooks=[guard],
            callback_handler=None,
        )
    )
    first = asyncio.ensure_future(agent.invoke_async("email bob"))
    while not guard.invocation.busy:
        await asyncio.sleep(0)
    with pytest.raises(ConcurrentInvocationError):
        await agent.invoke_async("email eve")
    assert str(await first).strip() == "done bob"
    assert history(agent) == expected("email bob", "bob", 1)
    assert effects.count == 1


def test_a_hook_requested_retry_reruns_the_allowed_call(effects):
    """Another hook asks Strands to retry the tool once: the guard lets the retry run (it is
    the same call, not a duplicate) and records only the final attempt."""
    from strands.hooks import AfterToolCallEvent

    class RetryOnce:
        def __init__(self):
            self.retried = False

        def register_hooks(self, registry, **kwargs):
            registry.add_callback(AfterToolCallEvent, self.after)

        def after(self, event):
            if not self.retried:
                self.retried = True
                event.retry = True

    guard = StrandsGuard()
    model = ScriptedModel({"email bob": [[call(to="bob")], [call(to="bob")], "done"]})
    agent = Agent(model=model, tools=[make_tool(effects)], hooks=[guard, RetryOnce()], callback_handler=None)
    agent("email bob")
    assert effects.count == 2  # the first attempt and its retry; r2 is a duplicate of the final one
    (first,) = model.tool_results(1)
    assert text(first) == "sent email #2 to bob"
    (duplicate,) = model.tool_results(2)
    assert "identical arguments" in text(duplicate) and "sent email #2 to bob" in text(duplicate)


def make_refund(effects):
    @tool
    async def refund(order: int) -> str:
        """Refund an order (money must leave once).

        Args:
            order: the order number
        """
        return f"refund #{effects.record(order=order)}: order {order} refunded"

    return refund


REFUND = "refund order 7"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("turn_guard", [TurnToolGuard, None], ids=["turn-guard", "ledger-only"])
async def test_an_invocation_retried_after_the_model_failed_refunds_once(effects, turn_guard, shape):
    """The refund ran, then the model call after it failed (the invocation raises); the
    caller retries with the same turn id, on a new agent. The retry's model asks again under a
    new ``toolUseId``: the refund does not run again, and the model gets the recorded result."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = StrandsGuard(turn_guard=turn_guard, ledger=ToolCallLedger(MemoryBackend(), scope="shop"))
    models = [
        ScriptedModel({REFUND: [[call("refund", order=7)], FAIL]}),
        ScriptedModel({REFUND: [[call("refund", order=7)], "refunded"]}),
    ]

    async def attempt(n, turn_id):
        agent = guard.protect(
            Agent(model=models[n], tools=[make_refund(effects)], hooks=[guard], callback_handler=None)
        )
        return await agent.invoke_async(REFUND, invocation_state={"turn_id": turn_id})

    result, errors = await retry_request(guard, "request-7", attempt, shape=shape)
    assert str(result).strip() == "refunded" and len(errors) == 1 and "returned 500" in str(errors[0])
    assert effects.count == 1
    assert models[0].issued != models[1].issued
    (seen,) = models[1].tool_results(1)
    assert seen["toolUseId"] == models[1].issued[0] and seen["status"] == "success"
    assert "already executed" in text(seen) and "refund #1: order 7 refunded" in text(seen)
