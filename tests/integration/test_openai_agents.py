"""OpenAI Agents SDK adapter against the real ``openai-agents`` ``Runner``.

The model is a minimal ``agents.models.interface.Model`` implementation (as the SDK's own
tests' ``FakeModel``) that answers from a script and records every input it receives, so the
tests assert on the ``function_call_output`` items the model actually got. Like the real
Responses API, it gives every function call a fresh ``call_id`` in every response: a retried
run never sees the ids of the first attempt. Tracing is disabled: nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid

import pytest
from adapters_support import SHAPES, require, retry_request

require("agents")

from agents import (
    Agent,
    FunctionTool,
    Runner,
    SQLiteSession,
    function_tool,
    set_tracing_disabled,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from dupguard.runtime import (
    ConcurrentInvocationError,
    InvocationGuard,
    ToolPolicy,
    TurnToolGuard,
)
from dupguard.runtime.adapters.openai_agents import OpenAIAgentsGuard

pytestmark = pytest.mark.timeout(30)
set_tracing_disabled(True)


def call(tool: str = "send_email", **kwargs) -> tuple[str, dict]:
    """A scripted function call: the model gives it a fresh ``call_id`` each time it sends it."""
    return (tool, kwargs)


class ModelDown(RuntimeError):
    """The model API failed (a 500, a timeout): what ``FAIL`` in a script raises."""


FAIL = "<the model call fails>"


def message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class ScriptedModel(Model):
    """The n-th model call after the last user input item gets ``script[text][n]`` (function
    calls, the final text, or ``FAIL``). Keyed by the user text so concurrent runs stay
    deterministic; ``seen`` records each input, ``issued`` the call ids it gave out."""

    def __init__(self, script: dict[str, list]) -> None:
        self.script = script
        self.seen: list[list] = []
        self.issued: list[str] = []

    async def get_response(
        self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
    ):
        items = [input] if isinstance(input, str) else copy.deepcopy(list(input))
        self.seen.append(items)
        users = [i for i, item in enumerate(items) if isinstance(item, str) or item.get("role") == "user"]
        last = users[-1]
        user_text = items[last] if isinstance(items[last], str) else items[last]["content"]
        # one step per earlier model response in this turn: a run of consecutive function_call items
        tail = [item if isinstance(item, dict) else {} for item in items[last + 1 :]]
        step = sum(
            1
            for i, item in enumerate(tail)
            if item.get("type") == "function_call" and (i == 0 or tail[i - 1].get("type") != "function_call")
        )
        reply = self.script[user_text][step]
        await asyncio.sleep(0)
        if reply == FAIL:
            raise ModelDown("the model API returned 500")
        output = [message(reply)] if isinstance(reply, str) else [self._function_call(*c) for c in reply]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def _function_call(self, tool: str, kwargs: dict) -> ResponseFunctionToolCall:
        self.issued.append(f"call_{uuid.uuid4().hex[:12]}")
        return ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{self.issued[-1]}",
            call_id=self.issued[-1],
            name=tool,
            arguments=json.dumps(kwargs),
            status="completed",
        )

    async def stream_response(self, *args, **kwargs):
        """The scripted response as one ``response.completed`` event (what the SDK needs)."""
        response = await self.get_response(*args, **kwargs)
        yield ResponseCompletedEvent(
            type="response.completed",
            sequence_number=0,
            response=Response(
                id="resp",
                created_at=0,
                model="scripted",
                object="response",
                output=response.output,
                tool_choice="auto",
                tools=[],
                parallel_tool_calls=True,
            ),
        )

    def outputs(self, index: int) -> list[dict]:
        """The ``function_call_output`` items in the ``index``-th model input."""
        return [
            item for item in self.seen[index] if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]


def make_tool(effects, delay: float = 0.02) -> FunctionTool:
    @function_tool
    async def send_email(to: str) -> str:
        """Send an email (a side effect that must happen once)."""
        n = effects.record(to=to)
        await asyncio.sleep(delay)
        return f"sent email #{n} to {to}"

    return send_email


FIRST = {"email bob": [[call(to="bob"), call(to="bob")], "done"]}
RETRY = {"email bob": [[call(to="bob")], "done again"]}


async def turn_then_retry(effects, guard, turn_id: str | None = "request-1"):
    """One run asking for the same call twice, then the same request retried with its turn
    id; the model gives the retry's call a new id, as the real API does."""
    model, retry_model = ScriptedModel(FIRST), ScriptedModel(RETRY)
    tools = [make_tool(effects)]
    if guard:
        tools = guard.tools(tools)
    for m in (model, retry_model):
        agent = Agent(name="assistant", model=m, tools=tools)
        if guard:
            await guard.run(agent, "email bob", turn_id=turn_id)
        else:
            await Runner.run(agent, "email bob")
    assert not set(model.issued) & set(retry_model.issued)
    return model, retry_model


