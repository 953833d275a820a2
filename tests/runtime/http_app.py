"""The Starlette app that ``test_http.py`` serves with a real uvicorn (one or two workers).

Configured by ``DUPGUARD_HTTP_TEST`` (JSON): ``store`` (``{"kind": "memory" | "sqlite" |
"redis" | "postgres", "where": …, "prefix" or "table": …}``) and ``effects`` (a directory). ``POST …/orders`` is the
non-idempotent operation: every execution appends one line to ``effects/<tag>`` (the side
effect the tests count; one ``write(2)`` in append mode, so lines from two workers never
interleave), sleeps ``delay`` seconds (the model call) and answers with a fresh order id, so a
replayed response is recognisable byte for byte.

Three middleware stacks share the store: ``/orders`` (duplicates wait), ``/conflict/orders``
(duplicates get 409) and ``/required/orders`` (the key is required). The principal is the
bearer token, as an authentication middleware would resolve it. Every response carries
``x-served-by: <pid>`` (added outside the idempotency middleware, so replays carry it too)
so a test can see which worker answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from dupguard.runtime import IdempotencyMiddleware, MemoryBackend, PostgresBackend, RedisBackend, SQLiteBackend

CONFIG = json.loads(os.environ["DUPGUARD_HTTP_TEST"])


def open_store(spec: dict):
    if spec["kind"] == "memory":
        return MemoryBackend()
    if spec["kind"] == "sqlite":
        return SQLiteBackend(spec["where"])
    if spec["kind"] == "postgres":
        return PostgresBackend(spec["where"], table=spec["table"])
    return RedisBackend(spec["where"], prefix=spec["prefix"])


async def orders(request: Request) -> JSONResponse:
    body = await request.json()
    tag = body["tag"]
    fd = os.open(os.path.join(CONFIG["effects"], tag), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
    finally:
        os.close(fd)
    await asyncio.sleep(float(body.get("delay", 0)))
    order = uuid.uuid4().hex
    return JSONResponse(
        {"order": order, "tag": tag, "amount": body.get("amount")},
        status_code=int(body.get("status", 201)),
        headers={"x-order-id": order},
    )


async def pid(request: Request) -> PlainTextResponse:
    return PlainTextResponse(str(os.getpid()))


def principal(scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization" and value.startswith(b"Bearer "):
            return value[7:].decode()
    return None


def build():
    store = open_store(CONFIG["store"])
    inner = Starlette(routes=[Route("/orders", orders, methods=["POST"]), Route("/pid", pid)])
    common = {"store": store, "principal": principal, "lease": 5.0, "ttl": 600.0}
    waiting = IdempotencyMiddleware(inner, **common)
    conflict = IdempotencyMiddleware(inner, on_in_progress="conflict", **common)
    required = IdempotencyMiddleware(inner, required=True, **common)
    served_by = str(os.getpid()).encode()

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            await inner(scope, receive, send)
            return

        async def tagged(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"x-served-by", served_by)]}
            await send(message)

        path = scope["path"]
        for prefix, stack in (("/conflict", conflict), ("/required", required)):
            if path.startswith(prefix + "/"):
                await stack({**scope, "path": path[len(prefix) :]}, receive, tagged)
                return
        await waiting(scope, receive, tagged)

    return app


app = build()
