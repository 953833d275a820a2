"""The conformance suite every store passes: run it on your own backend.

    from dupguard.runtime.conformance import Conformance

    suite = Conformance(functools.partial(MyBackend, "dsn"), server=my_server)
    suite.run()               # every check; AssertionError naming the ones that failed
    suite.run_check("threads_one_winner")

``factory()`` must return a new client of the store under test, every client of one factory
seeing the same records (for ``MemoryBackend``, return the same object each time). The suite
closes what it gets. Keys are namespaced per run (``conformance:<run>:<check>:…``), so the
store may hold other data. The checks, in order, are :data:`CHECKS`:

* the contract of :mod:`dupguard.runtime.backends` one rule at a time — claim, busy, done
  with the JSON-round-tripped result, release, lease expiry and takeover with a higher
  fence, fencing of a former owner's complete/renew/release (also after the new owner
  completed), renewal, an owner finishing late when nobody took over, a fenced write
  re-creating a forgotten record, result expiry, an unencodable result, counters, async;
* ``payload_mismatch``: a key reused with another payload raises
  ``IdempotencyPayloadMismatch``;
* ``abandoned_claim``: a record whose holder let its lease run out without completing is kept
  for the claim's ``keep`` and reported by the next claim (``expired_holder`` when taking it
  over, ``abandoned`` with ``take_abandoned=False``, which changes nothing), and only then: not
  after a release, an expired result, ``keep=0`` or the end of ``keep``; the holder's own fence
  may still complete or release it; a renewal keeps its ``keep``;
* ``abandoned_at_most_once`` and ``abandoned_reconcile``: ``Idempotency(on_abandoned="raise")``
  never runs an abandoned key again (``OutcomeUnknown`` with the key and the fence, for every
  caller, until ``resolve`` or ``release``); ``on_abandoned=reconcile`` records what
  ``reconcile(key)`` found, or runs the key once when it says ``MISSING``, and leaves the key
  abandoned when it fails (sync and async);
* ``threads_one_winner`` (64 threads), ``event_loops_one_winner`` (3 loops × 8 tasks) and
  ``processes_one_winner`` (16 real processes) on one key: exactly one execution, everyone
  gets its result;
* ``killed_holder``: a process holding a key is killed with SIGKILL; its lease runs out,
  another caller takes over and completes once; the dead owner's late write is refused;
* ``server_restart`` (needs ``server``): the server is crashed with claims in flight; every
  call meanwhile raises ``StoreError``; after the restart a completed key is still done, a
  claim that returned is still held, a claim cut off by the crash is either held or never
  made, and the owner of a key held across the restart completes it once.

The process checks start one helper interpreter (``sys.executable``) that forks the callers,
so ``factory`` must be picklable (a module-level function or a ``functools.partial`` of a
class) and the store reachable from other processes; for a ``local_only`` backend they are
skipped. ``server`` is any object with ``kill()`` (crash the server: no clean shutdown) and
``start()`` (start it again on the same address and data, returning once it accepts
connections); without it ``server_restart`` is skipped. ``lease`` is the short lease the
expiry checks use (seconds); the whole suite takes a few seconds per backend.

Checks raise ``AssertionError`` when a backend breaks a rule and :class:`NotApplicable` when
they cannot run against this backend. Standard library only; nothing here needs pytest.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .backends import Backend, Claim, Record, compose_key
from .errors import IdempotencyInProgress, IdempotencyPayloadMismatch, LeaseLost, OutcomeUnknown, StoreError
from .idempotency import MISSING, Idempotency

__all__ = ["CHECKS", "Conformance", "NotApplicable"]

CHECKS = (
    "claim_busy_done",
    "release",
    "expiry_takeover_and_fencing",
    "late_completion_rejected",
    "renew_and_repeated_complete",
    "owner_finishes_late_if_nobody_took_over",
    "fenced_write_recreates_a_forgotten_record",
    "result_expiry",
    "unencodable_result",
    "payload_mismatch",
    "counters",
    "async_methods",
    "abandoned_claim",
    "abandoned_at_most_once",
    "abandoned_reconcile",
    "threads_one_winner",
    "event_loops_one_winner",
    "processes_one_winner",
    "killed_holder",
    "server_restart",
)


class NotApplicable(Exception):
    """The check cannot run against this backend (say why); it is not a failure."""


# One helper interpreter imports everything once, then forks the callers: each caller is a
# real process with its own store client, and 16 of them start in milliseconds.
_CALLERS = r"""
import base64, json, os, pickle, sys, time
spec = json.loads(sys.argv[1])
factory = pickle.loads(base64.b64decode(sys.stdin.readline()))
from dupguard.runtime import Idempotency, IdempotencyInProgress

def say(line):  # one write(2) per line: lines from many processes never interleave
    os.write(1, (line + "\n").encode())