async def test_without_adapter_the_side_effect_repeats(effects):
    await turn_then_retry(effects, None)
    assert effects.count == 3


async def test_duplicate_in_run_and_retried_run_execute_once(effects):
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    model, retry_model = await turn_then_retry(
        effects, OpenAIAgentsGuard(ledger=ToolCallLedger(MemoryBackend(), scope="chat-1"))
    )
    assert effects.count == 1
    first, second = model.outputs(1)
    assert (first["call_id"], first["output"]) == (model.issued[0], "sent email #1 to bob")
    assert second["call_id"] == model.issued[1]
    assert "identical arguments" in second["output"] and "sent email #1 to bob" in second["output"]
    (replayed,) = retry_model.outputs(1)
    assert replayed["call_id"] == retry_model.issued[0]
    assert "already executed" in replayed["output"] and "sent email #1 to bob" in replayed["output"]


async def test_without_a_turn_id_a_retried_run_runs_again(effects):
    """The model's call ids are new in the retried run: without a turn id nothing identifies
    the retry, and only the turn guard acts (within each run)."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    await turn_then_retry(effects, OpenAIAgentsGuard(ledger=ToolCallLedger(MemoryBackend(), scope="c")), None)
    assert effects.count == 2


async def test_limit_reason_reaches_the_model(effects):
    guard = OpenAIAgentsGuard(turn_guard=lambda: TurnToolGuard({"send_email": ToolPolicy(max_calls=1)}))
    model = ScriptedModel({"email two": [[call(to="bob")], [call(to="eve")], "stop"]})
    await guard.run(Agent(name="a", model=model, tools=guard.tools([make_tool(effects)])), "email two")
    assert [c["to"] for c in effects.calls] == ["bob"]
    assert "reached its limit of 1" in model.outputs(2)[-1]["output"]


CONCURRENT = {
    "email bob": [[call(to="bob")], "done bob"],
    "email eve": [[call(to="eve")], "done eve"],
}


async def history(session) -> list[tuple[str, str]]:
    """The session's items, flattened; each output must answer the call just before it."""
    out, last_call = [], None
    for item in await session.get_items():
        kind = item.get("type") or "message"
        if kind == "function_call":
            last_call = item["call_id"]
            out.append(("call", item["name"]))
        elif kind == "function_call_output":
            out.append(("output", item["output"] if item["call_id"] == last_call else "<answers another call>"))
        elif item.get("role") == "user":
            out.append(("user", item["content"]))
        else:
            out.append(("assistant", item["content"][0]["text"]))
    return out


def expected(user: str, to: str, n: int) -> list[tuple[str, str]]:
    return [
        ("user", user),
        ("call", "send_email"),
        ("output", f"sent email #{n} to {to}"),
        ("assistant", f"done {to}"),
    ]


async def test_wait_mode_serialises_two_runs_on_one_session(effects):
    guard = OpenAIAgentsGuard(invocation=InvocationGuard("wait"))
    agent = Agent(name="a", model=ScriptedModel(CONCURRENT), tools=guard.tools([make_tool(effects, 0.05)]))
    session = SQLiteSession("shared")
    results = await asyncio.gather(
        guard.run(agent, "email bob", session=session), guard.run(agent, "email eve", session=session)
    )
    assert [r.final_output for r in results] == ["done bob", "done eve"]
    assert await history(session) == expected("email bob", "bob", 1) + expected("email eve", "eve", 2)


