"""Strands adapter against the real ``strands-agents`` ``Agent``.

The model is a minimal ``strands.models.Model`` subclass that streams scripted Converse-style
events (as Strands' own tests' ``MockedModelProvider`` does) and records the messages it is
sent, so the tests assert on what the model actually received.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time

import pytest
from adapters_support import require

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


def call(tool_use_id: str, **kwargs) -> dict:
    return {"name": "send_email", "toolUseId": tool_use_id, "input": kwargs}


class ScriptedModel(Model):
    """The n-th model call after the last user text gets ``script[text][n]``: a list of tool
    calls or the final text. Keyed by the user text so concurrent invocations stay
    deterministic. ``seen`` records a deep copy of each message list the model was sent."""

    def __init__(self, script: dict[str, list]) -> None:
        self.script = script
        self.seen: list[list[dict]] = []

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
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(reply, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": reply}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for c in reply:
            yield {"contentBlockStart": {"start": {"toolUse": {"name": c["name"], "toolUseId": c["toolUseId"]}}}}
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


SCRIPT = {"email bob": [[call("t1", to="bob"), call("t2", to="bob")], "done", [call("t1", to="bob")], "done again"]}


def run_turn_then_retry(effects, guard):
    """Turn 1 asks for the same call twice (two ids); the retried turn replays id t1."""
    model = ScriptedModel({"email bob": SCRIPT["email bob"][:2]})
    retry_model = ScriptedModel({"email bob": SCRIPT["email bob"][2:]})
    hooks = [guard] if guard else []
    tools = [make_tool(effects)]
    first = Agent(model=model, tools=tools, hooks=hooks, callback_handler=None)
    first("email bob")
    # the request is retried (e.g. the client timed out): a new agent for the same session
    retry = Agent(model=retry_model, tools=tools, hooks=hooks, callback_handler=None)
    retry("email bob")
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
    assert second["status"] == "success" and second["toolUseId"] == "t2"
    assert "identical arguments" in text(second) and "sent email #1 to bob" in text(second)
    (replayed,) = retry_model.tool_results(1)
    assert replayed["toolUseId"] == "t1" and replayed["status"] == "success"
    assert "already executed" in text(replayed) and "sent email #1 to bob" in text(replayed)


def test_limit_is_a_cancelled_call_with_the_reason(effects):
    guard = StrandsGuard(turn_guard=lambda: TurnToolGuard({"send_email": ToolPolicy(max_calls=1)}))
    model = ScriptedModel({"email two": [[call("a", to="bob")], [call("b", to="eve")], "stop"]})
    agent = guard.protect(Agent(model=model, tools=[make_tool(effects)], hooks=[guard], callback_handler=None))
    agent("email two")
    assert [c["to"] for c in effects.calls] == ["bob"]
    (refused,) = model.tool_results(2)
    assert refused["status"] == "error" and "reached its limit of 1" in text(refused)


def test_each_invocation_is_a_new_round(effects):
    guard = StrandsGuard()  # no ledger: a new turn may legitimately repeat a call
    model = ScriptedModel({"email bob": [[call("x", to="bob")], "ok"], "again": [[call("y", to="bob")], "ok"]})
    agent = Agent(model=model, tools=[make_tool(effects)], hooks=[guard], callback_handler=None)
    agent("email bob")
    agent("again")
    assert effects.count == 2


CONCURRENT = {
    "email bob": [[call("b1", to="bob")], "done bob"],
    "email eve": [[call("e1", to="eve")], "done eve"],
}


def history(agent) -> list[tuple[str, str]]:
    out = []
    for m in agent.messages:
        for b in m["content"]:
            if "text" in b:
                out.append((m["role"], b["text"]))
            elif "toolUse" in b:
                out.append((m["role"], "call " + b["toolUse"]["toolUseId"]))
            elif "toolResult" in b:
                out.append((m["role"], text(b["toolResult"])))
    return out


def expected(user: str, call_id: str, to: str, n: int) -> list[tuple[str, str]]:
    return [
        ("user", user),
        ("assistant", "call " + call_id),
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
    assert history(agent) == expected("email bob", "b1", "bob", 1)


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
    assert history(agent) == expected("email bob", "b1", "bob", 1) + expected("email eve", "e1", "eve", 2)


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
    assert history(agent) == expected("email bob", "b1", "bob", 1) + expected("email eve", "e1", "eve", 2)


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
    assert history(agent) == expected("email bob", "b1", "bob", 1)
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
    model = ScriptedModel({"email bob": [[call("r1", to="bob")], [call("r2", to="bob")], "done"]})
    agent = Agent(model=model, tools=[make_tool(effects)], hooks=[guard, RetryOnce()], callback_handler=None)
    agent("email bob")
    assert effects.count == 2  # the first attempt and its retry; r2 is a duplicate of the final one
    (first,) = model.tool_results(1)
    assert text(first) == "sent email #2 to bob"
    (duplicate,) = model.tool_results(2)
    assert "identical arguments" in text(duplicate) and "sent email #2 to bob" in text(duplicate)
