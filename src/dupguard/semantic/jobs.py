"""Calls that take a job from a queue.

Shared by DUP504 (``dupguard.rules.retries.queue_without_lease``: a consumer that takes a job
with no lease) and DUP505 (``dupguard.semantic.toolcalls``: a ``while`` loop that takes jobs is a
worker loop, each round starts from a new job, not an unbounded model↔tool loop).
"""

from __future__ import annotations

from .model import Call, Model

# take methods whose broker redelivers what is not acknowledged in time
REDELIVERING_TAKES = {
    "receive_message",
    "receive_messages",
    "xreadgroup",
    "basic_get",
    "brpoplpush",
    "blmove",
    "rpoplpush",
    "lmove",
}
# take methods that are generic names: the receiver must look like a queue
QUEUE_TAKES = {"reserve", "pull", "get", "get_nowait", "dequeue", "pop", "fetch", "receive"}
QUEUE_WORDS = {
    "q",
    "sqs",
    "queue",
    "queues",
    "job",
    "jobs",
    "task",
    "tasks",
    "inbox",
    "beanstalk",
    "beanstalkd",
    "tube",
    "consumer",
    "subscriber",
    "subscription",
    "sub",
    "broker",
    "mq",
    "work",
    "worklist",
    "backlog",
}


def queue_like(text: str) -> bool:
    last = text.replace("()", "").replace("[]", "").rsplit(".", 1)[-1].lower()
    return any(token in QUEUE_WORDS for token in last.split("_"))


def takes_jobs(model: Model, call: Call) -> bool:
    """Does this call take a job from a queue (any queue, in-process ones included)?"""
    if not call.method or not call.receiver:
        return False
    if call.method in REDELIVERING_TAKES:
        return True
    positional = [a for a in call.args if a.keyword is None]
    return (
        call.method in QUEUE_TAKES and queue_like(call.receiver) and not (call.method in ("get", "pop") and positional)
    )
