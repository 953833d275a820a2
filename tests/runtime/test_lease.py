"""``Lease``, ``turn_lease`` and ``aturn_lease``: one consumer per chat turn, with fencing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dupguard.runtime import IdempotencyInProgress, Lease, LeaseLost, MemoryBackend, aturn_lease, turn_lease
from dupguard.runtime.lease import _HEARTBEATS, TurnCompleted


def test_one_consumer_per_turn_and_no_second_run(backend):
    with turn_lease(backend, "turn:c1:7", ttl=5) as lease:
        assert isinstance(lease, Lease) and lease.fence > 0 and not lease.lost
        with pytest.raises(IdempotencyInProgress) as info:  # a second consumer, same turn
            with turn_lease(backend, "turn:c1:7", ttl=5):
                pass
        assert info.value.retryable and 0 < info.value.retry_after <= 5
        lease.check()  # still ours
    with pytest.raises(TurnCompleted) as done:  # the job is redelivered after it finished
        with turn_lease(backend, "turn:c1:7", ttl=5):
            pass
    assert done.value.retryable is False


def test_a_failed_turn_is_given_back_with_a_higher_fence_next_time(backend):
    with pytest.raises(RuntimeError), turn_lease(backend, "turn", ttl=5) as first:
        raise RuntimeError("model timed out")
    with turn_lease(backend, "turn", ttl=5) as second:
        assert second.fence > first.fence


def test_the_heartbeat_keeps_the_turn_and_check_sees_a_takeover(backend):
    with turn_lease(backend, "alive", ttl=0.3) as lease:
        time.sleep(0.65)
        with pytest.raises(IdempotencyInProgress), turn_lease(backend, "alive", ttl=0.3):
            pass
        lease.check()

    with pytest.raises(LeaseLost):  # leaving the block after a takeover: the work is not recorded
        with turn_lease(backend, "stalled", ttl=0.15, heartbeat=0) as lease:
            time.sleep(0.2)  # no heartbeat: the lease runs out
            taker = backend.claim("stalled", lease=5)
            assert taker.acquired and taker.fence > lease.fence
            with pytest.raises(LeaseLost):
                lease.check()  # fenced out: do not publish
            assert lease.lost
    assert backend.get("stalled").fence == taker.fence


def test_async_turn_lease(backend):
    async def main() -> None:
        async with aturn_lease(backend, "aturn", ttl=0.3) as lease:
            await asyncio.sleep(0.65)  # renewed on this loop
            with pytest.raises(IdempotencyInProgress):
                async with aturn_lease(backend, "aturn", ttl=0.2):
                    pass
            await lease.acheck()
        with pytest.raises(TurnCompleted):
            async with aturn_lease(backend, "aturn", ttl=0.2):
                pass
        with pytest.raises(ValueError):
            async with aturn_lease(backend, "afail", ttl=5) as failed:
                raise ValueError("boom")
        async with aturn_lease(backend, "afail", ttl=5) as again:
            assert again.fence > failed.fence

    asyncio.run(main())


def test_a_blocked_event_loop_stops_renewing_and_is_taken_over(backend):
    """A stuck owner (its loop blocked) must lose the turn; a live one never does."""
    holding = threading.Event()
    errors: list[BaseException] = []

    async def stuck_consumer() -> None:
        async with aturn_lease(backend, "stuck", ttl=0.2):
            holding.set()
            time.sleep(0.6)  # blocks the loop: no heartbeat can run

    def run() -> None:
        try:
            asyncio.run(stuck_consumer())
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    assert holding.wait(5)
    deadline = time.monotonic() + 2
    while not (claim := backend.claim("stuck", lease=5)).acquired:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    t.join(5)
    assert len(errors) == 1 and isinstance(errors[0], LeaseLost)
    backend.complete("stuck", claim.fence, "taken over", ttl=5)


def test_many_short_leases_do_not_grow_the_heartbeat_heap():
    backend = MemoryBackend()
    for i in range(3000):
        lease = Lease(backend, f"short-{i % 7}", 1, ttl=60).start()
        lease.stop()
    assert len(_HEARTBEATS._heap) < 1100


def test_lease_validates_ttl():
    with pytest.raises(ValueError):
        Lease(MemoryBackend(), "k", 1, ttl=0)


class CountingLoop(asyncio.SelectorEventLoop):
    """A real event loop that counts the timers set on it (``call_later`` goes through ``call_at``)."""

    timers = 0

    def call_at(self, when, callback, *args, context=None):
        self.timers += 1
        return super().call_at(when, callback, *args, context=context)


def _on_counting_loop(main):
    loop = CountingLoop()
    try:
        return loop.run_until_complete(main()), loop.timers
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def test_async_leases_on_one_loop_share_one_heartbeat_timer():
    """Short turns each take and end a lease: the loop's timer heap must not get one timer per
    lease (a cancelled timer stays in it until it would have fired, 10–20 s later)."""
    backend = MemoryBackend()

    async def turns() -> None:
        for i in range(500):
            claim = await backend.aclaim(f"turn-{i}", lease=30)
            lease = Lease(backend, f"turn-{i}", claim.fence, ttl=30).astart()
            await asyncio.sleep(0)
            await lease.arelease()

    _, timers = _on_counting_loop(turns)
    assert timers <= 2, f"{timers} timers for 500 leases"


def test_the_shared_heartbeat_renews_every_lease_on_the_loop_and_stops_with_each(backend):
    """Leases of different lengths on one loop are each renewed in time by the one timer; a lease
    that stops is renewed no more (its record runs out) while the others go on."""

    async def main() -> None:
        leases = []
        for i, ttl in enumerate((0.3, 0.45, 0.6) * 4):
            claim = await backend.aclaim(f"hb-{i}", lease=ttl)
            leases.append(Lease(backend, f"hb-{i}", claim.fence, ttl=ttl).astart())
        stopped = leases[:3]
        for lease in stopped:
            await lease.astop()
        await asyncio.sleep(1.3)  # more than twice the longest lease
        for lease in leases[3:]:
            record = await backend.aget(lease.key)
            assert record is not None and record.state == "pending" and record.fence == lease.fence, lease
            assert not lease.lost
        for lease in stopped:
            assert await backend.aget(lease.key) is None, f"{lease} was renewed after it stopped"
        for lease in leases[3:]:
            assert await lease.arelease()

    asyncio.run(main())
