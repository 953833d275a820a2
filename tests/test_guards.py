"""The three meanings of "guarded" (``dupguard.semantic.guards``), each on the shape it accepts
and on the shapes that only one of the others accepts: a lock is not an idempotency check, and
a register-once flag does not serialise concurrent runs."""

from __future__ import annotations

import textwrap

import libcst as cst

from dupguard.config import Settings
from dupguard.semantic.builder import build_model
from dupguard.semantic.catalog_loader import catalog_for
from dupguard.semantic.guards import idempotent, once_only, serialised
from dupguard.semantic.model import Call, Model

SOURCE = textwrap.dedent("""
    import threading

    lock = threading.Lock()
    _installed = False


    def locked(agent, text):
        with lock:
            agent.run(text)  # serialised


    def flagged(cm, handler):
        global _installed
        if not _installed:
            cm.add_handler(handler)  # once_only (a register-once flag)
            _installed = True


    def membership(cm, handler):
        if handler not in cm.handlers:
            cm.add_handler(handler)  # once_only (a membership test)
        cm.remove_handler(handler)


    def keyed(agent, event):
        if already_processed(event.id):
            return None
        return agent.run(event.text)  # idempotent (a check before the run)


    def seen_ids(agent, calls, seen):
        for call in calls:
            if call.id in seen:
                continue
            agent.run(call)  # idempotent (a seen-id test)


    def leased(agent, backend, key):
        with turn_lease(backend, key):
            agent.run(key)  # idempotent (a once-context)


    def plain(agent, cm, handler):
        agent.run("x")  # none
        cm.add_handler(handler)  # none
""")


def _model() -> Model:
    return build_model(cst.parse_module(SOURCE), catalog_for(Settings()), Settings())


def _call(model: Model, function: str, func: str) -> Call:
    return next(c for c in model.calls if c.function and c.function.name == function and c.func == func)


def test_serialised_is_a_lock_around_the_call() -> None:
    model = _model()
    assert serialised(_call(model, "locked", "agent.run"))
    assert not serialised(_call(model, "keyed", "agent.run"))
    assert not serialised(_call(model, "flagged", "cm.add_handler"))
    assert not serialised(_call(model, "plain", "agent.run"))


def test_once_only_is_a_register_once_check() -> None:
    model = _model()
    assert once_only(model, _call(model, "flagged", "cm.add_handler"), "cm")
    assert once_only(model, _call(model, "membership", "cm.add_handler"), "cm")
    assert not once_only(model, _call(model, "membership", "cm.remove_handler"), "cm")
    assert not once_only(model, _call(model, "locked", "agent.run"), "agent")
    assert not once_only(model, _call(model, "plain", "cm.add_handler"), "cm")


def test_idempotent_is_a_key_checked_before_the_run() -> None:
    model = _model()
    assert idempotent(model, _call(model, "keyed", "agent.run"))
    assert idempotent(model, _call(model, "seen_ids", "agent.run"))
    assert idempotent(model, _call(model, "leased", "agent.run"))
    assert not idempotent(model, _call(model, "locked", "agent.run"))
    assert not idempotent(model, _call(model, "plain", "agent.run"))


def test_only_a_check_before_the_run_makes_it_idempotent() -> None:
    source = textwrap.dedent("""
        def late(agent, event):
            agent.run(event.text)
            already_processed(event.id)
            agent.run(event.text)
    """)
    model = build_model(cst.parse_module(source), catalog_for(Settings()), Settings())
    first, second = (c for c in model.calls if c.func == "agent.run")
    assert not idempotent(model, first)
    assert idempotent(model, second)


# ----------------------------------------------------------------------------- DUP501 and dupguard.runtime

RUNTIME_HEADER = textwrap.dedent("""
    import asyncio

    from agents import Agent, Runner, SQLiteSession
    from fastapi import FastAPI
    from pydantic import BaseModel

    from dupguard.runtime import (
        Idempotency, InvocationGuard, SessionRegistry, SQLiteBackend, ToolCallLedger, asession_lease, aturn_lease,
        register_once,
    )
    from dupguard.runtime.adapters.openai_agents import OpenAIAgentsGuard

    from .payments import refund_order

    app = FastAPI()
    agent = Agent(name="support", tools=[refund_order])
    store = SQLiteBackend("dupguard.sqlite")
    idem = Idempotency(store, on_in_progress="wait")
    guard = OpenAIAgentsGuard(ledger=ToolCallLedger(store, scope=__name__))
    registry = SessionRegistry(lambda sid: SQLiteSession(sid, "sessions.db"))
    invocations = InvocationGuard("wait")


    class Req(BaseModel):
        user_id: str
        request_id: str
        message: str
""")


def _retry(around: str, run: str = "await Runner.run(agent, req.message)", before: str = "") -> str:
    """A handler whose retry loop re-runs ``run``, inside ``around`` (a ``with`` header) if given."""
    loop = textwrap.dedent(f"""
        for attempt in range(3):
            try:
                return {run}
            except Exception:
                await asyncio.sleep(1)
    """).strip("\n")
    if around:
        loop = around + "\n" + textwrap.indent(loop, "    ")
    body = (before + "\n" if before else "") + loop
    return (
        RUNTIME_HEADER + "\n\n@app.post('/chat')\nasync def chat(req: Req, cm=None):\n" + textwrap.indent(body, "    ")
    )


# A retry under these still re-runs the tools of an attempt that failed after them: they hold a
# session, serialise runs or register a handler once, but key nothing by the request.
UNKEYED = {
    "register_once": _retry("", before="register_once(cm, object())"),
    "SessionRegistry.ause": _retry("async with registry.ause(req.user_id) as session:"),
    "InvocationGuard.ahold": _retry("async with invocations.ahold():"),
    "asession_lease": _retry("async with asession_lease(store, req.user_id):"),
    "Idempotency.arun with a constant key": _retry(
        "", run='await idem.arun("chat", lambda: Runner.run(agent, req.message))'
    ),
    "adapter run without a turn id": _retry("", run="await guard.run(agent, req.message)"),
    "adapter turn without an id": _retry("async with guard.turn():"),
}
# These run the retried work once per request id.
KEYED = {
    "Idempotency.arun": _retry("", run="await idem.arun(req.request_id, lambda: Runner.run(agent, req.message))"),
    "aturn_lease": _retry("async with aturn_lease(store, req.request_id):"),
    "adapter turn": _retry("async with guard.turn(req.request_id):"),
    "adapter run with a turn id": _retry("", run="await guard.run(agent, req.message, turn_id=req.request_id)"),
}


def _dup501(source: str) -> list[str]:
    from dupguard.pipeline import lint_text

    return [d.code for d in lint_text("app.py", source, Settings(), frozenset({"DUP501"}))]


def test_runtime_calls_that_key_nothing_do_not_guard_a_retry() -> None:
    found = {name: _dup501(source) for name, source in UNKEYED.items()}
    assert found == {name: ["DUP501"] for name in UNKEYED}


def test_runtime_calls_keyed_by_the_request_guard_a_retry() -> None:
    found = {name: _dup501(source) for name, source in KEYED.items()}
    assert found == {name: [] for name in KEYED}


def test_an_attempt_keyed_inside_the_loop_guards_it() -> None:
    source = _retry("", run="await Runner.run(agent, req.message)")
    source = source.replace(
        "            return await Runner.run(agent, req.message)",
        "            async with guard.attempt(req.request_id):\n                return await Runner.run(agent, req.message)",
    )
    assert "guard.attempt(req.request_id)" in source
    assert _dup501(source) == []
