"""The Celery app ``test_consumers.py`` runs real workers of (``python -m celery -A celery_app``).

Configured by ``DUPGUARD_CELERY_TEST`` (JSON): ``broker`` (a Redis URL), ``queue``, ``store``
(a SQLite file shared by the workers) and ``effects`` (a directory). Both tasks append one line
to ``effects/<task name>`` per execution of their body: the side effect the test counts.
``refund_once`` is guarded by ``celery_once``; ``refund_plain`` is the same task without it.

The Redis transport is set to redeliver fast: an unacknowledged message becomes visible again
one second after its delivery (``visibility_timeout``) and workers look for such messages
every half second, so a killed worker's task is redelivered within a second or two.

``task_postrun`` runs after the body and before Celery acks (``acks_late``). On a task's first
delivery it notes that it got there and then holds the worker, so the test can kill the worker
in exactly the window where the effect happened but the ack did not: the redelivery that a
deploy or an OOM kill causes in production.
"""

from __future__ import annotations

import json
import os
import time

from celery import Celery
from celery.signals import task_postrun

from dupguard.runtime import SQLiteBackend
from dupguard.runtime.consumers import celery_once

CONFIG = json.loads(os.environ["DUPGUARD_CELERY_TEST"])

app = Celery("dupguard_celery_test", broker=CONFIG["broker"])
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    task_ignore_result=True,
    task_default_queue=CONFIG["queue"],
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=True,
    broker_transport_options={
        "visibility_timeout": 1,
        "unacked_restore_interval": 0.5,
        "unacked_restore_throttle": 1,
    },
)

store = SQLiteBackend(CONFIG["store"])


def record(name: str, line: str) -> None:
    fd = os.open(os.path.join(CONFIG["effects"], name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


@app.task(name="refund_once")
@celery_once(store, key=lambda order_id: f"refund:{order_id}", lease=2.0)
def refund_once(order_id: str) -> str:
    record("refund_once", f"{os.getpid()} {order_id}")
    return f"refunded {order_id}"


@app.task(name="refund_plain")
def refund_plain(order_id: str) -> str:
    record("refund_plain", f"{os.getpid()} {order_id}")
    return f"refunded {order_id}"


@task_postrun.connect
def hold_the_first_ack(task_id=None, task=None, retval=None, **_):
    record("postrun", json.dumps({"pid": os.getpid(), "task": task.name, "retval": retval}))
    marker = os.path.join(CONFIG["effects"], f"held-{task_id}")
    if not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(60)  # the test kills this worker now
