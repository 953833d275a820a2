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
