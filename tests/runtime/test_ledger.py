"""``ToolCallLedger``: each tool-call id executes once; a reused id with other arguments is a conflict."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from types import SimpleNamespace

import pytest

from dupguard.runtime import CallDecision, LeaseLost, MemoryBackend, ToolCallIdReused, ToolCallLedger
from dupguard.runtime.ledger import tool_call_parts


def openai_call(call_id: str, name: str, args: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_execute_then_replay(backend):
    ledger = ToolCallLedger(backend, scope="conv-1")
    first = ledger.begin("call_1", "refund", {"order": 500})
    assert isinstance(first, CallDecision) and first.execute and first.fence
    ledger.complete("call_1", {"refunded": 500}, fence=first.fence)
    again = ledger.begin("call_1", "refund", '{"order": 500}')  # the JSON string form: same call
    assert again.replay and not again.execute and again.result == {"refunded": 500}
    # another scope is another conversation: the same id runs there
    assert ToolCallLedger(backend, scope="conv-2").begin("call_1", "refund", {"order": 500}).execute


def test_same_id_with_other_arguments_or_tool_is_a_conflict(backend):
    ledger = ToolCallLedger(backend, scope="conv")
    d = ledger.begin("call_1", "refund", {"order": 500})
    with pytest.raises(ToolCallIdReused):  # while it runs
        ledger.begin("call_1", "refund", {"order": 501})
    ledger.complete("call_1", "ok", fence=d.fence)
    with pytest.raises(ToolCallIdReused) as info:  # and after
        ledger.begin("call_1", "refund", {"order": 501})
    assert info.value.retryable is False
    with pytest.raises(ToolCallIdReused):
        ledger.begin("call_1", "cancel", {"order": 500})


def test_in_progress_release_and_retry(backend):
    ledger = ToolCallLedger(backend, scope="conv", lease=5)
    d = ledger.begin("c", "search", {"q": "x"})
    busy = ledger.begin("c", "search", {"q": "x"})
    assert busy.action == "in_progress" and 0 < busy.retry_after <= 5
    assert ledger.release("c", fence=d.fence) is True  # the tool failed
    retry = ledger.begin("c", "search", {"q": "x"})
    assert retry.execute and retry.fence > d.fence
    with pytest.raises(LeaseLost):  # the first attempt can no longer write
        ledger.complete("c", "stale", fence=d.fence)
    ledger.complete("c", "fresh", fence=retry.fence)
    assert ledger.begin("c", "search", {"q": "x"}).result == "fresh"


def test_pending_accepts_every_tool_call_shape(backend):
    ledger = ToolCallLedger(backend, scope="conv")
    calls = [
        openai_call("call_a", "search", {"q": "x"}),
        SimpleNamespace(
            id="call_b",
            type="function",  # an OpenAI SDK object
            function=SimpleNamespace(name="fetch", arguments='{"url": "u"}'),
        ),
        {"type": "tool_use", "id": "call_c", "name": "calc", "input": {"x": 1}},  # Anthropic
        {"id": "fc_1", "call_id": "call_d", "name": "mail", "arguments": "{}"},  # Responses API
        SimpleNamespace(id="call_e", name="plain", arguments={"k": [1, 2]}),
        openai_call("call_a", "search", {"q": "x"}),  # the same call twice in one message
    ]
    ids = [tool_call_parts(c)[0] for c in calls]
    assert ids == ["call_a", "call_b", "call_c", "call_d", "call_e", "call_a"]
    assert ledger.pending(calls) == calls[:5]

    done = ledger.begin("call_b", "fetch", {"url": "u"})
    ledger.complete("call_b", "page", fence=done.fence)
    running = ledger.begin("call_c", "calc", {"x": 1})
    assert running.execute
    # call_b finished; call_c runs somewhere: not finished, still listed (begin decides)
    assert ledger.pending(calls) == [calls[0], calls[2], calls[3], calls[4]]

    with pytest.raises(ToolCallIdReused):
        ledger.pending([openai_call("call_b", "fetch", {"url": "other"})])
    with pytest.raises(ToolCallIdReused):
        ledger.pending([openai_call("x", "t", {"a": 1}), openai_call("x", "t", {"a": 2})])
    with pytest.raises(TypeError):
        tool_call_parts({"function": {"name": "no id"}})


def test_replayed_message_executes_each_call_once():
    """Seed 001's failure: a retry replays the assistant message with its tool_calls."""
    ledger = ToolCallLedger(MemoryBackend(), scope="run-1")
    message = {
        "role": "assistant",
        "tool_calls": [openai_call("call_1", "charge", {"cents": 500}), openai_call("call_2", "email", {"to": "a@b"})],
    }
    executed = []

    def process(msg: dict) -> list:
        out = []
        for call in ledger.pending(msg["tool_calls"]):
            d = ledger.begin(*tool_call_parts(call))
            if d.execute:
                executed.append(d.call_id)
                ledger.complete(d.call_id, f"{d.name} done", fence=d.fence)
        for call in msg["tool_calls"]:
            out.append(ledger.begin(*tool_call_parts(call)).result)
        return out

    assert process(message) == ["charge done", "email done"]
    assert process(message) == ["charge done", "email done"]  # the retry
    assert executed == ["call_1", "call_2"]


