"""Queue consumers that act once per message: claim the message id with a lease first.

Queues deliver at least once. An SQS message comes back when its visibility timeout ends, a
Redis Streams entry stays pending, a Celery task with ``acks_late=True`` is delivered again
when its worker dies before the ack (and, on the Redis broker, when it runs longer than the
``visibility_timeout``). Each redelivery runs the agent again unless something shared by
every worker says "this message was already handled" (rule DUP504).

:func:`handle_once` is that something for a hand-written consumer loop, and
:func:`celery_once` for Celery tasks. Both claim ``(scope, message id)`` in a store shared by
the workers (``SQLiteBackend`` on one host, ``RedisBackend`` for several) through
:class:`~dupguard.runtime.Idempotency`, so a message is handled under a lease that a heartbeat
renews while the handler runs:

* the **first** delivery runs the handler and records it as done for ``keep`` seconds;
* a **redelivery after it finished** (the worker died between the effect and the ack) finds
  it done and does not run the handler: ack it and move on;
* a **redelivery while it runs** (a visibility timeout shorter than the handler) finds it
  busy: leave it unacknowledged (or retry it later), the first worker is still on it;
* a handler that **raises** gives the message back: the broker's redelivery (or retry) runs it
  again, as it should, since the handler did not finish;
* a worker **killed** mid-handler stops renewing its lease; after ``lease`` seconds the
  redelivered message is taken over and handled (with a higher fence: see ``Lease``).

What the lease cannot know is whether a killed handler had already made its effect: make the
effect itself idempotent (an idempotency key passed to the payment API, ``@idempotent`` or a
``ToolCallLedger`` around each tool call) when a worker can die between the effect and the
record. ``keep`` must outlive every redelivery of a message (an SQS message's retention, the
broker's retry window).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from .backends import Backend
from .errors import IdempotencyInProgress, IdempotencyKeyMissing
from .idempotency import Idempotency

__all__ = ["Handled", "ahandle_once", "celery_once", "handle_once"]

T = TypeVar("T")

WEEK = 7 * 86400.0


@dataclass(frozen=True)
class Handled:
    """What :func:`handle_once` did with a message.

    ``status`` is ``"ran"`` (the handler ran now; ``result`` is its value), ``"duplicate"``
    (handled before; ``result`` is the recorded value) or ``"busy"`` (another consumer is
    handling it right now, for up to ``retry_after`` seconds more).
    """

    status: Literal["ran", "duplicate", "busy"]
    result: Any = None
    retry_after: float = 0.0

    @property
    def ack(self) -> bool:
        """Whether the consumer should acknowledge (delete) the message now: yes unless busy,
        where the message must stay with the broker until the other consumer finishes."""
        return self.status != "busy"


def _idempotency(store: Backend, lease: float, keep: float) -> Idempotency:
    return Idempotency(store, ttl=keep, lease=lease, on_in_progress="raise")


def _message_key(scope: str, message_id: Any) -> str:
    if message_id is None or message_id == "":
        raise IdempotencyKeyMissing("a message id is required to handle a message once")
    return f"{scope}:{message_id}"


def handle_once(
    store: Backend,
    message_id: str,
    handler: Callable[[], T],
    *,
    lease: float = 60.0,
    keep: float = WEEK,
    scope: str = "queue",
) -> Handled:
    """Run ``handler()`` for ``message_id`` unless some consumer already did (or is doing it).

    The fix DUP504 points to, for a hand-written loop::

        while True:
            job = queue.get()
            outcome = handle_once(store, job.id, lambda: handle_request(job.prompt))
            if outcome.ack:
                queue.ack(job.id)

    ``handler`` raising propagates (the message was given back; do not ack it). Its result
    must be a JSON value (it is recorded and handed to duplicates).
    """
    ran = False

    def run() -> T:
        nonlocal ran
        ran = True
        return handler()

    try:
        value = _idempotency(store, lease, keep).run(_message_key(scope, message_id), run)
    except IdempotencyInProgress as exc:
        return Handled("busy", retry_after=getattr(exc, "retry_after", lease))
    return Handled("ran" if ran else "duplicate", value)


async def ahandle_once(
    store: Backend,
    message_id: str,
    handler: Callable[[], Awaitable[T]],
    *,
    lease: float = 60.0,
    keep: float = WEEK,
    scope: str = "queue",
) -> Handled:
    """:func:`handle_once` for async consumers (``aiobotocore``, ``redis.asyncio``, aio-pika):
    ``await handler()`` runs once per message; the lease is renewed on the running loop."""
    ran = False

    async def run() -> T:
        nonlocal ran
        ran = True
        return await handler()

    try:
        value = await _idempotency(store, lease, keep).arun(_message_key(scope, message_id), run)
    except IdempotencyInProgress as exc:
        return Handled("busy", retry_after=getattr(exc, "retry_after", lease))
    return Handled("ran" if ran else "duplicate", value)


def celery_once(
    store: Backend,
    *,
    key: Callable[..., Any] | None = None,
    lease: float = 60.0,
    keep: float = WEEK,
    scope: str | None = None,
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Make a Celery task run its body once per key, across workers and redeliveries.

    Put it *under* ``@app.task``, which should redeliver work whose worker died::

        @app.task(bind=True, acks_late=True, reject_on_worker_lost=True)
        @celery_once(store, key=lambda self, order_id: f"refund:{order_id}")
        def refund(self, order_id): ...

    ``key(*args, **kwargs)`` (the task's arguments, ``self`` first for bound tasks) names the
    work; by default it is the task id, which a redelivery and ``self.retry()`` keep, but two
    ``apply_async`` calls for the same work do not share: give a business key when producers
    may send the same work twice. The same key with other arguments raises
    ``IdempotencyPayloadMismatch`` (a producer bug). A delivery that finds the key done returns
    the recorded result without running the body; one that finds it busy raises
    ``self.retry(countdown=…)`` (the first worker is still on it; if it dies, the retry takes
    over once its lease ends), which counts toward the task's ``max_retries``. Results must be
    JSON values. Celery is imported only when the task runs, not by this module.
    """

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        namespace = scope or f"celery:{fn.__module__}.{fn.__qualname__}"
        idem = _idempotency(store, lease, keep)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> T:
            from celery import current_task  # a worker runs this: Celery is there

            task = current_task._get_current_object() if current_task else None
            if key is not None:
                name = key(*args, **kwargs)
            else:
                name = getattr(getattr(task, "request", None), "id", None)
            plain = args[1:] if args and task is not None and args[0] is task else args
            try:
                return idem.run(
                    _message_key(namespace, name),
                    lambda: fn(*args, **kwargs),
                    payload={"args": list(plain), "kwargs": kwargs},
                )
            except IdempotencyInProgress as exc:
                if task is None or task.request.called_directly:
                    raise
                countdown = max(1, math.ceil(getattr(exc, "retry_after", lease)))
                raise task.retry(countdown=countdown, exc=exc) from exc

        return wrapper

    return decorate
