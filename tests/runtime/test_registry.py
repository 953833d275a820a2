"""SessionRegistry: one object per session, serialised use, LRU bound, idle expiry."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dupguard.runtime import SessionRegistry

pytestmark = pytest.mark.timeout(30)


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Memory:
    def __init__(self, sid):
        self.sid = sid
        self.messages = []


def test_concurrent_first_access_builds_exactly_one_object():
    built = []
    lock = threading.Lock()

    def factory(sid):
        time.sleep(0.02)  # a slow constructor widens the race window of a naive dict
        with lock:
            built.append(sid)
        return Memory(sid)

    registry = SessionRegistry(factory)
    barrier = threading.Barrier(16)
    got = []

    def worker():
        barrier.wait()
        got.append(registry.get("s1"))

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == ["s1"] and registry.built == 1
    assert len(got) == 16 and all(m is got[0] for m in got)


def test_naive_session_dict_from_seed_000_builds_twice():
    """The pattern the registry replaces, under the same race: shows the test above can fail."""
    store = {}
    built = []
    barrier = threading.Barrier(8)

    def get_memory(sid):
        if sid not in store:
            time.sleep(0.1)
            built.append(sid)
            store[sid] = Memory(sid)
        return store[sid]

    threads = [threading.Thread(target=lambda: (barrier.wait(), get_memory("s1"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) > 1


def test_slow_factory_does_not_block_other_sessions():
    gate = threading.Event()

    def factory(sid):
        if sid == "slow":
            assert gate.wait(5)
        return Memory(sid)

    registry = SessionRegistry(factory)
    t = threading.Thread(target=registry.get, args=("slow",))
    t.start()
    time.sleep(0.01)
    started = time.monotonic()
    assert registry.get("fast").sid == "fast"
    assert time.monotonic() - started < 0.5
    gate.set()
    t.join()


def test_factory_error_reaches_every_waiter_and_is_not_stored():
    attempts = []
    gate = threading.Event()

    def factory(sid):
        attempts.append(sid)
        if len(attempts) == 1:
            assert gate.wait(5)
            raise ConnectionError("db down")
        return Memory(sid)

    registry = SessionRegistry(factory)
    errors = []

    def worker():
        try:
            registry.get("s")
        except ConnectionError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while not ("s" in registry._building and len(registry._building["s"]._condition._waiters) == 3):
        assert time.monotonic() < deadline, "the other callers never waited for the build"
        time.sleep(0.001)
    gate.set()
    for t in threads:
        t.join()
    assert len(errors) == 4 and attempts == ["s"]
    assert "s" not in registry
    assert registry.get("s").sid == "s"  # the next call tries again


def test_use_serialises_one_session_in_fifo_order_but_not_different_sessions():
    registry = SessionRegistry(Memory)
    order = []
    inside = {"a": 0, "b": 0}
    overlap = []
    lock = threading.Lock()

    def chat(sid, i):
        with registry.use(sid) as memory:
            with lock:
                inside[sid] += 1
                if inside[sid] > 1:
                    overlap.append(sid)
                if inside["a"] and inside["b"]:
                    overlap.append("both")
            memory.messages.append(i)
            order.append((sid, i))
            time.sleep(0.01)
            with lock:
                inside[sid] -= 1

    holder = registry._slot("a", enter=False).guard.acquire()  # keep session a busy
    threads = []
    for i in range(5):
        t = threading.Thread(target=chat, args=("a", i))
        t.start()
        threads.append(t)
        deadline = time.monotonic() + 5
        while registry._slot("a", enter=False).guard.waiting < i + 1:
            assert time.monotonic() < deadline
            time.sleep(0.001)
    b = [threading.Thread(target=chat, args=("b", i)) for i in range(2)]
    for t in b:
        t.start()
    for t in b:
        t.join()  # session b is not blocked by session a
    holder.release()
    for t in threads:
        t.join()
    assert registry.get("a").messages == [0, 1, 2, 3, 4]
    assert "a" not in overlap and "b" not in overlap


def test_ause_serialises_across_tasks_and_builds_off_loop():
    loop_threads = []

    def factory(sid):
        loop_threads.append(threading.get_ident())
        return Memory(sid)

    registry = SessionRegistry(factory)
    trace = []

    async def turn(i):
        async with registry.ause("s") as memory:
            trace.append(("in", i))
            memory.messages.append(i)
            await asyncio.sleep(0.01)
            trace.append(("out", i))

    async def main():
        await asyncio.gather(*(turn(i) for i in range(4)))
        return threading.get_ident()

    main_thread = asyncio.run(main())
    assert registry.built == 1 and main_thread not in loop_threads
    for k in range(0, len(trace), 2):
        assert trace[k][0] == "in" and trace[k + 1] == ("out", trace[k][1])
    assert sorted(registry.get("s").messages) == [0, 1, 2, 3]


def test_lru_bound_evicts_least_recently_used_but_never_one_in_use():
    evicted = []
    registry = SessionRegistry(Memory, max_sessions=2, on_evict=lambda sid, obj: evicted.append(sid))
    registry.get("a")
    registry.get("b")
    registry.get("a")  # a is now more recent than b
    registry.get("c")
    assert evicted == ["b"] and registry.sessions() == ["a", "c"]
    with registry.use("a"):
        registry.get("c")
        registry.get("d")  # a is least recent but in use: c goes instead
        assert "a" in registry and "c" not in registry
    assert evicted == ["b", "c"]


def test_idle_expiry_builds_a_fresh_object():
    clock = FakeClock()
    evicted = []
    registry = SessionRegistry(Memory, idle_ttl=60, clock=clock, on_evict=lambda sid, obj: evicted.append(sid))
    first = registry.get("s")
    clock.now += 59
    assert registry.get("s") is first  # access refreshes the idle timer
    clock.now += 59
    assert registry.get("s") is first
    clock.now += 61
    second = registry.get("s")
    assert second is not first and evicted == ["s"]
    registry.get("t")
    with registry.use("t"):
        clock.now += 1000
        assert registry.prune() == 1  # s expired; t is in use and stays
        assert "t" in registry and "s" not in registry
    clock.now += 61
    assert registry.prune() == 1 and len(registry) == 0


def test_evict():
    registry = SessionRegistry(Memory)
    first = registry.get("s")
    assert registry.evict("s") is True and registry.evict("s") is False
    assert registry.get("s") is not first


def test_bad_arguments():
    with pytest.raises(ValueError):
        SessionRegistry(Memory, max_sessions=0)
    with pytest.raises(ValueError):
        SessionRegistry(Memory, idle_ttl=0)
    with pytest.raises(ValueError):
        SessionRegistry(Memory).get("")
