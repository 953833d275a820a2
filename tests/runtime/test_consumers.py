"""Queue consumers with real brokers: Celery workers on Redis, and plain loops on a Redis list.

The Celery test runs real worker processes (``celery_app.py``), kills one with SIGKILL after
the task's side effect and before its ack, lets the Redis transport redeliver the message to
a second worker, and counts the side effect: once with ``celery_once``, twice without it (the
same scenario on the unguarded task shows the redelivery is real).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from dupguard.runtime import IdempotencyKeyMissing, IdempotencyPayloadMismatch, MemoryBackend, SQLiteBackend
from dupguard.runtime.consumers import Handled, ahandle_once, celery_once, handle_once

HERE = Path(__file__).resolve().parent


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# ---------------------------------------------------------------------------- Celery


class Worker:
    def __init__(self, env: dict, log: Path) -> None:
        self.log = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "--pool", "solo", "--loglevel", "warning"]
            + ["--without-heartbeat", "--without-gossip", "--without-mingle"],
            cwd=HERE,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:  # pragma: no cover
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.log.close()


@pytest.mark.parametrize("task,runs", [("refund_once", 1), ("refund_plain", 2)])
def test_celery_task_killed_before_its_ack_is_redelivered_and_runs_once(task, runs, make_redis_server, tmp_path):
    broker = make_redis_server()
    effects = tmp_path / "effects"
    effects.mkdir()
    config = {
        "broker": broker.url,
        "queue": f"q-{uuid.uuid4().hex[:8]}",
        "store": str(tmp_path / "leases.sqlite3"),
        "effects": str(effects),
    }
    env = {**os.environ, "DUPGUARD_CELERY_TEST": json.dumps(config)}
    from celery import Celery

    producer = Celery("producer", broker=broker.url)
    first = Worker(env, tmp_path / "worker1.log")
    second = None
    try:
        producer.send_task(task, args=["order-50"], queue=config["queue"])
        # the body ran, the postrun hook holds the ack: kill the worker there
        wait_for(lambda: len(list(effects.glob("held-*"))) == 1, 60, "the first delivery to finish its body")
        assert len(lines(effects / task)) == 1
        first.kill()
        second = Worker(env, tmp_path / "worker2.log")
        # the redelivered message reaches the second worker's postrun (which no longer holds)
        wait_for(lambda: len(lines(effects / "postrun")) == 2, 60, "the redelivery to be processed")
        postruns = [json.loads(line) for line in lines(effects / "postrun")]
        assert postruns[1]["pid"] == second.proc.pid and postruns[1]["task"] == task
        assert postruns[1]["retval"] == "refunded order-50"  # a duplicate gets the recorded result
        assert len(lines(effects / task)) == runs
    finally:
        first.kill()
        if second is not None:
            second.kill()
        producer.close()


def test_celery_once_outside_a_worker_uses_the_business_key(tmp_path):
    store = SQLiteBackend(tmp_path / "s.sqlite3")
    calls = []

    @celery_once(store, key=lambda order_id, amount: f"refund:{order_id}")
    def refund(order_id, amount):
        calls.append(order_id)
        return amount

    assert refund("o1", 5) == 5 and refund("o1", 5) == 5
    assert calls == ["o1"]
    with pytest.raises(IdempotencyPayloadMismatch):
        refund("o1", 6)  # the same work sent with other arguments: a producer bug

    @celery_once(store)
    def no_key():
        return 1

    with pytest.raises(IdempotencyKeyMissing):  # no task id outside a worker, and no key given
        no_key()
    store.close()


# ---------------------------------------------------------------------------- plain loops

CONSUMER = r"""
import json, os, sys, time
import redis
from dupguard.runtime import RedisBackend, SQLiteBackend
from dupguard.runtime.consumers import handle_once

spec = json.loads(sys.argv[1])
queue = redis.Redis.from_url(spec["broker"])
store = SQLiteBackend(spec["where"]) if spec["kind"] == "sqlite" else RedisBackend(spec["where"], prefix=spec["prefix"])

