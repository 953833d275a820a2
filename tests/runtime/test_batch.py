"""run_batch / ToolBatch / TurnClock: request order, stale turns, orphans (issue 4, item 6)."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from types import SimpleNamespace

import pytest

from dupguard.runtime import StaleBatchError, ToolBatch, ToolCallIdReused, ToolResult, TurnClock, run_batch
from dupguard.runtime.batch import parse_call

pytestmark = pytest.mark.timeout(30)


def openai_call(n, name="tool", **args):
    return {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


@pytest.mark.parametrize("seed", range(5))
def test_results_in_request_order_whatever_the_completion_order(seed):
    rng = random.Random(seed)
    delays = [rng.uniform(0, 0.03) for _ in range(12)]
    completion = []

    async def execute(call):
        await asyncio.sleep(delays[call.arguments["i"]])
        completion.append(call.id)
        return {"i": call.arguments["i"]}

    clock = TurnClock("s")
    clock.advance()
    calls = [openai_call(i, i=i) for i in range(12)]
    results = asyncio.run(run_batch(calls, execute, clock=clock))
    assert [r.call_id for r in results] == [f"call_{i}" for i in range(12)]
    assert [r.value for r in results] == [{"i": i} for i in range(12)]
    assert all(isinstance(r, ToolResult) and r.ok for r in results)
    # the tools really finished out of order (12 random delays: in order with p = 1/12!)
    assert sorted(completion) == sorted(r.call_id for r in results)
    assert completion != [f"call_{i}" for i in range(12)]


def test_sync_execute_runs_in_threads_and_keeps_order():
    threads = set()
    all_running = threading.Barrier(4)  # passes only if the four calls run at the same time
    finished = []

    def execute(call):
        threads.add(threading.get_ident())
        all_running.wait(timeout=10)
        time.sleep(0.01 * (4 - call.arguments["i"]))  # later calls finish first
        finished.append(call.arguments["i"])
        return call.arguments["i"] * 2

    results = asyncio.run(run_batch([openai_call(i, i=i) for i in range(4)], execute, clock=TurnClock("s")))
    assert [r.value for r in results] == [0, 2, 4, 6] and all(r.ok for r in results)
    assert threading.get_ident() not in threads and len(threads) == 4
    assert sorted(finished) == [0, 1, 2, 3]


def test_call_shapes_and_errors_are_results():
    calls = [
        {"id": "a", "name": "echo", "arguments": {"x": 1}},
        SimpleNamespace(id="b", function=SimpleNamespace(name="echo", arguments='{"x": 2}')),
        {"type": "tool_use", "id": "c", "name": "echo", "input": {"x": 3}},
        {"call_id": "d", "name": "echo", "arguments": "{not json"},
        {"id": "e", "name": "boom", "arguments": ""},
    ]
    seen = []

    async def execute(call):
        seen.append(call.id)
        if call.name == "boom":
            raise RuntimeError("tool failed")
        return call.arguments["x"]

    results = asyncio.run(run_batch(calls, execute, clock=TurnClock("s")))
    assert [r.call_id for r in results] == ["a", "b", "c", "d", "e"]
    assert [r.value for r in results[:3]] == [1, 2, 3]
    assert isinstance(results[3].error, ValueError) and "not valid JSON" in str(results[3].error)
    assert isinstance(results[4].error, RuntimeError)
    assert results[4].to_message() == {
        "role": "tool",
        "tool_call_id": "e",
        "content": "Error: RuntimeError: tool failed",
    }
    assert results[0].to_message()["content"] == "1"
    assert "d" not in seen  # invalid arguments never reach the tool


def test_responses_api_items_answer_to_call_id():
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "echo", "arguments": "{}"}
    assert parse_call(item).id == "call_1"  # function_call_output must reference call_id


def test_parse_call_rejects_calls_without_id_or_name():
    with pytest.raises(ValueError):
        parse_call({"name": "x"})
    with pytest.raises(ValueError):
        parse_call({"id": "x", "function": {"arguments": "{}"}})


def test_repeated_call_id_runs_once_and_conflicting_reuse_raises():
    runs = []

    async def execute(call):
        runs.append(call.id)
        return "ok"

    same = openai_call(1, x=1)
    results = asyncio.run(run_batch([same, openai_call(2), same], execute, clock=TurnClock("s")))
    assert [r.call_id for r in results] == ["call_1", "call_2", "call_1"]
    assert sorted(runs) == ["call_1", "call_2"]
    with pytest.raises(ToolCallIdReused):
        ToolBatch([openai_call(1, x=1), openai_call(1, x=2)], clock=TurnClock("s"))


def test_commit_from_an_older_turn_raises_stale_batch_error():
    clock = TurnClock("conv-1")
    clock.advance()

    async def execute(call):
        if call.name == "slow":
            await asyncio.sleep(0.05)
        return call.name

    async def main():
        calls = [openai_call(1, "slow"), openai_call(2, "fast")]
        task = asyncio.ensure_future(run_batch(calls, execute, clock=clock))
        await asyncio.sleep(0.01)
        clock.advance()  # the loop moved on to a newer turn while the tools ran
        return await task

    with pytest.raises(StaleBatchError) as info:
        asyncio.run(main())
    assert "turn 1" in str(info.value) and "turn 2" in str(info.value)
    orphans = clock.orphans()
    assert sorted((o.call_id, o.why, o.turn) for o in orphans) == [
        ("call_1", "stale", 1),
        ("call_2", "stale", 1),
    ]


def test_manual_batch_stale_commit():
    clock = TurnClock("x")
    batch = clock.batch([openai_call(1)])
    batch.deliver("call_1", "v")
    clock.advance()
    with pytest.raises(StaleBatchError):
        batch.commit()
    with pytest.raises(RuntimeError):
        batch.commit()  # closed either way


def test_late_results_go_to_the_orphan_buffer_not_the_returned_list():
    clock = TurnClock("s")
    clock.advance()
    finished = threading.Event()

    async def execute(call):
        if call.name == "slow":
            await asyncio.sleep(0.2)
            finished.set()
            return "LATE VALUE"
        return "fast value"

    async def main():
        calls = [openai_call(1, "slow"), openai_call(2, "fast")]
        results = await run_batch(calls, execute, clock=clock, timeout=0.05)
        assert clock.orphans() == []  # not yet arrived
        await asyncio.sleep(0.3)  # let the slow tool finish in the background
        return results

    results = asyncio.run(main())
    assert finished.is_set()
    assert results[0].call_id == "call_1" and isinstance(results[0].error, TimeoutError)
    assert results[1].value == "fast value"
    assert all("LATE VALUE" != r.value for r in results)
    (orphan,) = clock.orphans()
    got = (orphan.call_id, orphan.name, orphan.value, orphan.why, orphan.turn)
    assert got == ("call_1", "slow", "LATE VALUE", "late", 1)
    assert clock.drain_orphans() == [orphan] and clock.orphans() == []


def test_late_sync_tool_result_from_a_thread_is_orphaned():
    clock = TurnClock("s")
    done = threading.Event()

    def execute(call):
        time.sleep(0.15)
        done.set()
        return "late"

    results = asyncio.run(run_batch([openai_call(1)], execute, clock=clock, timeout=0.02))
    assert isinstance(results[0].error, TimeoutError)
    assert done.wait(5)
    deadline = time.monotonic() + 2
    while not clock.orphans() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert [(o.call_id, o.value, o.why) for o in clock.orphans()] == [("call_1", "late", "late")]


def test_orphan_buffer_is_bounded_and_counts_drops():
    clock = TurnClock("s", max_orphans=3)
    batch = clock.batch([openai_call(1)])
    batch.commit()
    for i in range(5):
        assert batch.deliver("call_1", i) is False
    assert [o.value for o in clock.orphans()] == [2, 3, 4]
    assert clock.orphans_dropped == 2


def test_deliver_from_threads_unknown_and_duplicate_results():
    clock = TurnClock("s")
    batch = clock.batch([openai_call(i) for i in range(20)])
    order = list(range(20))
    random.Random(3).shuffle(order)
    threads = [threading.Thread(target=batch.deliver, args=(f"call_{i}", i)) for i in order]
    for t in threads:
        t.start()
    assert batch.wait(5)
    for t in threads:
        t.join()
    assert batch.deliver("call_3", "second") is False
    assert batch.deliver("nope", 1) is False
    results = batch.commit()
    assert [r.value for r in results] == list(range(20))
    assert [(o.call_id, o.why) for o in clock.orphans()] == [("call_3", "duplicate"), ("nope", "unknown")]


def test_await_all_from_another_loop_and_empty_batch():
    clock = TurnClock("s")
    batch = clock.batch([openai_call(1), openai_call(2)])

    async def waiter():
        return await batch.await_all(timeout=5)

    threading.Timer(0.02, batch.deliver, args=("call_1", 1)).start()
    threading.Timer(0.04, batch.deliver, args=("call_2", 2)).start()
    assert asyncio.run(waiter()) is True
    assert asyncio.run(run_batch([], lambda c: None, clock=clock)) == []


def test_cancelled_run_batch_orphans_whatever_arrives_later():
    clock = TurnClock("s")

    async def execute(call):
        await asyncio.sleep(0.05)
        return "after cancel"

    async def main():
        task = asyncio.ensure_future(run_batch([openai_call(1)], execute, clock=clock))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.1)

    asyncio.run(main())
    # "late" when the tool finished after the cancellation was handled, "abandoned" when it
    # delivered first (a loaded machine may run it before run_batch sees the cancellation)
    assert [(o.value, o.why in ("late", "abandoned")) for o in clock.orphans()] == [("after cancel", True)]
