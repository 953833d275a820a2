"""``session_lease`` across processes: the turns of one session never overlap.

Four processes (two sync, two async) run turns of the same session id on a shared SQLite
file or Redis; each turn writes its start and end times to one shared file. The turns must
form a strict sequence. The same processes without the lease overlap, so the check is real.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dupguard.runtime import GuardTimeout, LeaseLost, MemoryBackend, SQLiteBackend, asession_lease, session_lease

TURNS = r"""
import asyncio, json, os, sys, time
from dupguard.runtime import PostgresBackend, RedisBackend, SQLiteBackend, asession_lease, session_lease

spec = json.loads(sys.argv[1])
mode = sys.argv[2]
if spec["kind"] == "sqlite":
    store = SQLiteBackend(spec["where"])
elif spec["kind"] == "postgres":
    store = PostgresBackend(spec["where"], table=spec["table"])
else:
    store = RedisBackend(spec["where"], prefix=spec["prefix"])

def note(what):  # one write(2) per line in append mode: lines never interleave
    fd = os.open(spec["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, f"{what} {time.time():.6f} {os.getpid()}\n".encode())
    os.close(fd)

while not os.path.exists(spec["go"]):
    time.sleep(0.005)

def turn():
    note("start")
    time.sleep(spec["turn"])  # read the history, call the model, append
    note("end")

async def aturn():
    note("start")
    await asyncio.sleep(spec["turn"])
    note("end")

async def amain():
    for _ in range(spec["turns"]):
        async with asession_lease(store, "conv-42", ttl=2.0):
            await aturn()

if mode == "none":
    for _ in range(spec["turns"]):
        turn()
elif mode == "sync":
    for _ in range(spec["turns"]):
        with session_lease(store, "conv-42", ttl=2.0):
            turn()
else:
    asyncio.run(amain())
"""


def intervals(log: Path) -> list[tuple[float, float, int]]:
    """(start, end, pid) per turn, from the shared log, in start order."""
    open_turns: dict[int, float] = {}
    out = []
    for line in log.read_text().splitlines():
        what, stamp, pid = line.split()
        if what == "start":
            open_turns[int(pid)] = float(stamp)
        else:
            out.append((open_turns.pop(int(pid)), float(stamp), int(pid)))
    return sorted(out)


def overlaps(turns: list[tuple[float, float, int]]) -> int:
    return sum(1 for before, after in itertools.pairwise(turns) if after[0] < before[1])


def run_four(spec: dict, modes: list[str], tmp_path: Path) -> list[tuple[float, float, int]]:
    spec = {**spec, "log": str(tmp_path / "turns.log"), "go": str(tmp_path / "go"), "turn": 0.03, "turns": 5}
    procs = [subprocess.Popen([sys.executable, "-c", TURNS, json.dumps(spec), mode]) for mode in modes]
    time.sleep(0.5)  # let them all import and wait at the gate
    (tmp_path / "go").touch()
    for proc in procs:
        assert proc.wait(120) == 0
    return intervals(tmp_path / "turns.log")


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def shared_spec(request: pytest.FixtureRequest, tmp_path: Path) -> dict:
    """What a child process needs to open a store shared with the others."""
    if request.param == "sqlite":
        return {"kind": "sqlite", "where": str(tmp_path / "leases.sqlite3")}
    if request.param == "postgres":
        return {"kind": "postgres", "where": request.getfixturevalue("postgres_dsn"), "table": f"s_{time.time_ns()}"}
    return {"kind": "redis", "where": request.getfixturevalue("redis_url"), "prefix": f"s:{time.time_ns()}:"}


def test_four_processes_run_the_turns_of_one_session_one_at_a_time(shared_spec, tmp_path):
    spec = shared_spec
    turns = run_four(spec, ["sync", "sync", "async", "async"], tmp_path)
    assert len(turns) == 20 and len({pid for _, _, pid in turns}) == 4
    assert overlaps(turns) == 0, turns


def test_without_the_lease_the_same_turns_overlap(tmp_path):
    turns = run_four({"kind": "sqlite", "where": str(tmp_path / "unused.sqlite3")}, ["none"] * 4, tmp_path)
    assert len(turns) == 20 and overlaps(turns) > 0


def test_threads_and_loops_in_one_process_wait_their_turn():
    store = MemoryBackend()
    active, peak, done = [0], [0], []
    lock = threading.Lock()

    def enter():
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])

    def leave():
        with lock:
            active[0] -= 1

    def sync_turn():
        with session_lease(store, "s", ttl=5):
            enter()
            time.sleep(0.01)
            leave()
        done.append(1)

    async def async_turns():
        for _ in range(3):
            async with asession_lease(store, "s", ttl=5):
                enter()
                await asyncio.sleep(0.01)
                leave()
            done.append(1)

    threads = [threading.Thread(target=sync_turn) for _ in range(6)]
    threads += [threading.Thread(target=asyncio.run, args=(async_turns(),)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) == 12 and peak[0] == 1


def test_a_waiting_turn_times_out_with_a_retryable_error():
    store = MemoryBackend()
    with session_lease(store, "s", ttl=5):
        started = time.monotonic()
        with pytest.raises(GuardTimeout) as caught, session_lease(store, "s", timeout=0.1):
            pass
        assert 0.05 < time.monotonic() - started < 2
        assert caught.value.retryable and isinstance(caught.value, TimeoutError)
    with session_lease(store, "s", timeout=0.1):  # released: free again at once
        pass
    with pytest.raises(ValueError), session_lease(store, ""):
        pass


HOLDER = r"""
import sys, time
from dupguard.runtime import SQLiteBackend, session_lease
with session_lease(SQLiteBackend(sys.argv[1]), "conv-7", ttl=1.0) as lease:
    print(lease.fence, flush=True)
    time.sleep(60)  # killed here
"""


def test_a_killed_holder_loses_the_session_after_its_ttl(tmp_path):
    where = str(tmp_path / "s.sqlite3")
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, where], stdout=subprocess.PIPE, text=True)
    try:
        old_fence = int(proc.stdout.readline())  # type: ignore[union-attr]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    store = SQLiteBackend(where)
    started = time.monotonic()
    with session_lease(store, "conv-7", ttl=1.0, timeout=10) as lease:
        waited = time.monotonic() - started
        assert lease.fence > old_fence
    assert waited <= 1.5
    store.close()


def test_a_turn_that_outlived_its_lease_learns_it_on_leaving(tmp_path):
    store = SQLiteBackend(tmp_path / "s.sqlite3")
    held, leave = threading.Event(), threading.Event()

    def next_turn():
        with session_lease(store, "conv-9", ttl=5, timeout=5):
            held.set()
            leave.wait(5)

    thread = threading.Thread(target=next_turn)
    # a stuck turn (no renewals); leaving it raises LeaseLost
    with pytest.raises(LeaseLost), session_lease(store, "conv-9", ttl=0.2, heartbeat=0) as stuck:
        thread.start()
        assert held.wait(5)  # the next turn took the session once the lease ran out
        with pytest.raises(LeaseLost):
            stuck.check()
    leave.set()
    thread.join()
    store.close()
