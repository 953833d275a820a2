"""InvocationGuard: throw / wait / dedupe / unsafe, across threads and event loops (issue 4, item 4)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dupguard.runtime import ConcurrentInvocationError, InvocationGuard
from dupguard.runtime.guard import GuardTimeout, NotOwnerError

pytestmark = pytest.mark.timeout(30)


def blocked_on(future):
    """How many threads are blocked in ``future.result()`` (CPython's Future keeps them on a
    Condition). Lets a test wait until followers have really joined, instead of sleeping."""
    return len(future._condition._waiters)


def wait_until(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.001)


class Agent:
    """A stand-in for a stateful agent: each invocation appends to its history."""

    def __init__(self, guard):
        self.guard = guard
        self.history = []

    def __call__(self, msg, hold_until=None):
        with self.guard.hold(msg):
            self.history.append(("start", msg))
            if hold_until is not None:
                assert hold_until.wait(5)
            self.history.append(("end", msg))


# -- throw -------------------------------------------------------------------------------------


def test_throw_from_threads_raises_before_any_state_change():
    guard = InvocationGuard("throw", name="agent")
    agent = Agent(guard)
    release = threading.Event()
    first = threading.Thread(target=agent, args=("first", release))
    first.start()
    wait_until(lambda: guard.busy)
    owner_before = guard.owner

    errors = []

    def second():
        try:
            agent("second")
        except ConcurrentInvocationError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=second) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # every concurrent caller failed fast; the agent's state and the guard's are untouched
    assert len(errors) == 4 and all(e.retryable for e in errors)
    assert "agent" in str(errors[0]) and "already processing" in str(errors[0])
    assert agent.history == [("start", "first")]
    assert guard.owner is owner_before and guard.waiting == 0
    release.set()
    first.join()
    assert agent.history == [("start", "first"), ("end", "first")]
    assert not guard.busy
    agent("third")  # usable again afterwards (the seed's "all subsequent calls fail" bug)
    assert agent.history[-1] == ("end", "third")


def test_throw_from_three_event_loops_in_three_threads():
    guard = InvocationGuard("throw")
    state = []
    barrier = threading.Barrier(3)
    failures = []
    failed_twice = threading.Event()
    lock = threading.Lock()

    async def invoke(i):
        barrier.wait()  # all three loops try at the same moment
        try:
            async with guard.ahold(i):
                state.append(i)  # "modify agent state"
                # hold on until both others have been turned away
                await asyncio.to_thread(failed_twice.wait, 5)
                state.append(i)
        except ConcurrentInvocationError:
            with lock:
                failures.append(i)
                if len(failures) == 2:
                    failed_twice.set()

    loops_seen = set()

    def thread_main(i):
        async def main():
            loops_seen.add(id(asyncio.get_running_loop()))
            await invoke(i)

        asyncio.run(main())

    threads = [threading.Thread(target=thread_main, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loops_seen) == 3
    assert len(failures) == 2
    (winner,) = set(range(3)) - set(failures)
    assert state == [winner, winner]  # losers changed nothing
    assert not guard.busy


def test_throw_guarded_async_method_rejects_gather_before_starting():
    guard = InvocationGuard("throw")
    started = []

    class Bot:
        @guard.guarded
        async def achat(self, msg):
            started.append(msg)
            await asyncio.sleep(0.05)
            return msg.upper()

    async def main():
        bot = Bot()
        return await asyncio.gather(bot.achat("a"), bot.achat("b"), return_exceptions=True)

    results = asyncio.run(main())
    assert results[0] == "A"
    assert isinstance(results[1], ConcurrentInvocationError)
    assert started == ["a"]


def test_throw_guarded_async_generator_holds_until_exhausted():
    guard = InvocationGuard("throw")

    @guard.guarded
    async def stream(n):
        for i in range(n):
            await asyncio.sleep(0)
            yield i

    async def main():
        gen = stream(3)
        first = await gen.__anext__()
        with pytest.raises(ConcurrentInvocationError):
            async for _ in stream(1):
                pass
        rest = [x async for x in gen]
        again = [x async for x in stream(2)]
        return first, rest, again

    assert asyncio.run(main()) == (0, [1, 2], [0, 1])


# -- tickets -----------------------------------------------------------------------------------


def test_only_the_owning_ticket_can_release():
    guard = InvocationGuard("wait")
    mine = guard.acquire("a")
    assert mine.owns
    other_guard_ticket = InvocationGuard("wait").acquire()
    with pytest.raises(NotOwnerError):
        guard.release(other_guard_ticket)

    # a waiter's ticket (not yet owner) cannot release either
    got = []
    t = threading.Thread(target=lambda: got.append(guard.acquire("b")))
    t.start()
    wait_until(lambda: guard.waiting == 1)
    waiting_ticket = guard._waiters[0][0]
    with pytest.raises(NotOwnerError):
        guard.release(waiting_ticket)
    assert guard.owner is mine

    mine.release()
    t.join()
    assert guard.owner is got[0] and got[0].token == "b"
    with pytest.raises(NotOwnerError):  # a second release by the former owner
        mine.release()
    assert guard.owner is got[0]
    got[0].release()
    assert not guard.busy


def test_hold_tolerates_explicit_release_inside_block():
    guard = InvocationGuard("wait")
    with guard.hold() as ticket:
        ticket.release()
        other = guard.acquire()
    assert guard.owner is other  # the block's exit did not release someone else's hold
    other.release()


# -- wait ------------------------------------------------------------------------------------


def test_wait_serves_threads_in_fifo_order():
    guard = InvocationGuard("wait")
    order = []
    first = guard.acquire("holder")
    n = 8

    def worker(i):
        with guard.hold(i):
            order.append(i)

    threads = []
    for i in range(n):
        t = threading.Thread(target=worker, args=(i,))
        t.start()
        threads.append(t)
        wait_until(lambda: guard.waiting == i + 1)  # i is now queued behind everyone before it
    guard.release(first)
    for t in threads:
        t.join()
    assert order == list(range(n))
    assert not guard.busy


def test_wait_fifo_across_event_loops_and_threads_mixed():
    guard = InvocationGuard("wait")
    order = []
    holder = guard.acquire()

    def async_worker(i):
        async def main():
            async with guard.ahold(i):
                order.append(i)
                await asyncio.sleep(0.001)

        asyncio.run(main())

    def sync_worker(i):
        with guard.hold(i):
            order.append(i)

    threads = []
    for i in range(6):
        t = threading.Thread(target=async_worker if i % 2 else sync_worker, args=(i,))
        t.start()
        threads.append(t)
        wait_until(lambda: guard.waiting == i + 1)
    holder.release()
    for t in threads:
        t.join()
    assert order == list(range(6))


def test_wait_mode_excludes_mutually_under_contention():
    guard = InvocationGuard("wait")
    inside = 0
    max_inside = 0
    counter = {"n": 0}
    lock = threading.Lock()

    def worker():
        nonlocal inside, max_inside
        for _ in range(200):
            with guard.hold():
                with lock:
                    inside += 1
                    max_inside = max(max_inside, inside)
                value = counter["n"]
                time.sleep(0)
                counter["n"] = value + 1
                with lock:
                    inside -= 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter["n"] == 800 and max_inside == 1


def test_sync_hold_from_executor_threads_of_a_running_loop():
    guard = InvocationGuard("wait")
    order = []

    def blocking_tool(i):
        with guard.hold(i):
            order.append(("in", i))
            time.sleep(0.01)
            order.append(("out", i))

    async def main():
        loop = asyncio.get_running_loop()
        async with guard.ahold("loop"):
            futs = [loop.run_in_executor(None, blocking_tool, i) for i in range(3)]
            await asyncio.to_thread(wait_until, lambda: guard.waiting == 3)
            order.append(("loop", None))
        await asyncio.gather(*futs)

    asyncio.run(main())
    assert order[0] == ("loop", None)
    # never interleaved
    for k in range(1, len(order), 2):
        assert order[k][0] == "in" and order[k + 1] == ("out", order[k][1])


def test_sync_wait_inside_event_loop_thread_is_refused_not_deadlocked():
    guard = InvocationGuard("wait")

    async def main():
        holder = await asyncio.ensure_future(guard.aacquire("another task"))
        with pytest.raises(RuntimeError, match="ahold"):
            guard.acquire()
        assert guard.waiting == 0
        holder.release()
        with guard.hold():  # a free guard can be taken from sync code in the loop thread
            pass

    asyncio.run(main())


def test_reentrant_wait_is_refused():
    guard = InvocationGuard("wait")
    with guard.hold(), pytest.raises(RuntimeError, match="re-entrant"):
        guard.acquire()


def test_wait_timeout_leaves_queue_clean():
    guard = InvocationGuard("wait")
    holder = guard.acquire()
    errors = []

    def waiter():
        try:
            guard.acquire(timeout=0.05)
        except GuardTimeout as exc:
            errors.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], TimeoutError) and errors[0].retryable
    assert guard.waiting == 0
    holder.release()
    assert not guard.busy


def test_cancelled_async_waiter_does_not_swallow_the_guard():
    guard = InvocationGuard("wait")

    async def main():
        holder = await guard.aacquire("holder")
        cancelled = asyncio.ensure_future(guard.aacquire("cancelled"))
        later = asyncio.ensure_future(guard.aacquire("later"))
        while guard.waiting < 2:
            await asyncio.sleep(0)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        guard.release(holder)
        ticket = await asyncio.wait_for(later, 2)
        assert ticket.token == "later" and guard.owner is ticket
        ticket.release()
        assert guard.waiting == 0 and not guard.busy

    asyncio.run(main())


def test_async_timeout():
    guard = InvocationGuard("wait")

    async def main():
        holder = await guard.aacquire()
        with pytest.raises(RuntimeError, match="re-entrant"):  # same task again
            await guard.aacquire(timeout=0.02)
        with pytest.raises(GuardTimeout):
            await asyncio.ensure_future(guard.aacquire(timeout=0.02))
        assert guard.waiting == 0
        holder.release()

    asyncio.run(main())


# -- dedupe ------------------------------------------------------------------------------------


def test_dedupe_same_token_shares_the_running_result_across_threads():
    guard = InvocationGuard("dedupe")
    runs = []
    gate = threading.Event()

    @guard.guarded(token=lambda order_id: order_id)
    def refund(order_id):
        runs.append(order_id)
        assert gate.wait(5)
        return {"refunded": order_id, "run": len(runs)}

    results = []
    threads = [threading.Thread(target=lambda: results.append(refund("o-1"))) for _ in range(5)]
    threads[0].start()
    wait_until(lambda: runs == ["o-1"])
    for t in threads[1:]:
        t.start()
    shared = guard._inflight["o-1"]
    wait_until(lambda: blocked_on(shared) == 4)  # all four followers joined the running call
    gate.set()
    for t in threads:
        t.join()
    assert runs == ["o-1"]
    assert len(results) == 5 and all(r is results[0] for r in results)  # the same object
    # a call after completion runs again: in-flight dedup, not a cache
    assert refund("o-1")["run"] == 2


def test_dedupe_other_tokens_wait_and_errors_are_shared():
    guard = InvocationGuard("dedupe")
    runs = []

    @guard.guarded
    async def lookup(key):
        runs.append(key)
        await asyncio.sleep(0.03)
        if key == "bad":
            raise KeyError(key)
        return key * 2

    async def main():
        return await asyncio.gather(
            lookup("a"), lookup("a"), lookup("b"), lookup("bad"), lookup("bad"), return_exceptions=True
        )

    results = asyncio.run(main())
    assert results[:3] == ["aa", "aa", "bb"]
    assert isinstance(results[3], KeyError) and results[3] is results[4]
    assert runs == ["a", "b", "bad"]  # serialised in arrival order, each token once


def test_dedupe_followers_from_other_event_loops():
    guard = InvocationGuard("dedupe")
    runs = []
    started = threading.Event()

    async def slow():
        runs.append(1)
        started.set()
        await asyncio.sleep(0.1)
        return object()

    results = []

    def follower():
        results.append(asyncio.run(guard.arun("same", slow)))

    leader = threading.Thread(target=follower)
    leader.start()
    assert started.wait(5)
    shared = guard._inflight["same"]
    others = [threading.Thread(target=follower) for _ in range(2)]
    for t in others:
        t.start()
    # each async follower hangs one callback (asyncio.wrap_future) on the shared future
    wait_until(lambda: len(shared._done_callbacks) == 2 or shared.done())
    for t in [leader, *others]:
        t.join()
    assert runs == [1] and len(results) == 3 and results[0] is results[1] is results[2]


def test_dedupe_generator_is_rejected():
    with pytest.raises(TypeError):

        @InvocationGuard("dedupe").guarded
        def gen():
            yield 1


# -- unsafe and misc ---------------------------------------------------------------------------


def test_unsafe_mode_does_not_guard():
    guard = InvocationGuard("unsafe")
    inside = []
    gate = threading.Event()

    def work():
        with guard.hold():
            inside.append(1)
            gate.wait(5)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    wait_until(lambda: len(inside) == 3)  # all three inside at once
    gate.set()
    for t in threads:
        t.join()
    assert not guard.busy


def test_bad_mode():
    with pytest.raises(ValueError):
        InvocationGuard("sometimes")


def test_guarded_sync_generator_and_exception_releases():
    guard = InvocationGuard("throw")

    @guard.guarded
    def gen():
        yield 1
        raise ValueError("boom")

    with pytest.raises(ValueError):
        list(gen())
    assert not guard.busy

    @guard.guarded
    def fails():
        raise OSError("x")

    with pytest.raises(OSError):
        fails()
    assert not guard.busy


def test_dedupe_cancelled_follower_does_not_cancel_the_shared_result():
    guard = InvocationGuard("dedupe")

    async def slow():
        await asyncio.sleep(0.05)
        return "value"

    async def main():
        leader = asyncio.ensure_future(guard.arun("k", slow))
        await asyncio.sleep(0)
        quitter = asyncio.ensure_future(guard.arun("k", slow))
        stayer = asyncio.ensure_future(guard.arun("k", slow))
        await asyncio.sleep(0.01)
        quitter.cancel()
        return await leader, await stayer, await asyncio.gather(quitter, return_exceptions=True)

    leader, stayer, (quitter,) = asyncio.run(main())
    assert leader == stayer == "value"
    assert isinstance(quitter, asyncio.CancelledError)
    assert guard._inflight == {} and not guard.busy
