"""``MemoryBackend``: the default store, for one process.

A dict behind one ``threading.Lock``. Every operation takes the lock for a few dict
operations and never across an ``await`` or a user call, so the async methods simply call
the sync ones: they cannot block the loop for longer than that. Leases are measured on the
monotonic clock (immune to wall-clock steps); fences are seeded from the wall clock in µs,
as in the other backends, so a key's fence keeps rising after its record is deleted.

Expired records are dropped lazily: a sweep runs once the number of operations since the
last sweep exceeds the number of records, so the cost stays constant per operation.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Literal

from . import (
    Backend,
    Claim,
    Record,
    _seconds,
    check_key,
    check_payload,
    decode_result,
    duration_us,
    encode_result,
    keep_us,
    lease_lost,
)

__all__ = ["MemoryBackend"]

# record layout (a list, mutated in place under the lock); _KEEP: µs a pending record outlives
# its lease (the claim's ``keep``), so that the next claim can tell its holder never finished
_STATE, _FENCE, _END, _PAYLOAD, _RESULT, _KEEP = range(6)


def _kept_until(rec: list) -> int:
    return rec[_END] + rec[_KEEP] if rec[_STATE] == "pending" else rec[_END]


def _mono_us() -> int:
    return time.monotonic_ns() // 1000


def _wall_us() -> int:
    return time.time_ns() // 1000


class MemoryBackend(Backend):
    """Records in a dict: atomic, fenced, and visible to every thread and loop in the process."""

    local_only = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, list] = {}
        self._counters: dict[str, list] = {}  # key -> [value, end_us or None]
        self._ops = 0
        self.channel = f"memory:{id(self)}"

    def __repr__(self) -> str:
        return f"MemoryBackend(<{len(self._records)} records>)"

    # ------------------------------------------------------------------ helpers
    def _live(self, key: str, now: int) -> list | None:
        rec = self._records.get(key)
        if rec is not None and rec[_END] <= now:
            return None
        return rec

    def _tick(self, now: int) -> None:
        """Amortised sweep of expired records and counters (called under the lock)."""
        self._ops += 1
        if self._ops <= max(1024, len(self._records) + len(self._counters)):
            return
        self._ops = 0
        for key in [k for k, r in self._records.items() if _kept_until(r) <= now]:
            del self._records[key]
        for key in [k for k, c in self._counters.items() if c[1] is not None and c[1] <= now]:
            del self._counters[key]

    # ------------------------------------------------------------------ contract
    def claim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        check_key(key)
        lease_us = duration_us(lease, "lease")
        keep_for = keep_us(keep)
        payload = check_payload(payload)
        now = _mono_us()
        with self._lock:
            self._tick(now)
            rec = self._records.get(key)
            if rec is not None and rec[_END] > now:
                status: Literal["done", "busy"] = "done" if rec[_STATE] == "done" else "busy"
                result = decode_result(rec[_RESULT]) if status == "done" else None
                return Claim(status, rec[_FENCE], _seconds(rec[_END] - now), rec[_PAYLOAD], result)
            expired = rec[_FENCE] if rec is not None and rec[_STATE] == "pending" and _kept_until(rec) > now else None
            if expired is not None and not take_abandoned:
                return Claim("abandoned", expired, _seconds(_kept_until(rec) - now), rec[_PAYLOAD])  # type: ignore[arg-type,index]
            fence = max((rec[_FENCE] + 1) if rec is not None else 1, _wall_us())
            end = now + lease_us
            self._records[key] = ["pending", fence, end, payload, None, keep_for]
        return Claim("acquired", fence, _seconds(end - now), payload, expired_holder=expired)

    def complete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        check_key(key)
        ttl_us = duration_us(ttl, "ttl")
        text = encode_result(result)  # before the lock: an unencodable result changes nothing
        now = _mono_us()
        with self._lock:
            old = self._records.get(key)
            if old is not None and old[_END] > now:
                if old[_FENCE] != fence:
                    raise lease_lost(key, fence, f"{old[_STATE]} under fence {old[_FENCE]}")
                if old[_STATE] == "done":
                    return  # already completed under this fence: a retried complete
            payload = old[_PAYLOAD] if old is not None and old[_FENCE] == fence else None
            self._records[key] = ["done", fence, now + ttl_us, payload, text, 0]
        self.waiters.notify(key)

    def release(self, key: str, fence: int) -> bool:
        check_key(key)
        now = _mono_us()
        with self._lock:
            rec = self._records.get(key)
            if rec is None:
                return False
            live = rec[_END] > now
            if rec[_FENCE] != fence:
                if live:
                    raise lease_lost(key, fence, f"{rec[_STATE]} under fence {rec[_FENCE]}")
                return False
            if rec[_STATE] == "done":
                return False
            del self._records[key]
        self.waiters.notify(key)
        return True

    def renew(self, key: str, fence: int, *, lease: float) -> float:
        check_key(key)
        end_us = duration_us(lease, "lease")
        now = _mono_us()
        end = now + end_us
        with self._lock:
            rec = self._records.get(key)
            if rec is not None and rec[_END] > now and (rec[_FENCE] != fence or rec[_STATE] == "done"):
                raise lease_lost(key, fence, f"{rec[_STATE]} under fence {rec[_FENCE]}")
            if rec is not None and rec[_FENCE] == fence and rec[_STATE] == "pending":
                rec[_END] = end
            else:  # free: re-create it under the caller's fence
                self._records[key] = ["pending", fence, end, None, None, 0]
        return lease

    def get(self, key: str) -> Record | None:
        check_key(key)
        now = _mono_us()
        with self._lock:
            rec = self._live(key, now)
            if rec is None:
                return None
            state, fence, end, payload, text, _keep = rec
        return Record(state, fence, _seconds(end - now), payload, decode_result(text))

    def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        check_key(key)
        ttl_us = None if ttl is None else duration_us(ttl, "ttl")
        now = _mono_us()
        with self._lock:
            self._tick(now)
            ctr = self._counters.get(key)
            if ctr is None or (ctr[1] is not None and ctr[1] <= now):
                ctr = self._counters[key] = [0, None if ttl_us is None else now + ttl_us]
            ctr[0] += amount
            return ctr[0]

    # The memory store never blocks for longer than a dict operation: no threads needed.
    async def aclaim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        return self.claim(key, lease=lease, payload=payload, keep=keep, take_abandoned=take_abandoned)

    async def acomplete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        self.complete(key, fence, result, ttl=ttl)

    async def arelease(self, key: str, fence: int) -> bool:
        return self.release(key, fence)

    async def arenew(self, key: str, fence: int, *, lease: float) -> float:
        return self.renew(key, fence, lease=lease)

    async def aget(self, key: str) -> Record | None:
        return self.get(key)

    async def aincr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        return self.incr(key, amount, ttl=ttl)


_default: MemoryBackend | None = None
_default_lock = threading.Lock()
_default_pid = 0


def default_backend() -> MemoryBackend:
    """The process-wide ``MemoryBackend`` used when ``store=None``.

    One shared instance, so that every ``Idempotency(None)`` and ``@idempotent`` in a process
    sees the same keys (a fresh store per helper would make them unable to see each other).
    A forked child gets its own: the parent's records and locks do not belong to it.
    """
    global _default, _default_pid
    pid = os.getpid()
    if _default is None or _default_pid != pid:
        with _default_lock:
            if _default is None or _default_pid != pid:
                _default, _default_pid = MemoryBackend(), pid
    return _default
