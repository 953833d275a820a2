"""dedupe_tools and register_once: the small fixes the safe autofixes insert."""

from __future__ import annotations

import functools
import gc
import threading
from types import SimpleNamespace

import pytest

from dupguard.runtime import dedupe_tools, register_once
from dupguard.runtime import tools as tools_module

pytestmark = pytest.mark.timeout(30)


def search(query: str) -> str:
    return query


def lookup(key: str) -> str:
    return key


class NamedTool:
    def __init__(self, name):
        self.name = name


class LlamaTool:  # LlamaIndex FunctionTool keeps its name in .metadata.name
    def __init__(self, name):
        self.metadata = SimpleNamespace(name=name)


def test_keeps_first_of_each_name_in_order_for_every_shape():
    a1, a2 = NamedTool("a"), NamedTool("a")
    m1, m2 = LlamaTool("m"), LlamaTool("m")
    d1 = {"name": "d", "description": "first"}
    d2 = {"name": "d", "description": "second"}
    o1 = {"type": "function", "function": {"name": "o"}}
    o2 = {"type": "function", "function": {"name": "o", "parameters": {}}}
    tools = [search, a1, m1, d1, o1, search, a2, lookup, m2, d2, o2, search]
    assert dedupe_tools(tools) == [search, a1, m1, d1, o1, lookup]
    assert dedupe_tools(iter(tools)) == [search, a1, m1, d1, o1, lookup]  # any iterable


def test_seed_000_duplicate_tool_list():
    tools = [LlamaTool("search")] * 2
    assert len(dedupe_tools(tools)) == 1


def test_nameless_objects_dedupe_by_identity_only():
    x, y = object(), object()
    assert dedupe_tools([x, y, x]) == [x, y]


def test_custom_key_and_strict():
    tools = [NamedTool("Search"), NamedTool("search")]
    assert len(dedupe_tools(tools)) == 2
    assert len(dedupe_tools(tools, key=lambda t: t.name.lower())) == 1
    same = NamedTool("s")
    assert dedupe_tools([same, same], strict=True) == [same]
    with pytest.raises(ValueError, match="'s'"):
        dedupe_tools([same, NamedTool("s")], strict=True)


class CallbackManager:
    """Shaped like LlamaIndex's: handlers live in a list; add_handler appends."""

    def __init__(self):
        self.handlers = []

    def add_handler(self, handler):
        self.handlers.append(handler)


class EventBus:  # no handlers attribute; another method name
    __slots__ = ("__weakref__", "hooks")

    def __init__(self):
        self.hooks = []

    def add_hook(self, hook):
        self.hooks.append(hook)


class MyHandler:
    def on_event(self, event):
        pass


def test_seed_000_handler_instance_per_request_registers_once():
    manager = CallbackManager()
    results = [register_once(manager, MyHandler()) for _ in range(5)]
    assert results == [True, False, False, False, False]
    assert len(manager.handlers) == 1


def test_functions_by_identity_and_bound_methods_by_object_and_function():
    bus = EventBus()

    def on_a(e):
        pass

    def on_b(e):
        pass

    h1, h2 = MyHandler(), MyHandler()
    assert register_once(bus, on_a, method="add_hook") is True
    assert register_once(bus, on_a, method="add_hook") is False
    assert register_once(bus, on_b, method="add_hook") is True
    assert register_once(bus, h1.on_event, method="add_hook") is True
    assert register_once(bus, h1.on_event, method="add_hook") is False  # a new bound-method object
    assert register_once(bus, h2.on_event, method="add_hook") is True  # another instance's method
    partial = functools.partial(on_a, 1)
    assert register_once(bus, partial, method="add_hook") is True
    assert register_once(bus, partial, method="add_hook") is False
    assert len(bus.hooks) == 5


def test_per_target_and_existing_handlers_count():
    m1, m2 = CallbackManager(), CallbackManager()
    assert register_once(m1, MyHandler()) and register_once(m2, MyHandler())
    m3 = CallbackManager()
    m3.add_handler(MyHandler())  # registered by some other path at startup
    assert register_once(m3, MyHandler()) is False


def test_thread_safe_registration():
    manager = CallbackManager()
    barrier = threading.Barrier(16)
    results = []

    def worker():
        barrier.wait()
        results.append(register_once(manager, MyHandler()))

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1 and len(manager.handlers) == 1


def test_failed_registration_is_not_recorded_and_missing_method_raises():
    class Flaky:
        def __init__(self):
            self.fail = True
            self.handlers = []

        def add_handler(self, h):
            if self.fail:
                raise RuntimeError("not ready")
            self.handlers.append(h)

    target = Flaky()
    with pytest.raises(RuntimeError):
        register_once(target, search)
    target.fail = False
    assert register_once(target, search) is True
    with pytest.raises(AttributeError, match="add_listener"):
        register_once(target, search, method="add_listener")


def test_records_die_with_their_target():
    manager = CallbackManager()
    register_once(manager, MyHandler())
    key = id(manager)
    assert key in tools_module._registered
    del manager
    gc.collect()
    assert key not in tools_module._registered