def caller():
    store = factory()
    idem = Idempotency(store, lease=spec["lease"], on_in_progress=spec["mode"])

    def work():
        fd = os.open(spec["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        os.close(fd)
        time.sleep(spec["hold"])
        return {"pid": os.getpid()}

    say(f"ready {os.getpid()}")
    while not os.path.exists(spec["go"]):
        time.sleep(0.002)
    try:
        out = {"result": idem.run(spec["key"], work)}
    except IdempotencyInProgress:
        out = {"in_progress": True}
    except Exception as exc:
        out = {"error": f"{type(exc).__name__}: {exc}"}
    say(json.dumps(out))
    store.close()

children = []
for _ in range(spec["processes"]):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            caller()
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def _until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.01)


def _live(store: Backend, key: str) -> Record:
    """The live record for ``key``; AssertionError when the key is free."""
    record = store.get(key)
    if record is None:
        raise AssertionError(f"{key!r} should hold a live record, but it is free")
    return record


def _raises(exc_type: type[BaseException], fn: Callable[[], Any], what: str) -> BaseException:
    try:
        fn()
    except exc_type as exc:
        return exc
    except Exception as exc:
        raise AssertionError(f"{what}: expected {exc_type.__name__}, got {type(exc).__name__}: {exc}") from exc
    raise AssertionError(f"{what}: expected {exc_type.__name__}, nothing was raised")


class Conformance:
    """The checks of :data:`CHECKS` against the store ``factory()`` connects to."""

    def __init__(self, factory: Callable[[], Backend], *, server: Any = None, lease: float = 0.3) -> None:
        self.factory = factory
        self.server = server
        self.lease = lease
        self.run_id = uuid.uuid4().hex[:10]
        self._clients: list[Backend] = []

    # ------------------------------------------------------------------ running
    def run(self, checks: tuple[str, ...] | list[str] = CHECKS) -> dict[str, str]:
        """Run ``checks``; returns ``{name: "passed" | "not applicable: why"}``, or raises
        ``AssertionError`` listing every failed check and why."""
        report: dict[str, str] = {}
        failed: list[str] = []
        for name in checks:
            try:
                self.run_check(name)
            except NotApplicable as exc:
                report[name] = f"not applicable: {exc}"
            except Exception as exc:
                report[name] = f"FAILED: {type(exc).__name__}: {exc}"
                failed.append(f"{name}: {type(exc).__name__}: {exc}")
            else:
                report[name] = "passed"
        if failed:
            raise AssertionError(f"{len(failed)} of {len(checks)} conformance checks failed:\n" + "\n".join(failed))
        return report

    def run_check(self, name: str) -> None:
        """Run one check; ``AssertionError`` when the backend breaks its rule."""
        if name not in CHECKS:
            raise ValueError(f"no conformance check named {name!r}; the checks are {', '.join(CHECKS)}")
        self._check = name
        try:
            getattr(self, f"check_{name}")()
        finally:
            clients, self._clients = self._clients, []
            for client in clients:
                try:
                    client.close()
                except Exception:  # noqa: S110 - closing after a failed check must not hide it
                    pass

    def client(self) -> Backend:
        store = self.factory()
        self._clients.append(store)
        return store

    def key(self, name: str = "k") -> str:
        return f"conformance:{self.run_id}:{self._check}:{name}"

    def _expire(self, lease: float | None = None) -> None:
        time.sleep((lease or self.lease) * 1.5 + 0.05)

    # ------------------------------------------------------------------ the contract
    def check_claim_busy_done(self) -> None:
        s, k = self.client(), self.key()
        first = s.claim(k, lease=30, payload="p1")
        assert first.acquired and first.fence > 0, f"a free key must be acquired, got {first}"
        assert first.payload == "p1", f"the claim must carry its payload, got {first.payload!r}"
        assert _live(s, k).state == "pending", "a claimed key must read as pending"
        busy = s.claim(k, lease=30, payload="p2")
        assert busy.status == "busy" and busy.fence == first.fence, f"a held key must be busy, got {busy}"
        assert busy.payload == "p1" and 0 < busy.remaining <= 30, f"busy must report payload and time left: {busy}"
        other = self.client()
        assert other.claim(k, lease=30).status == "busy", "another client must see the key held"
        result = {"rows": (1, 2), 3: None, "text": "é ✓ 𝄞", "nested": [{"a": 1.5}, True]}
        s.complete(k, first.fence, result, ttl=60)
        done = other.claim(k, lease=30)
        expected = {"rows": [1, 2], "3": None, "text": "é ✓ 𝄞", "nested": [{"a": 1.5}, True]}
        assert done.status == "done" and done.result == expected, f"a completed key must replay its result: {done}"
        assert done.fence == first.fence and done.payload == "p1", f"done must keep fence and payload: {done}"
        assert 50 < done.remaining <= 60, f"done must report the result's time left: {done.remaining}"
        record = other.get(k)
        assert record is not None and record.state == "done" and record.result == expected, f"get: {record}"
        assert s.get(self.key("missing")) is None, "get of an unknown key must be None"
        none = s.claim(self.key("none"), lease=30)
        s.complete(self.key("none"), none.fence, None, ttl=60)
        replay = s.claim(self.key("none"), lease=30)
        assert replay.status == "done" and replay.result is None, f"a None result is a result: {replay}"

    def check_release(self) -> None:
        s, k = self.client(), self.key()
        c = s.claim(k, lease=30)
        assert s.release(k, c.fence) is True, "the holder's release must succeed"
        assert s.release(k, c.fence) is False, "releasing twice must report False"
        assert s.get(k) is None, "a released key must be free"
        again = self.client().claim(k, lease=30)
        assert again.acquired and again.fence > c.fence, f"the next claim must get a higher fence: {again}"
        assert s.release(self.key("never"), 1) is False, "releasing an unknown key must report False"
        _raises(LeaseLost, lambda: s.release(k, c.fence), "release under another live fence")
        s.complete(k, again.fence, "v", ttl=60)
        assert s.release(k, again.fence) is False, "a completed key is not released"
        assert s.claim(k, lease=30).result == "v", "a refused release must not change the record"

    def check_expiry_takeover_and_fencing(self) -> None:
        a, b, k = self.client(), self.client(), self.key()
        t0 = time.monotonic()
        old = a.claim(k, lease=self.lease)
        seen = b.claim(k, lease=30)
        if time.monotonic() - t0 < self.lease:  # (a machine that stalled longer cannot judge)
            assert seen.status == "busy", f"a live lease must keep others out: {seen}"
        self._expire()
        new = b.claim(k, lease=30)
        assert new.acquired and new.fence > old.fence, f"an expired lease must be taken over, higher fence: {new}"
        for what, late in (
            ("complete", lambda: a.complete(k, old.fence, "late", ttl=60)),
            ("renew", lambda: a.renew(k, old.fence, lease=30)),
            ("release", lambda: a.release(k, old.fence)),
        ):
            _raises(LeaseLost, late, f"the former owner's {what} after a takeover")
        record = b.get(k)
        assert record is not None and record.state == "pending" and record.fence == new.fence, f"after: {record}"

    def check_late_completion_rejected(self) -> None:
        a, b, k = self.client(), self.client(), self.key()
        old = a.claim(k, lease=self.lease)
        self._expire()
        new = b.claim(k, lease=30)
        assert new.acquired, f"takeover: {new}"
        b.complete(k, new.fence, "fresh", ttl=60)
        _raises(LeaseLost, lambda: a.complete(k, old.fence, "late", ttl=60), "a fenced-out owner's completion")
        _raises(LeaseLost, lambda: a.renew(k, old.fence, lease=30), "a fenced-out owner's renew")
        _raises(LeaseLost, lambda: a.release(k, old.fence), "a fenced-out owner's release")
        done = a.claim(k, lease=30)
        assert done.status == "done" and done.result == "fresh" and done.fence == new.fence, f"kept: {done}"

    def check_renew_and_repeated_complete(self) -> None:
        s, k = self.client(), self.key()
        c = s.claim(k, lease=self.lease)
        for _ in range(3):
            time.sleep(self.lease / 3)
            assert s.renew(k, c.fence, lease=30) == 30, "renew returns the lease"
        assert self.client().claim(k, lease=30).status == "busy", "a renewed lease must still be held"
        s.complete(k, c.fence, 1, ttl=60)
        s.complete(k, c.fence, 2, ttl=60)  # a retried completion: accepted, the first value stays
        assert _live(s, k).result == 1, "a repeated completion must not overwrite the result"
        _raises(LeaseLost, lambda: s.renew(k, c.fence, lease=30), "renew after completion")

    def check_owner_finishes_late_if_nobody_took_over(self) -> None:
        s, k = self.client(), self.key()
        c = s.claim(k, lease=self.lease)
        self._expire()
        s.complete(k, c.fence, "ok", ttl=60)
        assert _live(s, k).result == "ok", "an owner whose lease ran out may still complete if nobody took over"
        r = s.claim(self.key("renew"), lease=self.lease)
        self._expire()
        s.renew(self.key("renew"), r.fence, lease=30)
        assert self.client().claim(self.key("renew"), lease=30).status == "busy", "a late renew must re-take it"

    def check_fenced_write_recreates_a_forgotten_record(self) -> None:
        # what an owner sees after a store lost its data: its fence still proves the grant
        s = self.client()
        s.renew(self.key("gone"), 12345, lease=30)
        record = s.get(self.key("gone"))
        assert record is not None and record.state == "pending" and record.fence == 12345, f"renew: {record}"
        assert s.claim(self.key("gone"), lease=30).status == "busy", "the re-created lease must be held"
        s.complete(self.key("gone"), 12345, "kept", ttl=60)
        assert _live(s, self.key("gone")).result == "kept"
        s.complete(self.key("other"), 777, "kept too", ttl=60)
        assert s.claim(self.key("other"), lease=30).result == "kept too"

    def check_result_expiry(self) -> None:
        s, k = self.client(), self.key()
        c = s.claim(k, lease=30)
        t0 = time.monotonic()
        s.complete(k, c.fence, "v", ttl=self.lease)
        record = s.get(k)
        if time.monotonic() - t0 < self.lease:
            assert record is not None and record.state == "done", f"a completed key reads as done: {record}"
        self._expire()
        assert s.get(k) is None, "an expired result must read as free"
        again = s.claim(k, lease=30)
        assert again.acquired and again.fence > c.fence, f"an expired result lets the key run again: {again}"

    def check_unencodable_result(self) -> None:
        s, k = self.client(), self.key()
        c = s.claim(k, lease=30)
        _raises(TypeError, lambda: s.complete(k, c.fence, object(), ttl=60), "an unencodable result")
        circular: list = []
        circular.append(circular)
        _raises(TypeError, lambda: s.complete(k, c.fence, circular, ttl=60), "a circular result")
        record = s.get(k)
        assert record is not None and record.state == "pending", f"a refused result must change nothing: {record}"
        s.complete(k, c.fence, [1], ttl=60)
        assert _live(s, k).result == [1]

    def check_payload_mismatch(self) -> None:
        s, k = self.client(), self.key()
        idem = Idempotency(s, lease=30)
        runs: list[int] = []

        def call(n: int, value: str) -> Callable[[], str]:
            def fn() -> str:
                runs.append(n)
                return value

            return fn

        assert idem.run(k, call(1, "first"), payload={"amount": 10}) == "first"
        assert idem.run(k, call(2, "again"), payload={"amount": 10}) == "first"
        _raises(
            IdempotencyPayloadMismatch,
            lambda: Idempotency(self.client()).run(k, call(3, "mismatch"), payload={"amount": 99}),
            "the same key with another payload",
        )
        assert runs == [1], f"only the first call may run: {runs}"
        held = s.claim(self.key("held"), lease=30, payload="h1")
        seen = self.client().claim(self.key("held"), lease=30, payload="h2")
        assert seen.status == "busy" and seen.payload == "h1" and held.acquired, f"busy keeps the payload: {seen}"

    def check_counters(self) -> None:
        s = self.client()
        n, w = self.key("n"), self.key("w")
        assert s.incr(n) == 1 and s.incr(n, 5) == 6, "incr adds"
        assert self.client().incr(n) == 7, "counters are shared"
        t0 = time.monotonic()
        first, second = s.incr(w, ttl=self.lease), s.incr(w, ttl=self.lease)
        assert first == 1, f"a new counter starts at the amount: {first}"
        if time.monotonic() - t0 < self.lease:
            assert second == 2, f"within its window a counter adds: {second}"
        self._expire()
        assert s.incr(w, ttl=self.lease) == 1, "a windowed counter starts again after its ttl"
        seen: list[int] = []
        lock = threading.Lock()

        def bump() -> None:
            for _ in range(25):
                value = s.incr(self.key("shared"))
                with lock:
                    seen.append(value)

        threads = [threading.Thread(target=bump) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(seen) == list(range(1, 201)), "every increment must be seen exactly once"

    def check_async_methods(self) -> None:
        s = self.client()
        a, b = self.key("a"), self.key("b")

        async def main() -> None:
            c = await s.aclaim(a, lease=30, payload="p")
            assert c.acquired, c
            assert (await s.aclaim(a, lease=30)).status == "busy"
            assert await s.arenew(a, c.fence, lease=30) == 30
            await s.acomplete(a, c.fence, [1], ttl=60)
            record = await s.aget(a)
            assert record is not None and record.result == [1], f"aget after acomplete: {record}"
            try:
                await s.arelease(a, c.fence + 1)
            except LeaseLost:
                pass
            else:
                raise AssertionError("arelease under another live fence must raise LeaseLost")
            d = await s.aclaim(b, lease=30)
            assert await s.arelease(b, d.fence) is True
            assert await s.aincr(self.key("n"), 2) == 2

        asyncio.run(main())

    # ------------------------------------------------------------------ abandoned keys
    def check_abandoned_claim(self) -> None:
        a, b, k = self.client(), self.client(), self.key()
        old = a.claim(k, lease=self.lease, keep=30)
        assert old.acquired and old.expired_holder is None, f"a free key has no expired holder: {old}"
        self._expire()
        for _ in range(2):  # reported, and left as it was: the next claim sees the same
            seen = b.claim(k, lease=30, keep=30, take_abandoned=False)
            assert seen.status == "abandoned" and seen.fence == old.fence, f"an abandoned record is reported: {seen}"
            assert 0 < seen.remaining <= 30, f"abandoned: remaining is the time it is still kept: {seen}"
        assert b.get(k) is None, "an abandoned record is not live: get reads it as free"
        new = b.claim(k, lease=30, keep=30)
        assert new.acquired and new.fence > old.fence, f"an abandoned record is taken over, higher fence: {new}"
        assert new.expired_holder == old.fence, f"the takeover names the holder it replaced: {new}"
        _raises(LeaseLost, lambda: a.complete(k, old.fence, "late", ttl=60), "the replaced holder's completion")

        # nobody took over: the abandoned holder's own fence completes (or releases) it
        k2 = self.key("own")
        mine = a.claim(k2, lease=self.lease, keep=30)
        self._expire()
        assert b.claim(k2, lease=30, keep=30, take_abandoned=False).status == "abandoned"
        a.complete(k2, mine.fence, "ran", ttl=60)
        done = b.claim(k2, lease=30, keep=30, take_abandoned=False)
        assert done.status == "done" and done.result == "ran", f"a completed abandoned key replays: {done}"
        k3 = self.key("released")
        mine = a.claim(k3, lease=self.lease, keep=30)
        self._expire()
        assert b.release(k3, mine.fence) is True, "the abandoned holder's fence releases it"
        free = b.claim(k3, lease=30, keep=30, take_abandoned=False)
        assert free.acquired and free.expired_holder is None, f"a released key is free, not abandoned: {free}"

        # never abandoned: a released claim, an expired result, keep=0, a key never claimed
        k4, k5, k6 = self.key("rel"), self.key("expired-result"), self.key("no-keep")
        a.release(k4, a.claim(k4, lease=30, keep=30).fence)
        a.complete(k5, a.claim(k5, lease=30, keep=30).fence, "v", ttl=self.lease)
        a.claim(k6, lease=self.lease, keep=0)
        # a renewal keeps the claim's keep; so does giving the key back with a short lease
        k7, k8 = self.key("renewed"), self.key("given-back")
        renewed = a.claim(k7, lease=self.lease, keep=30)
        a.renew(k7, renewed.fence, lease=self.lease)
        given = a.claim(k8, lease=30, keep=30)
        a.renew(k8, given.fence, lease=0.001)
        self._expire()
        for key in (k4, k5, k6, self.key("never")):
            fresh = b.claim(key, lease=30, keep=30, take_abandoned=False)
            assert fresh.acquired and fresh.expired_holder is None, f"{key}: never abandoned: {fresh}"
        for key, fence in ((k7, renewed.fence), (k8, given.fence)):
            seen = b.claim(key, lease=30, keep=30, take_abandoned=False)
            assert seen.status == "abandoned" and seen.fence == fence, f"{key}: kept through renewal: {seen}"

        # the end of keep: the record is gone, the key is free
        k9 = self.key("keep-ends")
        a.claim(k9, lease=self.lease, keep=self.lease)
        self._expire()
        self._expire()
        gone = b.claim(k9, lease=30, keep=30, take_abandoned=False)
        assert gone.acquired and gone.expired_holder is None, f"past its keep the record is free: {gone}"

    def _abandon(self, store: Backend, key: str, ttl: float) -> Claim:
        """Claim ``key`` as ``Idempotency(ttl=ttl).run(key, …)`` does and stop, as a holder killed
        after its side effect and before its completion; returns once its lease has run out."""
        claim = store.claim(compose_key("idem", key), lease=self.lease, keep=ttl)
        assert claim.acquired, f"a fresh key is acquired: {claim}"
        self._expire()
        return claim

    def check_abandoned_at_most_once(self) -> None:
        s, other = self.client(), self.client()
        runs: list[str] = []

        def fn(value: str) -> Callable[[], str]:
            def call() -> str:
                runs.append(value)
                return value

            return call

        async def afn() -> str:
            runs.append("async")
            return "async"

        idem = Idempotency(s, lease=30, ttl=60, on_abandoned="raise")
        k = self.key()
        dead = self._abandon(s, k, 60)
        for client in (s, other, s):  # every caller, every time, until someone resolves it
            caller = Idempotency(client, lease=30, ttl=60, on_abandoned="raise")
            exc = _raises(
                OutcomeUnknown, functools.partial(caller.run, k, fn("again")), "an abandoned key at most once"
            )
            assert isinstance(exc, OutcomeUnknown) and exc.key == k and exc.fence == dead.fence, (
                f"OutcomeUnknown names key and fence: {exc!r}"
            )
            assert exc.retryable is False
        _raises(OutcomeUnknown, lambda: asyncio.run(idem.arun(k, afn)), "arun of an abandoned key")
        assert runs == [], f"an abandoned key never runs again at most once: {runs}"
        idem.resolve(k, {"refund": "re_1"}, fence=dead.fence)
        assert idem.run(k, fn("again")) == {"refund": "re_1"} and runs == [], "a resolved key replays the result"

        k2 = self.key("release")
        dead = self._abandon(s, k2, 60)
        _raises(OutcomeUnknown, lambda: idem.run(k2, fn("x")), "an abandoned key")
        assert idem.release(k2, fence=dead.fence) is True, "release with the holder's fence"
        assert idem.run(k2, fn("ran")) == "ran" and runs == ["ran"], "a released key runs (once)"
        assert idem.run(k2, fn("again")) == "ran" and runs == ["ran"]

        k3 = self.key("stalled")
        stalled = self._abandon(s, k3, 60)
        _raises(OutcomeUnknown, lambda: idem.run(k3, fn("x")), "an abandoned key")
        s.complete(compose_key("idem", k3), stalled.fence, "late but mine", ttl=60)  # the holder was only stalled
        assert idem.run(k3, fn("x")) == "late but mine", "a stalled holder that comes back settles its key"

        async def aresolve() -> Any:
            k4 = self.key("async")
            dead = self._abandon(s, k4, 60)
            try:
                await idem.arun(k4, afn)
            except OutcomeUnknown as exc:
                await idem.aresolve(k4, "resolved", fence=exc.fence)  # type: ignore[arg-type]
            else:
                raise AssertionError("arun ran an abandoned key")
            assert dead.fence is not None
            return await idem.arun(k4, afn)

        assert asyncio.run(aresolve()) == "resolved" and runs == ["ran"]

        k5 = self.key("rerun")  # the default: at-least-once, the key runs again
        self._abandon(s, k5, 60)
        assert Idempotency(s, lease=30, ttl=60).run(k5, fn("rerun")) == "rerun" and runs == ["ran", "rerun"]

    def check_abandoned_reconcile(self) -> None:
        s, other = self.client(), self.client()
        effects: dict[str, str] = {}  # the side effect's own system, asked by key
        asked: list[str] = []
        runs: list[str] = []

        def reconcile(key: str) -> Any:
            asked.append(key)
            return effects.get(key, MISSING)

        def fn(value: str) -> Callable[[], str]:
            def call() -> str:
                runs.append(value)
                return value

            return call

        idem = Idempotency(s, lease=30, ttl=60, on_abandoned=reconcile)
        k1, k2, k3 = self.key("happened"), self.key("did-not"), self.key("fresh")
        self._abandon(s, k1, 60)
        self._abandon(s, k2, 60)
        effects[k1] = "re_1"
        assert idem.run(k1, fn("again")) == "re_1" and runs == [], "what reconcile found is the completion"
        assert idem.run(k2, fn("ran")) == "ran" and runs == ["ran"], "MISSING: the key runs, once"
        assert idem.run(k3, fn("fresh")) == "fresh", "a key never claimed runs without asking"
        assert asked == [k1, k2], f"reconcile is asked for abandoned keys only: {asked}"
        replayer = Idempotency(other, lease=30, ttl=60, on_abandoned=reconcile)
        assert [replayer.run(k, fn("x")) for k in (k1, k2, k3)] == ["re_1", "ran", "fresh"], "recorded for all"
        assert runs == ["ran", "fresh"] and asked == [k1, k2]

        k4 = self.key("reconcile-fails")
        dead = self._abandon(s, k4, 60)

        def unreachable(key: str) -> Any:
            raise ConnectionError("the payment API is down")

        failing = Idempotency(s, lease=30, ttl=60, on_abandoned=unreachable)
        _raises(ConnectionError, lambda: failing.run(k4, fn("x")), "a failing reconcile")
        time.sleep(0.05)
        left = other.claim(compose_key("idem", k4), lease=30, keep=60, take_abandoned=False)
        assert left.status == "abandoned" and left.fence > dead.fence, f"a failed reconcile leaves it undecided: {left}"
        effects[k4] = "re_4"
        assert idem.run(k4, fn("x")) == "re_4" and asked[-1] == k4 and "x" not in runs, "the next caller asks again"

        async def areconcile(key: str) -> Any:
            await asyncio.sleep(0)
            asked.append(key)
            return effects.get(key, MISSING)

        async def afn() -> str:
            runs.append("async")
            return "async"

        k5, k6, k7, k8 = (self.key(n) for n in ("async-happened", "async-did-not", "async-in-sync", "sync-in-async"))
        for k in (k5, k6, k7, k8):
            self._abandon(s, k, 60)
        effects[k5], effects[k8] = "re_5", "re_8"
        aidem = Idempotency(s, lease=30, ttl=60, on_abandoned=areconcile)
        assert asyncio.run(aidem.arun(k5, afn)) == "re_5" and "async" not in runs
        assert asyncio.run(aidem.arun(k6, afn)) == "async" and runs.count("async") == 1
        assert asyncio.run(idem.arun(k8, afn)) == "re_8" and asked[-1] == k8, "a sync reconcile works in arun"
        _raises(TypeError, lambda: aidem.run(k7, fn("x")), "an async reconcile under run()")
        time.sleep(0.05)
        left = other.claim(compose_key("idem", k7), lease=30, keep=60, take_abandoned=False)
        assert left.status == "abandoned", f"a reconcile that could not run leaves the key undecided: {left}"

    # ------------------------------------------------------------------ concurrency
    def check_threads_one_winner(self) -> None:
        s, k = self.client(), self.key()
        barrier = threading.Barrier(64)
        claims: list = []

        def claim() -> None:
            barrier.wait()
            claims.append(s.claim(k, lease=30))

        self._threads(claim, 64)
        winners = [c for c in claims if c.acquired]
        assert len(claims) == 64 and len(winners) == 1, f"{len(winners)} of 64 concurrent claims won"
        assert {c.fence for c in claims} == {winners[0].fence}, "every loser must see the winner's fence"

        # the same through Idempotency, waiting: one execution, 64 identical answers
        idem = Idempotency(s, lease=30, on_in_progress="wait")
        runs: list[int] = []
        answers: list = []
        barrier = threading.Barrier(64)

        def work() -> dict:
            runs.append(threading.get_ident())
            time.sleep(0.05)
            return {"by": threading.get_ident()}

        def call() -> None:
            barrier.wait()
            answers.append(idem.run(self.key("idem"), work))

        self._threads(call, 64)
        assert len(runs) == 1, f"{len(runs)} of 64 threads executed"
        assert answers == [{"by": runs[0]}] * 64, "every thread must get the one result"

    @staticmethod
    def _threads(target: Callable[[], None], n: int) -> None:
        errors: list[BaseException] = []

        def run() -> None:
            try:
                target()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        if errors:
            raise AssertionError(f"{len(errors)} threads failed, first: {type(errors[0]).__name__}: {errors[0]}")

    def check_event_loops_one_winner(self) -> None:
        s, k = self.client(), self.key()
        runs: list[int] = []
        answers: list = []
        claims: list = []
        barrier = threading.Barrier(3)

        async def work() -> str:
            runs.append(1)
            await asyncio.sleep(0.05)
            return "once"

        async def loop_main() -> None:
            barrier.wait()
            idem = Idempotency(s, lease=30, on_in_progress="wait")
            claims.extend(await asyncio.gather(*(s.aclaim(k, lease=30) for _ in range(8))))
            answers.extend(await asyncio.gather(*(idem.arun(self.key("idem"), work) for _ in range(8))))

        self._threads(lambda: asyncio.run(loop_main()), 3)
        winners = [c for c in claims if c.acquired]
        assert len(claims) == 24 and len(winners) == 1, f"{len(winners)} of 24 claims on 3 loops won"
        assert len(runs) == 1 and answers == ["once"] * 24, f"{len(runs)} executions on 3 loops; answers {answers}"

    # ------------------------------------------------------------------ processes
    def _spawn(self, spec: dict, processes: int) -> tuple[subprocess.Popen, list[int]]:
        if self.client().local_only:
            raise NotApplicable("the backend keeps its records in one process (local_only)")
        try:
            blob = base64.b64encode(pickle.dumps(self.factory)).decode()
        except Exception as exc:
            raise NotApplicable(f"the factory cannot be pickled for other processes ({exc})") from exc
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        helper = subprocess.Popen(
            [sys.executable, "-c", _CALLERS, json.dumps({**spec, "processes": processes})],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert helper.stdin is not None and helper.stdout is not None
        helper.stdin.write(blob + "\n")
        helper.stdin.close()
        helper.stdin = None  # communicate() must not flush it again
        pids = []
        for _ in range(processes):
            line = helper.stdout.readline()
            if not line.startswith("ready "):
                helper.kill()
                raise AssertionError(f"a caller process did not start: {line!r}")
            pids.append(int(line.split()[1]))
        return helper, pids

    @staticmethod
    def _executions(log: Path) -> list[int]:
        return [int(line) for line in log.read_text().split()] if log.exists() else []

    def check_processes_one_winner(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            log, go = Path(tmp) / "executions.log", Path(tmp) / "go"
            k = self.key()
            spec = {"key": k, "mode": "wait", "lease": 30, "hold": 0.3, "log": str(log), "go": str(go)}
            helper, pids = self._spawn(spec, 16)
            go.touch()  # all 16 are past start-up: they claim within milliseconds of each other
            out, _ = helper.communicate(timeout=60)
            outcomes = [json.loads(line) for line in out.splitlines()]
            ran = self._executions(log)
        assert len(outcomes) == 16 and len(set(pids)) == 16, f"16 callers must answer: {outcomes}"
        assert len(ran) == 1 and ran[0] in pids, f"{len(ran)} of 16 processes executed: {ran}"
        winner = {"pid": ran[0]}
        assert outcomes == [{"result": winner}] * 16, f"every process must get the one result: {outcomes}"
        assert _live(self.client(), compose_key("idem", k)).result == winner

    def check_killed_holder(self) -> None:
        lease = max(self.lease, 1.0)  # the holder's heartbeat renews every third of it
        with tempfile.TemporaryDirectory() as tmp:
            log, go = Path(tmp) / "executions.log", Path(tmp) / "go"
            go.touch()
            k = self.key()
            spec = {"key": k, "mode": "raise", "lease": lease, "hold": 120, "log": str(log), "go": str(go)}
            helper, (holder,) = self._spawn(spec, 1)
            try:
                s = self.client()
                _until(lambda: self._executions(log) == [holder], 30, "the holder to start")
                old = s.get(compose_key("idem", k))
                assert old is not None and old.state == "pending", f"the holder's record: {old}"
                time.sleep(lease * 1.5)  # longer than the lease: the live holder's heartbeat keeps it
                kept = s.get(compose_key("idem", k))
                assert kept is not None and kept.fence == old.fence, "a live holder's heartbeat must keep its lease"
                _raises(
                    IdempotencyInProgress,
                    lambda: Idempotency(s, lease=lease).run(k, lambda: "duplicate"),
                    "a duplicate while the holder lives",
                )
                os.kill(holder, signal.SIGKILL)  # dies mid-run: no release, no heartbeat any more
                helper.wait(30)
                t0 = time.monotonic()
                result = Idempotency(s, lease=30, on_in_progress="wait").run(k, lambda: "rerun")
                waited = time.monotonic() - t0
            finally:
                if helper.poll() is None:
                    helper.kill()
                    helper.wait(10)
                if helper.stdout is not None:
                    helper.stdout.close()
            ran = self._executions(log)
        assert result == "rerun" and waited < lease + 5, f"takeover after the lease: {result!r} after {waited:.2f}s"
        new = s.get(compose_key("idem", k))
        assert new is not None and new.state == "done" and new.fence > old.fence, f"after takeover: {new}"
        _raises(
            LeaseLost, lambda: s.complete(compose_key("idem", k), old.fence, {"pid": holder}, ttl=60), "the dead owner"
        )
        assert _live(s, compose_key("idem", k)).result == "rerun", "the dead owner's write must not land"
        assert Idempotency(s).run(k, lambda: "third") == "rerun", "the completed key must replay"
        assert ran == [holder], f"the killed holder ran once and nobody else in it: {ran}"

    # ------------------------------------------------------------------ the server
    def check_server_restart(self) -> None:
        if self.server is None:
            raise NotApplicable("no server to crash and restart was given (server=...)")
        s = self.client()
        before, inflight = self.key("before"), self.key("inflight")
        c = s.claim(before, lease=30)
        s.complete(before, c.fence, "kept", ttl=600)
        held = s.claim(inflight, lease=60)
        assert held.acquired

        # a second client claims key after key; the crash cuts one of them off mid-call
        hammer = self.client()
        outcomes: list[tuple[str, Any]] = []
        stop = threading.Event()

        def claims() -> None:
            i = 0
            while not stop.is_set():
                key = self.key(f"h{i}")
                try:
                    outcomes.append((key, hammer.claim(key, lease=60)))
                except StoreError as exc:
                    outcomes.append((key, exc))
                    return
                except Exception as exc:
                    outcomes.append((key, exc))
                    return
                i += 1

        t = threading.Thread(target=claims)
        t.start()
        try:
            _until(lambda: len(outcomes) >= 5, 30, "claims before the crash")
            self.server.kill()
            t.join(30)
        finally:
            stop.set()
            t.join(30)
        last_key, last = outcomes[-1]
        assert isinstance(last, StoreError), f"a claim cut off by the crash must raise StoreError, not {last!r}"
        for what, call in (
            ("claim", lambda: s.claim(self.key("down"), lease=30)),
            ("complete", lambda: s.complete(inflight, held.fence, "x", ttl=60)),
            ("get", lambda: s.get(before)),
            ("incr", lambda: s.incr(self.key("n"))),
        ):
            err = _raises(StoreError, call, f"{what} while the server is down")
            assert getattr(err, "retryable", False), f"{what}: a store outage is retryable"

        self.server.start()
        # clients may need one failed call per stale connection: the store answers within 10 s
        _until(lambda: self._answers(s) and self._answers(hammer), 10, "the store to answer after the restart")
        done = s.claim(before, lease=30)
        assert done.status == "done" and done.result == "kept", f"a completed key must survive a restart: {done}"
        busy = s.claim(inflight, lease=30)
        assert busy.status == "busy" and busy.fence == held.fence, f"a held key must stay held: {busy}"
        for key, outcome in outcomes[:-1]:
            record = s.get(key)
            assert record is not None and record.state == "pending" and record.fence == outcome.fence, (
                f"a claim that returned must survive a restart: {key} {record}"
            )
        cut = s.get(last_key)
        assert cut is None or cut.state == "pending", f"a claim cut off is held or not made, not {cut}"
        retry = s.claim(last_key, lease=30)
        assert retry.status == ("busy" if cut is not None else "acquired"), f"after the restart: {retry}"
        s.complete(inflight, held.fence, "once", ttl=60)  # the owner across the restart finishes
        assert self.client().claim(inflight, lease=30).result == "once"

    def _answers(self, store: Backend) -> bool:
        try:
            store.get(self.key("ping"))
        except StoreError:
            return False
        return True