def test_concurrent_workers_execute_a_call_once(backend):
    ledger = ToolCallLedger(backend, scope="conv")
    barrier = threading.Barrier(16)
    decisions: list[CallDecision] = []

    def worker() -> None:
        barrier.wait()
        decisions.append(ledger.begin("call_1", "charge", {"cents": 500}))

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    executing = [d for d in decisions if d.execute]
    assert len(executing) == 1
    assert all(d.action == "in_progress" for d in decisions if not d.execute)
    ledger.complete("call_1", "charged", fence=executing[0].fence)


def test_a_running_call_is_kept_alive_by_its_heartbeat():
    # the ledger uses the same Lease as everything else; the stores' renew is tested per backend
    ledger = ToolCallLedger(MemoryBackend(), scope="conv", lease=0.3)
    d = ledger.begin("slow", "crawl", {})
    time.sleep(0.65)  # more than two leases
    assert ledger.begin("slow", "crawl", {}).action == "in_progress"
    ledger.complete("slow", "crawled", fence=d.fence)
    assert ledger.begin("slow", "crawl", {}).result == "crawled"


def test_async_variants(backend):
    ledger = ToolCallLedger(backend, scope="conv", lease=0.3)
    calls = [openai_call("a", "t", {"i": 1}), openai_call("b", "t", {"i": 2})]

    async def main() -> None:
        assert await ledger.apending(calls) == calls
        d = await ledger.abegin("a", "t", {"i": 1})
        assert d.execute
        await asyncio.sleep(0.65)  # the loop's heartbeat renews it
        assert (await ledger.abegin("a", "t", {"i": 1})).action == "in_progress"
        await ledger.acomplete("a", [1], fence=d.fence)
        assert (await ledger.abegin("a", "t", {"i": 1})).result == [1]
        assert await ledger.apending(calls) == [calls[1]]
        e = await ledger.abegin("b", "t", {"i": 2})
        assert await ledger.arelease("b", fence=e.fence) is True
        # begun from sync code, finished from async code
        f = ledger.begin("c", "t", {})
        await ledger.acomplete("c", "mixed", fence=f.fence)

    asyncio.run(main())
    assert ledger.begin("c", "t", {}).result == "mixed"


def test_scope_is_required():
    with pytest.raises(ValueError):
        ToolCallLedger(scope="")


def _abandon(store, scope: str, call_id: str, ttl: float = 86400):
    """A worker that claimed the call as the ledger does and was killed before ``complete``."""
    from dupguard.runtime.backends import compose_key

    claim = store.claim(compose_key("ledger", scope, call_id), lease=0.2, keep=ttl)
    time.sleep(0.3)
    return claim


def test_a_call_whose_worker_died_under_each_policy(backend):
    from dupguard.runtime import MISSING, OutcomeUnknown

    # at least once (the default): execute again, and say whose call it was
    dead = _abandon(backend, "conv", "rerun")
    decision = ToolCallLedger(backend, scope="conv").begin("rerun", "refund", {"order": 1})
    assert decision.execute and decision.expired_holder == dead.fence

    # at most once: every worker is told, until someone resolves it
    dead = _abandon(backend, "conv", "raise")
    ledger = ToolCallLedger(backend, scope="conv", on_abandoned="raise")
    for _ in range(2):
        with pytest.raises(OutcomeUnknown) as info:
            ledger.begin("raise", "refund", {"order": 1})
        assert info.value.key == "raise" and info.value.fence == dead.fence
    ledger.resolve("raise", "refunded re_1", fence=dead.fence)
    replay = ledger.begin("raise", "refund", {"order": 1})
    assert replay.replay and replay.result == "refunded re_1"
    dead = _abandon(backend, "conv", "released")
    with pytest.raises(OutcomeUnknown):
        ledger.begin("released", "refund", {"order": 1})
    assert ledger.release("released", fence=dead.fence) is True
    assert ledger.begin("released", "refund", {"order": 1}).execute

    # reconcile: what the tool's own system says is the result; MISSING: execute
    refunds = {"found": "re_9"}
    asked = []

    def reconcile(call_id):
        asked.append(call_id)
        return refunds.get(call_id, MISSING)

    ledger = ToolCallLedger(backend, scope="conv", on_abandoned=reconcile)
    _abandon(backend, "conv", "found")
    _abandon(backend, "conv", "missing")
    found = ledger.begin("found", "refund", {"order": 9})
    assert found.replay and found.result == "re_9"
    assert ledger.begin("found", "refund", {"order": 9}).result == "re_9"
    missing = ledger.begin("missing", "refund", {"order": 2})
    assert missing.execute and missing.expired_holder is not None
    ledger.complete("missing", "re_2", fence=missing.fence)
    assert ledger.begin("never", "refund", {"order": 3}).execute and asked == ["found", "missing"]

    async def areconcile(call_id):
        await asyncio.sleep(0)
        return refunds.get(call_id, MISSING)

    refunds["async"] = "re_a"
    _abandon(backend, "conv", "async")
    decision = asyncio.run(ToolCallLedger(backend, scope="conv", on_abandoned=areconcile).abegin("async", "refund"))
    assert decision.replay and decision.result == "re_a"
