"""Driver of the exactly-once kill test (``test_kill.py``): workers killed with SIGKILL at random.

    python tests/runtime/kill_driver.py '<json spec>'

One process imports everything once, then forks ``workers`` worker processes (each a real
process with its own store connection and heartbeat thread) that all go through the same
``keys`` keys with ``Idempotency(store).run(key, effect)``. While they work, the driver sends
SIGKILL to a random worker at random moments (exponential intervals, mean ``kill_every``
seconds) and forks a replacement, which starts the key list over. A round ends when every
worker has seen every key completed (run or replayed); the next round uses fresh keys. The
driver stops starting rounds after ``seconds`` (one round when 0) and prints its figures as
JSON, including the pids it killed.

``effect`` does some work (a random sleep up to ``work`` seconds: kills land anywhere), then
appends ``<key> <nonce>`` to the effects file with one ``write`` on an ``O_APPEND`` descriptor
and ``fsync``: the side effect, counted on disk. A worker whose ``run`` returned its own nonce
(it ran the key and recorded it) appends the same line to the completions file (no ``fsync``:
the page cache survives a SIGKILL). Keys contain
``:`` on purpose, so the escaped key composition is exercised too.

``policy`` is ``Idempotency``'s ``on_abandoned`` for a key whose holder was killed before its
completion was recorded: ``"rerun"`` (at-least-once), ``"raise"`` (at-most-once: the worker
appends ``<key> <fence>`` to the ``unknown`` file and moves on) or ``"reconcile"``: the new
holder reads the effects file, the side effect's own record, for the key's effect (and appends
``<key> <nonce or ->`` to the ``reconciled`` file): a nonce found there is recorded as the
key's result, none means the effect did not happen and the key runs.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
import traceback

from dupguard.runtime import (
    MISSING,
    Idempotency,
    IdempotencyInProgress,
    LeaseLost,
    OutcomeUnknown,
    RedisBackend,
    SQLiteBackend,
)


def open_store(spec: dict):
    if spec["kind"] == "sqlite":
        return SQLiteBackend(spec["where"])
    return RedisBackend(spec["where"], prefix=spec["prefix"])


def append(fd: int, line: str, *, sync: bool = False) -> None:
    os.write(fd, (line + "\n").encode())  # one write(2) on O_APPEND: lines never interleave
    if sync:  # what a SIGKILL cannot undo needs no fsync; the effect gets one all the same
        os.fsync(fd)


def effect_of(path: str, key: str) -> str | None:
    """The nonce of ``key``'s effect in the effects file (the last, if there were several)."""
    found = None
    with open(path) as f:
        for line in f:
            k, _, nonce = line.rstrip("\n").partition(" ")
            if k == key:
                found = nonce
    return found


def worker(spec: dict, keys: list[str]) -> None:
    pid = os.getpid()
    rng = random.Random(pid ^ time.monotonic_ns())
    store = open_store(spec)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    effects = os.open(spec["effects"], flags, 0o644)
    completions = os.open(spec["completions"], flags, 0o644)
    lost = os.open(spec["lost"], flags, 0o644)
    unknown = os.open(spec["unknown"], flags, 0o644)
    reconciled = os.open(spec["reconciled"], flags, 0o644)

    def reconcile(key: str):
        nonce = effect_of(spec["effects"], key)
        append(reconciled, f"{key} {nonce or '-'}")
        return nonce if nonce is not None else MISSING

    policy = reconcile if spec["policy"] == "reconcile" else spec["policy"]
    idem = Idempotency(store, lease=spec["lease"], on_in_progress="raise", on_abandoned=policy)
    pending = list(keys)
    rng.shuffle(pending)
    attempt = 0
    while pending:
        for key in list(pending):
            attempt += 1
            nonce = f"{pid}-{attempt}"

            def effect(key: str = key, nonce: str = nonce) -> str:
                time.sleep(rng.uniform(0, spec["work"]))
                append(effects, f"{key} {nonce}", sync=True)
                return nonce

            try:
                result = idem.run(key, effect)
            except IdempotencyInProgress:
                continue  # another worker holds it: come back to it later
            except LeaseLost:  # this worker stalled past its lease and was taken over
                append(lost, f"{key} {nonce}")
                continue
            except OutcomeUnknown as exc:  # at most once: a killed holder's key is not run again
                append(unknown, f"{key} {exc.fence}")
                pending.remove(key)
                continue
            if result == nonce:
                append(completions, f"{key} {nonce}")
            pending.remove(key)
        if pending:
            time.sleep(0.005)


def spawn(spec: dict, keys: list[str]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            worker(spec, keys)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stderr.flush()
            os._exit(code)
    return pid


def run_round(spec: dict, keys: list[str], rng: random.Random, figures: dict) -> None:
    live = {spawn(spec, keys) for _ in range(spec["workers"])}
    start = time.monotonic()
    stop_killing = start + spec["kill_for"]
    give_up = start + spec["round_timeout"]
    next_kill = start + rng.expovariate(1 / spec["kill_every"])
    while live:
        now = time.monotonic()
        if now > give_up:
            for pid in live:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            figures["failures"].append(f"a round did not finish within {spec['round_timeout']}s")
            return
        if now >= next_kill and now < stop_killing:
            victim = rng.choice(sorted(live))
            os.kill(victim, signal.SIGKILL)
            _, status = os.waitpid(victim, 0)
            live.discard(victim)
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
                figures["killed"].append(victim)  # it was still running: really killed
            elif os.WEXITSTATUS(status) != 0:
                figures["failures"].append(f"worker {victim} exited with {os.WEXITSTATUS(status)}")
                continue
            else:
                continue  # it had just finished: nothing to replace
            live.add(spawn(spec, keys))
            next_kill = now + rng.expovariate(1 / spec["kill_every"])
            continue
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.002)
            continue
        live.discard(pid)
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            figures["failures"].append(f"worker {pid} ended with status {status}")


def main() -> None:
    spec = json.loads(sys.argv[1])
    rng = random.Random(spec.get("seed"))
    figures: dict = {"rounds": 0, "keys": [], "killed": [], "failures": []}
    start = time.monotonic()
    while True:
        keys = [f"r{figures['rounds']}:key:{i}" for i in range(spec["keys"])]
        run_round(spec, keys, rng, figures)
        figures["rounds"] += 1
        figures["keys"].extend(keys)
        if figures["failures"] or time.monotonic() - start >= spec["seconds"]:
            break
    figures["elapsed"] = round(time.monotonic() - start, 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
