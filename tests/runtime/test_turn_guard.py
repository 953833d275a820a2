"""TurnToolGuard: exact replay, limits, lexical dedup with guards (issue 4, item 5)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading

import pytest

from dupguard.runtime import Reservation, ToolLimitExceeded, ToolPolicy, TurnToolGuard
from dupguard.runtime.turn_guard import canonical_args

pytestmark = pytest.mark.timeout(30)


def run(guard, name, args, result):
    r = guard.reserve(name, args)
    if r.allowed:
        r.commit(result)
    return r


# -- exact ------------------------------------------------------------------------------------


def test_exact_duplicate_replays_the_earlier_result():
    guard = TurnToolGuard()
    first = run(guard, "get_weather", {"city": "Paris", "unit": "C"}, {"temp": 21})
    assert first.allowed and first.kind == "new"
    again = guard.reserve("get_weather", {"unit": "C", "city": "Paris"})  # other key order
    assert not again.allowed and again.kind == "exact"
    assert again.previous == {"temp": 21} and again.result() == {"temp": 21}
    assert "already called" in again.reason and "get_weather" in again.reason
    assert guard.calls("get_weather") == 1 and guard.calls() == 1  # replays are free
    assert guard.reserve("get_weather", {"city": "Lyon", "unit": "C"}).allowed


def test_canonical_json_is_nested_and_parses_json_strings():
    a = {"filter": {"b": [1, {"y": 2, "x": 1}], "a": None}, "q": "x"}
    b = '{"q": "x", "filter": {"a": null, "b": [1, {"x": 1, "y": 2}]}}'
    assert canonical_args(a) == canonical_args(b)
    assert canonical_args({"a": [1, 2]}) != canonical_args({"a": [2, 1]})  # lists keep order
    guard = TurnToolGuard()
    run(guard, "search_db", a, "rows")
    assert guard.reserve("search_db", b).kind == "exact"


def test_same_args_different_tool_is_not_a_duplicate():
    guard = TurnToolGuard()
    run(guard, "read_file", {"path": "a.txt"}, "A")
    assert guard.reserve("delete_file", {"path": "a.txt"}).allowed


def test_dedupe_exact_can_be_disabled_per_tool():
    guard = TurnToolGuard({"now": ToolPolicy(dedupe_exact=False, max_calls=None)})
    for _ in range(3):
        assert run(guard, "now", {}, "12:00").allowed


def test_new_round_forgets_results_and_counts():
    guard = TurnToolGuard({"search": ToolPolicy(max_calls=1)})
    run(guard, "search", {"query": "x"}, "r")
    assert guard.reserve("search", {"query": "y"}).kind == "tool_limit"
    assert guard.new_round() == 1
    assert guard.reserve("search", {"query": "x"}).allowed


# -- limits ---------------------------------------------------------------------------------


def test_per_tool_limit_with_model_facing_reason():
    guard = TurnToolGuard({"composio_execute": ToolPolicy(max_calls=2)})
    assert run(guard, "composio_execute", {"a": 1}, 1).allowed
    assert run(guard, "composio_execute", {"a": 2}, 2).allowed
    third = guard.reserve("composio_execute", {"a": 3})
    assert not third.allowed and third.kind == "tool_limit"
    assert "composio_execute" in third.reason and "limit of 2" in third.reason
    with pytest.raises(RuntimeError):
        third.commit("x")  # a refused reservation cannot record anything
    # replays of earlier calls are still answered after the limit
    assert guard.reserve("composio_execute", {"a": 1}).previous == 1
    # other tools are not affected by this tool's limit
    assert guard.reserve("other", {}).allowed


def test_default_policy_limit_is_three():
    guard = TurnToolGuard()
    kinds = [run(guard, "t", {"i": i}, i).kind for i in range(4)]
    assert kinds == ["new", "new", "new", "tool_limit"]


def test_per_turn_limit_and_strict_exception():
    guard = TurnToolGuard(default=ToolPolicy(max_calls=None), max_total_calls=3)
    for i in range(3):
        assert run(guard, f"tool{i}", {}, i).allowed
    refused = guard.reserve("tool9", {})
    assert refused.kind == "turn_limit" and "3 tool calls" in refused.reason
    with pytest.raises(ToolLimitExceeded) as info:
        guard.reserve("tool9", {}, strict=True)
    assert "3 tool calls" in str(info.value) and not info.value.retryable


def test_cancel_returns_the_slot_and_allows_an_identical_retry():
    guard = TurnToolGuard({"t": ToolPolicy(max_calls=1)})
    r = guard.reserve("t", {"x": 1})
    r.cancel()
    assert guard.calls("t") == 0
    r2 = guard.reserve("t", {"x": 1})
    assert r2.allowed
    with pytest.raises(RuntimeError):
        r.commit(1)  # already cancelled
    r2.commit("ok")
    with pytest.raises(RuntimeError):
        r2.commit("again")


def test_reservation_context_manager_cancels_on_error():
    guard = TurnToolGuard()
    with pytest.raises(OSError), guard.reserve("fetch", {"u": 1}):
        raise OSError("network")
    assert guard.calls("fetch") == 0 and guard.reserve("fetch", {"u": 1}).allowed


# -- semantic (lexical) ------------------------------------------------------------------------

SEARCH = {"search_knowledge": ToolPolicy(read_only=True, max_calls=5)}


def test_similar_read_only_queries_are_deduped():
    guard = TurnToolGuard(SEARCH)
    run(guard, "search_knowledge", {"query": "fix the login bug"}, ["doc1"])
    for q in ("Fix login bug", "fix the login bug!", "login bug fix", "fix the logn bug"):
        r = guard.reserve("search_knowledge", {"query": q})
        assert not r.allowed and r.kind == "semantic", q
        assert r.previous == ["doc1"] and "similar query" in r.reason
    assert guard.calls("search_knowledge") == 1


def test_semantic_never_when_numbers_or_ids_differ():
    guard = TurnToolGuard({"lookup": ToolPolicy(read_only=True, max_calls=None)})
    run(guard, "lookup", {"query": "refund order 50"}, "order 50")
    r = guard.reserve("lookup", {"query": "refund order 500"})
    assert r.allowed and r.kind == "new"
    r.commit("order 500")
    assert guard.reserve("lookup", {"query": "user u_81f3 profile"}).allowed
    assert guard.reserve("lookup", {"query": "user u_81f4 profile"}).allowed


def test_semantic_never_when_destructive_verbs_differ():
    guard = TurnToolGuard({"admin_search": ToolPolicy(read_only=True)})
    run(guard, "admin_search", {"query": "delete user"}, "a")
    assert guard.reserve("admin_search", {"query": "deactivate user"}).allowed


def test_semantic_never_for_non_read_only_tools():
    guard = TurnToolGuard({"send_email": ToolPolicy(read_only=False, max_calls=5)})
    run(guard, "send_email", {"query": "send the report to bob"}, "sent")
    r = guard.reserve("send_email", {"query": "send report to bob"})
    assert r.allowed and r.kind == "new"


def test_semantic_needs_the_other_arguments_equal():
    guard = TurnToolGuard(SEARCH)
    run(guard, "search_knowledge", {"query": "fix the bug", "limit": 5}, "few")
    assert guard.reserve("search_knowledge", {"query": "fix bug", "limit": 50}).allowed
    assert guard.reserve("search_knowledge", {"query": "fix bug", "limit": 5}).kind == "semantic"


def test_semantic_query_arg_from_policy():
    guard = TurnToolGuard({"kb": ToolPolicy(read_only=True, query_arg="terms")})
    run(guard, "kb", {"terms": "python asyncio tutorial"}, "x")
    assert guard.reserve("kb", {"terms": "asyncio python tutorials"}).kind == "semantic"
    # without a query argument there is nothing to compare: only exact dedup applies
    guard2 = TurnToolGuard({"kb": ToolPolicy(read_only=True, query_arg="terms")})
    run(guard2, "kb", {"q": "python asyncio tutorial"}, "x")
    assert guard2.reserve("kb", {"q": "asyncio python tutorials"}).allowed


def test_narrower_query_is_not_a_duplicate():
    guard = TurnToolGuard(SEARCH)
    run(guard, "search_knowledge", {"query": "orders"}, "all")
    assert guard.reserve("search_knowledge", {"query": "orders cancelled last week"}).allowed


# -- in flight and threads ---------------------------------------------------------------------


def test_in_flight_duplicate_waits_for_the_first_result():
    guard = TurnToolGuard(SEARCH)
    first = guard.reserve("search_knowledge", {"query": "fix the bug"})
    dup = guard.reserve("search_knowledge", {"query": "fix the bug"})
    similar_dup = guard.reserve("search_knowledge", {"query": "fix bug"})
    assert dup.kind == similar_dup.kind == "in_flight" and not dup.allowed
    assert "already running" in dup.reason
    with pytest.raises(concurrent.futures.TimeoutError):
        dup.result(timeout=0.01)
    threading.Timer(0.02, first.commit, args=(["doc"],)).start()
    assert dup.result(timeout=5) == ["doc"]

    async def from_a_loop():
        return await similar_dup.aresult()

    assert asyncio.run(from_a_loop()) == ["doc"]


def test_in_flight_duplicate_of_a_cancelled_call():
    guard = TurnToolGuard()
    first = guard.reserve("t", {})
    dup = guard.reserve("t", {})
    first.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        dup.result(timeout=1)


def test_thread_safety_one_execution_per_identical_call():
    guard = TurnToolGuard(default=ToolPolicy(max_calls=None), max_total_calls=None)
    executions = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def tool(x):
        with lock:
            executions.append(x)
        return x * 10

    results = []

    def worker():
        barrier.wait()
        for i in range(50):
            results.append(guard.execute("tool", {"x": i}, tool))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(executions) == list(range(50))  # each distinct call ran once
    assert sorted(results) == sorted([i * 10 for i in range(50)] * 8)


def test_execute_and_aexecute_return_what_the_model_should_see():
    guard = TurnToolGuard({"add": ToolPolicy(max_calls=2)})
    calls = []

    def add(a, b):
        calls.append((a, b))
        return a + b

    assert guard.execute("add", '{"a": 1, "b": 2}', add) == 3
    assert guard.execute("add", {"b": 2, "a": 1}, add) == 3  # replayed
    assert guard.execute("add", {"a": 2, "b": 2}, add) == 4
    assert "limit of 2" in guard.execute("add", {"a": 3, "b": 2}, add)
    assert calls == [(1, 2), (2, 2)]

    async def amul(a, b):
        await asyncio.sleep(0.01)
        return a * b

    async def main():
        g = TurnToolGuard()
        return await asyncio.gather(*(g.aexecute("mul", {"a": 3, "b": 4}, amul) for _ in range(3)))

    assert asyncio.run(main()) == [12, 12, 12]


def test_reservation_is_the_public_type():
    r = TurnToolGuard().reserve("x", {})
    assert isinstance(r, Reservation) and json.dumps(r.kind) == '"new"'


def test_policy_validation():
    with pytest.raises(ValueError):
        ToolPolicy(max_calls=-1)
    with pytest.raises(ValueError):
        ToolPolicy(similarity_threshold=0)
    with pytest.raises(ValueError):
        TurnToolGuard(max_total_calls=-1)


def test_cancelled_in_flight_waiter_does_not_break_the_original():
    guard = TurnToolGuard()
    first = guard.reserve("t", {"a": 1})
    dup_a = guard.reserve("t", {"a": 1})
    dup_b = guard.reserve("t", {"a": 1})

    async def main():
        quitter = asyncio.ensure_future(dup_a.aresult())
        stayer = asyncio.ensure_future(dup_b.aresult())
        await asyncio.sleep(0.01)
        quitter.cancel()
        await asyncio.sleep(0)
        first.commit("result")  # must not fail because a waiter gave up
        return await stayer

    assert asyncio.run(main()) == "result"
    assert guard.reserve("t", {"a": 1}).previous == "result"