async def test_throw_mode_fails_the_second_run_fast(effects):
    guard = OpenAIAgentsGuard(invocation="throw")
    agent = Agent(name="a", model=ScriptedModel(CONCURRENT), tools=guard.tools([make_tool(effects, 0.05)]))
    session = SQLiteSession("shared")
    first = asyncio.ensure_future(guard.run(agent, "email bob", session=session))
    while not guard.invocation.busy:
        await asyncio.sleep(0)
    with pytest.raises(ConcurrentInvocationError):
        await guard.run(agent, "email eve", session=session)
    assert (await first).final_output == "done bob"
    assert await history(session) == expected("email bob", "bob", 1)


async def test_stream_holds_the_guard_until_the_stream_ends(effects):
    guard = OpenAIAgentsGuard(invocation="throw")
    agent = Agent(name="a", model=ScriptedModel(CONCURRENT), tools=guard.tools([make_tool(effects)]))
    events = []
    async for event in guard.stream(agent, "email bob"):
        events.append(event)
        assert guard.invocation.busy
    assert not guard.invocation.busy and effects.count == 1 and events


async def test_concurrent_sessions_sharing_the_tools_keep_separate_turns(effects):
    """Tools are built once and shared; each run's turn guard is its own, so the same call in
    two sessions' concurrent runs is not mistaken for a duplicate."""
    guard = OpenAIAgentsGuard()  # no invocation guard: different sessions may run at once
    script = {"email bob": [[call(to="bob")], "done bob"]}
    tools = guard.tools([make_tool(effects, 0.05)])
    runs = [
        guard.run(
            Agent(name="a", model=ScriptedModel(script), tools=tools),
            "email bob",
            session=SQLiteSession(f"user-{i}"),
        )
        for i in range(2)
    ]
    results = await asyncio.gather(*runs)
    assert [r.final_output for r in results] == ["done bob", "done bob"]
    assert effects.count == 2


def test_run_sync_from_two_threads_is_serialised(effects):
    """The sync entry point: each thread runs its own event loop; the guard orders them."""
    import threading

    guard = OpenAIAgentsGuard(invocation="wait")
    agent = Agent(name="a", model=ScriptedModel(CONCURRENT), tools=guard.tools([make_tool(effects, 0.05)]))
    session = SQLiteSession("shared-sync")
    threads = [
        threading.Thread(target=guard.run_sync, args=(agent, prompt), kwargs={"session": session})
        for prompt in ("email bob", "email eve")
    ]
    threads[0].start()
    while not guard.invocation.busy:
        time.sleep(0.001)
    threads[1].start()
    for t in threads:
        t.join(20)
    assert asyncio.run(history(session)) == expected("email bob", "bob", 1) + expected("email eve", "eve", 2)


async def test_without_the_guard_two_runs_interleave_the_session(effects):
    """Why run() holds a guard: two runs on one session interleave their items."""
    # a long tool call: the session's writes run in worker threads, keep the overlap certain
    agent = Agent(name="a", model=ScriptedModel(CONCURRENT), tools=[make_tool(effects, 0.3)])
    session = SQLiteSession("unguarded")
    await asyncio.gather(
        Runner.run(agent, "email bob", session=session), Runner.run(agent, "email eve", session=session)
    )
    items = await history(session)
    serial = [expected("email bob", "bob", 1), expected("email eve", "eve", 2)]
    assert items not in (serial[0] + serial[1], serial[1] + serial[0])
    assert sorted(entry for entry in items if entry[0] == "user") == [
        ("user", "email bob"),
        ("user", "email eve"),
    ]


def make_refund(effects) -> FunctionTool:
    @function_tool
    async def refund(order: int) -> str:
        """Refund an order (money must leave once)."""
        return f"refund #{effects.record(order=order)}: order {order} refunded"

    return refund


