"""The ids the fixes key by (``dupguard.codemods._ids``): found where real handlers keep them,
and never a tool-call id, which the model renews on every response."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dupguard.codemods._ids import request_id, session_id
from dupguard.config import Settings
from dupguard.semantic.builder import build_model
from dupguard.semantic.catalog_loader import catalog_for

HEADER = textwrap.dedent("""
    from celery import shared_task
    from dataclasses import dataclass
    from fastapi import FastAPI, Header, Request
    from pydantic import BaseModel

    app = FastAPI()


    class ChatRequest(BaseModel):
        user_id: str
        request_id: str
        message: str


    class LooseRequest(BaseModel):
        request_id: str | None = None
        session_id: str


    @dataclass
    class Job:
        job_id: str
""")


def _find(body: str, function: str = "handler"):
    source = HEADER + textwrap.dedent(body)
    module = cst.parse_module(source)
    model = build_model(module, catalog_for(Settings()), Settings())
    fn = next(f for f in model.functions if f.name == function)
    return module, model, fn


@pytest.mark.parametrize(
    ("body", "expr", "optional"),
    [
        ("async def handler(req: ChatRequest):\n    ...\n", "req.request_id", False),
        ("async def handler(req: LooseRequest):\n    ...\n", "req.request_id", True),
        ("async def handler(job: Job):\n    ...\n", "job.job_id", False),
        (
            "async def handler(text: str, idempotency_key: str = Header(...)):\n    ...\n",
            "idempotency_key",
            False,
        ),
        ("async def handler(text: str, x_request_id: str | None = Header(None)):\n    ...\n", "x_request_id", True),
        (
            "async def handler(request: Request):\n    key = request.headers['Idempotency-Key']\n",
            "request.headers['Idempotency-Key']",
            False,
        ),
        (
            "async def handler(request: Request):\n    key = request.headers.get('x-request-id')\n",
            "request.headers.get('x-request-id')",
            True,
        ),
        ("async def handler(payload: dict):\n    return payload['request_id']\n", "payload['request_id']", False),
        (
            "@shared_task(bind=True, acks_late=True)\ndef handler(self, text):\n    ...\n",
            "self.request.id",
            False,
        ),
        ("def handler(message):\n    log(message.message_id)\n", "message.message_id", False),
        ("def handler(thread_id: str, run_id: str):\n    ...\n", 'f"{thread_id}:{run_id}"', False),
    ],
)
def test_request_ids_real_handlers_have(body, expr, optional):
    found = request_id(*_find(body))
    assert found is not None and (found.expr, found.optional) == (expr, optional)


@pytest.mark.parametrize(
    "body",
    [
        "async def handler(text: str, tool_call_id: str):\n    ...\n",
        "async def handler(call_id: str, arguments: str):\n    ...\n",
        "async def handler(payload: dict):\n    return payload['message']\n",
        "@shared_task\ndef handler(self, text):\n    ...\n",  # not bound: no self.request
        "def handler(thread_id: str):\n    ...\n",  # a conversation, not a request
    ],
)
def test_no_request_id(body):
    assert request_id(*_find(body)) is None


def test_session_ids():
    found = session_id(*_find("async def handler(req: ChatRequest):\n    ...\n"))
    assert found is not None and found.expr == "req.user_id"
    found = session_id(*_find("async def handler(req: LooseRequest, user_id: str):\n    ...\n"))
    assert found is not None and found.expr == "req.session_id"  # a session before a user
    assert session_id(*_find("async def handler(text: str):\n    ...\n")) is None