def effect(message_id):
    fd = os.open(spec["effects"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, f"{message_id}\n".encode())
    os.close(fd)
    time.sleep(spec["work"])
    return message_id

while True:
    item = queue.brpop(spec["queue"], timeout=spec["idle"])
    if item is None:
        break
    message_id = item[1].decode()
    outcome = handle_once(store, message_id, lambda: effect(message_id), lease=spec["lease"])
    print(json.dumps({"pid": os.getpid(), "id": message_id, "status": outcome.status}), flush=True)
    if not outcome.ack:  # another consumer is on it: the broker redelivers it later
        time.sleep(0.1)
        queue.lpush(spec["queue"], message_id)
"""


def test_four_consumers_on_an_at_least_once_queue_act_once_per_message(shared_backend, redis_server, tmp_path):
    import redis

    _store, spec = shared_backend
    queue = f"jobs-{uuid.uuid4().hex[:8]}"
    ids = [f"m{i}" for i in range(20)]
    client = redis.Redis.from_url(redis_server.url)
    client.lpush(queue, *ids, *ids)  # every message delivered twice, as a redelivery does
    spec = {**spec, "broker": redis_server.url, "queue": queue, "effects": str(tmp_path / "effects")}
    spec.update(work=0.05, idle=1.0, lease=5.0)
    procs = [
        subprocess.Popen([sys.executable, "-c", CONSUMER, json.dumps(spec)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outcomes = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        outcomes += [json.loads(line) for line in out.splitlines()]
    done = sorted(lines(tmp_path / "effects"))
    assert done == sorted(ids)  # each message acted on exactly once
    assert sum(o["status"] == "ran" for o in outcomes) == 20
    assert sum(o["status"] == "duplicate" for o in outcomes) == 20
    assert len({o["pid"] for o in outcomes if o["status"] == "ran"}) > 1  # the work was shared
    client.close()


KILLED = r"""
import json, os, sys, time
from dupguard.runtime import SQLiteBackend
from dupguard.runtime.consumers import handle_once

spec = json.loads(sys.argv[1])

def slow():
    open(spec["started"], "w").close()
    time.sleep(60)  # killed here, before the effect

handle_once(SQLiteBackend(spec["where"]), "m1", slow, lease=1.0)
"""


def test_a_consumer_killed_mid_message_loses_it_to_the_next_after_its_lease(tmp_path):
    spec = {"where": str(tmp_path / "s.sqlite3"), "started": str(tmp_path / "started")}
    proc = subprocess.Popen([sys.executable, "-c", KILLED, json.dumps(spec)])
    try:
        wait_for(lambda: os.path.exists(spec["started"]), 60, "the consumer to start the message")
        store = SQLiteBackend(spec["where"])
        busy = handle_once(store, "m1", lambda: "second")
        assert busy == Handled("busy", retry_after=busy.retry_after) and 0 < busy.retry_after <= 1.0
        assert not busy.ack
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    time.sleep(busy.retry_after + 0.05)
    taken = handle_once(store, "m1", lambda: "second")
    assert taken.status == "ran" and taken.result == "second"
    again = handle_once(store, "m1", lambda: "third")
    assert again == Handled("duplicate", "second") and again.ack
    store.close()


def test_ahandle_once_and_a_failing_handler():
    import asyncio

    store = MemoryBackend()

    async def work():
        return {"ok": True}

    assert asyncio.run(ahandle_once(store, "a1", work)) == Handled("ran", {"ok": True})
    assert asyncio.run(ahandle_once(store, "a1", work)) == Handled("duplicate", {"ok": True})

    def broken():
        raise ValueError("transient")

    with pytest.raises(ValueError):
        handle_once(store, "b1", broken)
    assert handle_once(store, "b1", lambda: 7) == Handled("ran", 7)  # given back, so it runs again
    with pytest.raises(IdempotencyKeyMissing):
        handle_once(store, "", lambda: 1)


def test_the_celery_app_module_does_not_import_celery_through_the_runtime():
    """``dupguard.runtime.consumers`` imports Celery only inside a running task."""
    out = subprocess.run(
        [sys.executable, "-c", "import sys, dupguard.runtime.consumers; print('celery' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "False", out.stderr