REFUND = "refund order 7"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("turn_guard", [TurnToolGuard, None], ids=["turn-guard", "ledger-only"])
async def test_a_run_retried_after_the_model_failed_refunds_once(effects, turn_guard, shape):
    """The refund ran, then the model call after it failed (the run raises); the caller
    retries with the same turn id. The retry's model asks again under a new ``call_id``: the
    refund does not run again, and the model gets the recorded result."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = OpenAIAgentsGuard(turn_guard=turn_guard, ledger=ToolCallLedger(MemoryBackend(), scope="shop"))
    tools = guard.tools([make_refund(effects)])
    models = [
        ScriptedModel({REFUND: [[call("refund", order=7)], FAIL]}),
        ScriptedModel({REFUND: [[call("refund", order=7)], "refunded"]}),
    ]

    async def attempt(n, turn_id):
        return await guard.run(Agent(name="shop", model=models[n], tools=tools), REFUND, turn_id=turn_id)

    result, errors = await retry_request(guard, "request-7", attempt, shape=shape)
    assert result.final_output == "refunded" and len(errors) == 1 and "returned 500" in str(errors[0])
    assert effects.count == 1
    assert models[0].issued != models[1].issued
    (seen,) = models[1].outputs(1)
    assert seen["call_id"] == models[1].issued[0]
    assert "already executed" in seen["output"] and "refund #1: order 7 refunded" in seen["output"]


async def test_a_run_after_a_completed_run_in_the_same_turn_is_new_work(effects):
    """Only a run that follows a *failed* run in the turn restarts the occurrence count (it is
    a retry); after a completed run, a further run in the same turn is new work. A tool whose
    identical calls legitimately differ (``dedupe_exact=False``: polling a job) runs in each,
    and a retry of the whole request then replays both, in order."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    @function_tool
    async def job_status(job: int) -> str:
        """Poll a job (each call may answer differently)."""
        return f"job {job}: poll #{effects.record(job=job)}"

    guard = OpenAIAgentsGuard(
        turn_guard=lambda: TurnToolGuard({"job_status": ToolPolicy(dedupe_exact=False)}),
        ledger=ToolCallLedger(MemoryBackend(), scope="jobs"),
    )
    tools = guard.tools([job_status])
    script = {"poll job 3": [[call("job_status", job=3)], "polled"]}
    models = [ScriptedModel(script) for _ in range(4)]
    for request in (models[:2], models[2:]):  # the request, then the same request retried
        async with guard.turn("request-3"):
            for model in request:
                await guard.run(Agent(name="poller", model=model, tools=tools), "poll job 3")
    assert effects.count == 2
    assert [m.outputs(1)[0]["output"] for m in models[:2]] == ["job 3: poll #1", "job 3: poll #2"]
    replayed = [m.outputs(1)[0]["output"] for m in models[2:]]
    assert "already executed" in replayed[0] and replayed[0].endswith("job 3: poll #1")
    assert "already executed" in replayed[1] and replayed[1].endswith("job 3: poll #2")


async def test_a_retry_loop_calling_the_runner_directly_marks_attempts_with_guard_attempt(effects):
    """Inside one turn, a retry loop that calls ``Runner.run`` itself (not ``guard.run``)
    marks each attempt with ``guard.attempt()``: the retry maps to the failed attempt's keys."""
    from dupguard.runtime import MemoryBackend, ToolCallLedger

    guard = OpenAIAgentsGuard(turn_guard=None, ledger=ToolCallLedger(MemoryBackend(), scope="shop"))
    tools = guard.tools([make_refund(effects)])
    models = [
        ScriptedModel({REFUND: [[call("refund", order=7)], FAIL]}),
        ScriptedModel({REFUND: [[call("refund", order=7)], "refunded"]}),
    ]

    async def attempt(n, turn_id):
        async with guard.attempt():
            return await Runner.run(Agent(name="shop", model=models[n], tools=tools), REFUND)

    result, errors = await retry_request(guard, "request-7", attempt, shape=SHAPES[1])
    assert result.final_output == "refunded" and len(errors) == 1
    assert effects.count == 1
    assert "already executed" in models[1].outputs(1)[0]["output"]
