"""DUP504 queue-without-lease: jobs that can be delivered twice, running agents.

Two shapes hand one chat turn to a second worker:

- **a hand-written consumer**: it takes a job from a broker that redelivers unacknowledged
  work (SQS ``receive_message`` — the message reappears when its visibility timeout runs out;
  beanstalkd ``reserve`` — the job is released after its TTR; Redis ``xreadgroup`` pending
  entries, ``brpoplpush``/``blmove`` reliable queues; AMQP ``basic_get``; or any ``get`` that
  is followed by an explicit ``ack``), runs an agent, then acknowledges. If the run outlives
  the lease (or the worker dies after the tools ran), another worker gets the same job and
  runs the tools again (``job = queue.get(); handle_request(job.prompt);
  queue.ack(job.id)``). A renewed lease (``turn_lease``, ``reserve_with_lease``,
  ``change_message_visibility``/``touch`` heartbeats) or an idempotency check makes it safe;
- **a redelivering task**: a Celery task with ``acks_late=True`` (the message is re-queued when
  the worker dies mid-task) or ``autoretry_for=``/``self.retry()`` (the whole task runs again
  after a failure), app-wide ``task_acks_late``, an RQ job with ``retry=Retry(...)``, a Huey
  task with ``retries=``, a Dramatiq actor (its Retries middleware retries failures, 20 times
  by default, unless ``max_retries=0``), that runs an agent with no idempotency check.

Sources: Celery 5.4 task options (``acks_late``, ``autoretry_for``, ``max_retries``,
``reject_on_worker_lost``); Dramatiq 1.17 ``Retries`` middleware (``max_retries`` default 20);
RQ 2.x ``Retry``; Huey 2.5 ``retries``; boto3 SQS ``receive_message`` / ``change_message_visibility``;
greenstalk ``reserve``/``touch``; redis-py ``xreadgroup``/``xack``, ``blmove``/``lrem``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...semantic import entrypoints as ep
from ...semantic.jobs import QUEUE_TAKES, REDELIVERING_TAKES, queue_like
from ...semantic.model import Call, Decorator, Function, Model
from ...semantic.runs import Run, call_guarded, call_index, guarded_in, helper_runs, once_context, run_at
from ..registry import Finding, RuleContext, rule
from . import where

if TYPE_CHECKING:
    import libcst as cst

# of the generic take methods (QUEUE_TAKES), the ones that redeliver on their own (beanstalkd TTR, Pub/Sub ack deadline)
REDELIVERING_QUEUE_TAKES = {"reserve", "pull", "receive"}
ACK_METHODS = {
    "ack",
    "acknowledge",
    "basic_ack",
    "delete_message",
    "delete_message_batch",
    "xack",
    "lrem",
    "complete_message",
    "ack_message",
    "mark_done",
    "acknowledge_message",
}
RENEW_METHODS = {
    "change_message_visibility",
    "change_message_visibility_batch",
    "touch",
    "renew",
    "extend_lease",
    "renew_lease",
    "heartbeat",
    "modify_ack_deadline",
    "renew_message_lock",
    "xclaim",
    "xautoclaim",
}
CELERY_ONLY_OPTIONS = {
    "acks_late",
    "autoretry_for",
    "reject_on_worker_lost",
    "retry_backoff",
    "retry_kwargs",
    "acks_on_failure_or_timeout",
    "retry_jitter",
    "retry_backoff_max",
}
IN_PROCESS_QUEUES = {
    "queue.Queue",
    "queue.SimpleQueue",
    "queue.LifoQueue",
    "queue.PriorityQueue",
    "asyncio.Queue",
    "asyncio.LifoQueue",
    "asyncio.PriorityQueue",
    "multiprocessing.Queue",
    "multiprocessing.JoinableQueue",
    "multiprocessing.SimpleQueue",
    "janus.Queue",
}


@dataclass(eq=False)
class Redelivery:
    node: cst.CSTNode  # the take call or the task decorator
    shape: str  # "consumer" | "task"
    why: str  # "`sqs.receive_message(...)` redelivers …", "`acks_late=True`"
    run: Run


# ----------------------------------------------------------------------------- consumers


def _in_process(model: Model, call: Call) -> bool:
    receiver = call.receiver or ""
    if "." in receiver or "(" in receiver:
        return False
    binding = model.local_binding(receiver, call.function)
    vc = binding.value_call if binding is not None else None
    return vc is not None and vc.callee in IN_PROCESS_QUEUES


def _take_kind(model: Model, call: Call) -> str | None:
    """'redelivers' | 'needs-ack' when ``call`` takes a job from a broker, else None."""
    method = call.method
    if not method or not call.receiver:
        return None
    if "lease" in method or any("lease" in (a.keyword or "") for a in call.args):
        return None
    for kw in ("auto_ack", "no_ack"):  # AMQP: acknowledged on delivery, never redelivered
        arg = call.kw(kw)
        if arg is not None and getattr(arg.node, "value", None) == "True":
            return None
    if method in REDELIVERING_TAKES:
        return "redelivers"
    if method in QUEUE_TAKES and queue_like(call.receiver) and not _in_process(model, call):
        positional = [a for a in call.args if a.keyword is None]
        if method in ("get", "pop") and positional:
            return None  # dict.get(key), list.pop(i)
        return "redelivers" if method in REDELIVERING_QUEUE_TAKES else "needs-ack"
    return None


def _same_turn(take: Call, call: Call) -> bool:
    """Does ``call`` run in the iteration that took the job (inside the take's loops)?"""
    own = [lp for lp in take.loops if lp.function is take.function]
    return all(lp in call.loops for lp in own)


def consumers(model: Model) -> Iterator[Redelivery]:
    for take in model.calls:
        kind = _take_kind(model, take)
        if kind is None:
            continue
        fn = take.function
        later = [
            c
            for c in (fn.calls if fn is not None else model.calls)
            if c.function is fn and call_index(model, c) > call_index(model, take) and _same_turn(take, c)
        ]
        if kind == "needs-ack" and not any(c.method in ACK_METHODS for c in later):
            continue
        if any(c.method in RENEW_METHODS or once_context(c) for c in later) or once_context(take):
            continue
        for call in later:
            run = run_at(model, call)
            if run is not None and not call_guarded(model, call):
                why = f"`{take.receiver}.{take.method}(...)`"
                yield Redelivery(take.node, "consumer", why, run)
                break


# ----------------------------------------------------------------------------- tasks


def _kw(dec: Decorator, name: str):
    call = dec.call
    return call.kw(name) if call is not None else None


def _literal(arg) -> str | None:
    return getattr(arg.node, "value", None) if arg is not None else None


def _framework(model: Model, dec: Decorator) -> str | None:
    callee = dec.callee or ""
    text = dec.dotted or ""
    method = text.rsplit(".", 1)[-1]
    if callee.startswith("dramatiq."):
        return "dramatiq"
    if callee.startswith("rq."):
        return "rq"
    if callee.startswith("celery."):
        return "celery"
    if "." not in text or method not in ep.WORKER_METHODS:
        return None
    if method == "task" and dec.call is not None and any(a.keyword in CELERY_ONLY_OPTIONS for a in dec.call.args):
        return "celery"  # ``@app.task(acks_late=True)`` with ``app`` from the project's celery module
    receiver = text.rsplit(".", 1)[0]
    binding = model.module_binding(receiver)
    bound = (binding.value_call.callee or "") if binding is not None and binding.value_call is not None else ""
    if bound.startswith("huey.") or "huey" in receiver.lower():
        return "huey"
    if bound.startswith("celery.") or "celery" in receiver.lower():
        return "celery"
    return None


def _app_acks_late(model: Model) -> bool:
    """``app.conf.task_acks_late = True`` or ``app.conf.update(task_acks_late=True)``."""
    for b in model.bindings:
        if b.target.endswith("task_acks_late") and getattr(b.value, "value", None) == "True":
            return True
    for call in model.calls:
        arg = call.kw("task_acks_late")
        if arg is not None and _literal(arg) == "True":
            return True
    return False


def _redelivery(model: Model, fn: Function, dec: Decorator, framework: str) -> str | None:
    if framework == "celery":
        max_retries = _literal(_kw(dec, "max_retries"))
        acks_late = _literal(_kw(dec, "acks_late"))
        if acks_late == "True":
            return "`acks_late=True` (the broker re-queues the message when the worker dies mid-task)"
        if _kw(dec, "autoretry_for") is not None and max_retries != "0":
            return "`autoretry_for=` (the whole task runs again after a failure)"
        bind = _literal(_kw(dec, "bind")) == "True"
        if (
            bind
            and max_retries != "0"
            and any(c.method == "retry" and (c.receiver or "") == (fn.params[0] if fn.params else "") for c in fn.calls)
        ):
            return f"`{fn.params[0]}.retry()` (the whole task runs again after a failure)"
        if acks_late != "False" and _app_acks_late(model):
            return "app-wide `task_acks_late` (the broker re-queues the message when the worker dies mid-task)"
        return None
    if framework == "dramatiq":
        max_retries = _literal(_kw(dec, "max_retries"))
        if max_retries == "0":
            return None
        if max_retries is None:
            return "Dramatiq's default retries (`max_retries` 20: a failed message runs again)"
        return f"`max_retries={max_retries}` (a failed message runs again)"
    if framework == "rq":
        return "`retry=` (the job runs again after a failure)" if _kw(dec, "retry") is not None else None
    if framework == "huey":
        retries = _literal(_kw(dec, "retries"))
        return f"`retries={retries}` (the task runs again after a failure)" if retries not in (None, "0") else None
    return None


def redelivering_tasks(model: Model) -> Iterator[Redelivery]:
    for fn in model.functions:
        for dec in fn.decorators:
            framework = _framework(model, dec)
            if framework is None:
                continue
            why = _redelivery(model, fn, dec, framework)
            if why is None or guarded_in(model, fn):
                break
            runs = helper_runs(model, fn)
            if runs:
                yield Redelivery(dec.node, "task", why, runs[0])
            break


def redeliveries(model: Model) -> Iterator[Redelivery]:
    yield from consumers(model)
    yield from redelivering_tasks(model)


@rule("DUP504", name="queue-without-lease")
def queue_without_lease(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for item in redeliveries(model):
        if item.shape == "consumer":
            head = (
                f"{item.why} takes a job with no lease, then {where(ctx, item.run)} runs it: a job "
                "redelivered while the agent is still running (or after the worker died) is run again "
                "by another worker, tools included"
            )
        else:
            head = (
                f"this task runs {where(ctx, item.run)} and is delivered again by {item.why}, with no "
                "idempotency check: the second delivery re-runs every tool the first one called"
            )
        yield Finding(
            item.node,
            f"{head}; hold `dupguard.runtime.turn_lease(backend, turn_key)` around the run (one owner "
            "per chat turn, renewed while it runs), or check `already_processed(job_id)` first",
        )
