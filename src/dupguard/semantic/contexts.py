"""Where does each function run? Request handler, worker task, startup hook or script.

Direct contexts come from decorators, base classes, registrations and signatures (the data
in ``entrypoints.py``); then the light intra-module call graph spreads them, so a helper
called from a handler counts as running per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import entrypoints as ep
from .hosts import FORKED, streamlit_page
from .model import string_value

if TYPE_CHECKING:
    from .model import Call, Function, Model


def _app_class(model: Model, receiver: str | None) -> str | None:
    """The resolved class of a module-level object, e.g. ``app`` → ``fastapi.FastAPI``."""
    if not receiver or "." in receiver:
        return None
    binding = model.module_binding(receiver)
    if binding is None or binding.value_call is None:
        return None
    return binding.value_call.callee


def _first_str(call: Call | None) -> str | None:
    if call is None or not call.args:
        return None
    node = call.args[0].node
    value = string_value(node)
    return value if isinstance(value, str) else None


def _decorator_context(model: Model, fn: Function, extra_handlers: frozenset[str]) -> str | None:
    for dec in fn.decorators:
        callee = dec.callee or ""
        if callee in ep.HANDLER_DECORATORS or callee in extra_handlers or (dec.dotted or "") in extra_handlers:
            return ep.HANDLER
        if callee in ep.WORKER_DECORATORS:
            return ep.WORKER
        if not dec.dotted or "." not in dec.dotted:
            continue
        receiver, _, method = dec.dotted.rpartition(".")
        cls = _app_class(model, receiver) or ""
        path = _first_str(dec.call)
        if method in ep.ROUTE_METHODS and (
            cls in ep.APP_CLASSES
            or cls.rpartition(".")[0] in ep.APP_CLASSES
            or (path is not None and path.startswith("/"))
        ):
            return ep.HANDLER
        if method in ep.WORKER_METHODS and (
            cls in ep.WORKER_APP_CLASSES
            or "celery" in receiver.lower()
            or callee.startswith(("celery.", "dramatiq.", "huey."))
        ):
            return ep.WORKER
        if method in ep.STARTUP_METHODS and (method != "on_event" or path == "startup"):
            return ep.STARTUP
        if method == "listener" and path in ("before_server_start", "after_server_start"):
            return ep.STARTUP
    return None


def _registered(model: Model, nested: dict[tuple[Function, str], str] | None = None) -> dict[str, str]:
    """Functions handed by reference to a router, a queue or an app's ``lifespan=``. ``nested``
    collects the same by (the function making the call, the name): a function defined inside the
    one that registers it (a Gradio Blocks builder's listeners)."""
    out: dict[str, str] = {}
    hosts = {qualified.split(".")[0] for qualified in model.imports.values()}
    handlers = dict(ep.HANDLER_REGISTRATIONS)
    for host, methods in ep.HOST_EVENT_REGISTRATIONS.items():
        if host in hosts:
            handlers.update(methods)
    for call in model.calls:
        name = call.callee if call.callee in handlers else call.method
        for table, context in ((handlers, ep.HANDLER), (ep.WORKER_REGISTRATIONS, ep.WORKER)):
            if name not in table:
                continue
            where = table[name]
            arg = None
            if isinstance(where, int):
                positional = [a for a in call.args if a.keyword is None and not a.star]
                arg = positional[where] if len(positional) > where else None
                arg = arg or call.kw("fn") or call.kw("endpoint") or call.kw("view_func") or call.kw("handler")
            elif isinstance(where, str):
                arg = call.kw(where)
            if arg is not None and arg.dotted:
                out.setdefault(arg.dotted, context)
                if nested is not None and call.function is not None:
                    nested.setdefault((call.function, arg.dotted), context)
        for kw in ep.STARTUP_KWARGS:
            arg = call.kw(kw)
            if arg is None:
                continue
            if arg.dotted:
                out.setdefault(arg.dotted, ep.STARTUP)
            for _, element in getattr(model.lists.get(id(arg.node)), "elements", ()):
                text = getattr(element, "value", None)
                if isinstance(text, str):
                    out.setdefault(text, ep.STARTUP)
    # arq: class WorkerSettings: functions = [task_a, task_b]
    for binding in model.bindings:
        if binding.scope == "class" and binding.target == "functions" and binding.class_name == "WorkerSettings":
            literal = model.lists.get(id(binding.value))
            for text, _ in getattr(literal, "elements", ()):
                if text:
                    out.setdefault(text, ep.WORKER)
    return out


def classify_functions(model: Model, extra_handlers: frozenset[str] = frozenset()) -> None:
    for fn in model.functions:
        for dec in fn.decorators:
            dec.call = model.call_for_node(dec.node)
    nested: dict[tuple[Function, str], str] = {}
    registered = _registered(model, nested)
    host_registered, forked = _host_registered(model, nested)
    for fn in model.functions:
        context = _decorator_context(model, fn, extra_handlers)
        if context is None and fn.class_name is None and fn.parent is not None:
            # registered by the function that defines it: ``def build_ui(): ... def respond(...)
            # ...; box.submit(respond, ...)`` (juliensimon/smolagents-mcp-demo, a Blocks builder)
            context = nested.get((fn.parent, fn.name))
        if context is None and fn.class_name is None and fn.parent is None:
            context = registered.get(fn.name)
            if context is None and fn.name in ep.SERVERLESS_NAMES and fn.params[:2] in ep.SERVERLESS_SIGNATURES:
                context = ep.HANDLER
            if context is None and model.imports_django and fn.params[:1] == ("request",):
                context = ep.HANDLER
        if context is None and fn.class_name is not None:
            bases = set(model.classes.get(fn.class_name, ()))
            if bases & ep.HANDLER_BASES and fn.name in ep.HANDLER_METHOD_NAMES:
                context = ep.HANDLER
            elif bases & ep.WORKER_BASES and fn.name == "run":
                context = ep.WORKER
        if context is None:
            context = _host_context(model, fn, host_registered)
        if context is None and fn.class_name is None and fn.parent is None and _called_per_request(model, fn):
            context = ep.HANDLER
        if context is not None:
            fn.contexts.add(context)
            if fn.name in forked or any(d.callee in ep.FORKED_JOB_DECORATORS for d in fn.decorators):
                fn.contexts.add(FORKED)
    _propagate(model)


def _called_per_request(model: Model, fn: Function) -> bool:
    """Per-request code of another module calls this function (a route in ``routes.py`` runs
    ``agent.get_response``): the project index says so (``dupguard.project``, "@called.")."""
    return model.project is not None and model.project.called(fn.name) is not None


def _bound_method(model: Model, dotted: str, fn: Function | None) -> Function | None:
    """``obj.method`` where ``obj`` is bound to an instance of a class this module defines."""
    head, method = dotted.split(".")
    binding = model.local_binding(head, fn)
    cls = binding.value_call.func if binding is not None and binding.value_call is not None else None
    return model.function_named(method, cls) if cls in model.classes else None


def _propagate(model: Model) -> None:
    """Spread contexts along calls (and function references passed to calls) to a fixed point.

    A worklist: a function is looked at again only when what reaches it grew, and each of its
    (at most four) contexts arrives once, so the cost is linear in the number of edges."""
    edges: list[tuple[Function, Function]] = []
    for call in model.calls:
        targets = []
        callee = model.called_function(call)
        if callee is not None:
            targets.append(callee)
        for arg in call.args:
            if arg.dotted and "." not in arg.dotted and "(" not in arg.dotted:
                target = model.function_named(arg.dotted)
                if target is not None:
                    targets.append(target)
            elif arg.dotted and arg.dotted.count(".") == 1 and "(" not in arg.dotted:
                # ``loop.run_in_executor(None, router.route, text)``: a bound method of a
                # module-level instance of a class defined here, handed on to be run
                target = _bound_method(model, arg.dotted, call.function)
                if target is not None:
                    targets.append(target)
        for target in targets:
            source = call.function
            if source is None:
                if model.is_streamlit and streamlit_page(model):
                    # the page script runs top to bottom once per session and interaction,
                    # ``if __name__ == "__main__":`` included (hosts.py, Streamlit)
                    target.reached_from.add("streamlit")
                elif call.in_main:
                    target.reached_from.add(ep.SCRIPT)
                continue
            edges.append((source, target))
    # nested functions run whenever their parent runs
    for fn in model.functions:
        if fn.parent is not None:
            edges.append((fn.parent, fn))
    successors: dict[Function, list[Function]] = {}
    for source, target in edges:
        successors.setdefault(source, []).append(target)
    work = list(successors)
    while work:
        source = work.pop()
        flow = (source.contexts | source.reached_from) - {ep.STARTUP}
        for target in successors.get(source, ()):
            new = flow - target.reached_from
            if new:
                target.reached_from |= new
                work.append(target)


# ---------------------------------------------------------------------- hosts (entrypoints.py, "Hosts")


def _host_registered(
    model: Model, nested: dict[tuple[Function, str], str] | None = None
) -> tuple[dict[str, str], set[str]]:
    """Functions handed to a host by reference (``websockets.serve(handler)``,
    ``pn.chat.ChatInterface(callback=respond)``, arq's ``func(task)``), and the names of the
    functions RQ runs in a forked work horse (``queue.enqueue(job)`` in a file importing rq)."""
    out: dict[str, str] = {}
    forked: set[str] = set()
    tops = {qualified.split(".")[0] for qualified in model.imports.values()}
    methods: dict[str, int] = {}
    for host, table in ep.HOST_METHOD_REGISTRATIONS.items():
        if host in tops:
            methods.update(table)
    rq = bool(tops & set(ep.FORKED_JOB_MODULES)) and not any(c.callee in ep.IN_PROCESS_RQ_WORKERS for c in model.calls)
    for call in model.calls:
        arg = None
        context = ep.HANDLER
        if call.callee in ep.HOST_REGISTRATIONS:
            where, context = ep.HOST_REGISTRATIONS[call.callee]
            arg = call.kw(where) if isinstance(where, str) else call.arg(str(where))
            arg = arg or call.kw("handler") or call.kw("coroutine")
        elif call.method in methods:
            arg = call.arg(str(methods[call.method or ""])) or call.kw("callback") or call.kw("fn")
        elif rq and call.method in ep.WORKER_REGISTRATIONS:
            spot: object = ep.WORKER_REGISTRATIONS[call.method or ""]
            arg = call.kw(spot) if isinstance(spot, str) else call.arg(str(spot))
            if arg is not None and arg.dotted:
                forked.add(arg.dotted)
            continue
        if arg is not None and arg.dotted and "." not in arg.dotted:
            out.setdefault(arg.dotted, context)
            if nested is not None and call.function is not None:
                nested.setdefault((call.function, arg.dotted), context)
    return out, forked


def _host_context(model: Model, fn: Function, registered: dict[str, str]) -> str | None:
    """The context a host gives ``fn``: a decorator of a host app object
    (``@app.entrypoint``, ``@app.route(route="chat")`` on an Azure ``FunctionApp``), a host
    decorator by qualified name (``@cl.on_chat_resume``), a registration by reference, a base
    class whose every method runs per connection (Channels consumers), or an Azure v1
    ``main(req: func.HttpRequest)``."""
    for dec in fn.decorators:
        callee = dec.callee or ""
        if callee in ep.HOST_HANDLER_DECORATORS:
            return ep.HANDLER
        if callee in ep.HOST_STARTUP_DECORATORS:
            return ep.STARTUP
        if dec.dotted and "." in dec.dotted:
            receiver, _, method = dec.dotted.rpartition(".")
            table = ep.HOST_APP_DECORATORS.get(_app_class(model, receiver) or "")
            if table is not None and method in table:
                return table[method]
    if fn.class_name is None and fn.parent is None:
        context = registered.get(fn.name)
        if context is not None:
            return context
        for annotation in fn.param_annotations.values():
            resolved = model.resolve(_dotted_annotation(annotation))
            if resolved in ep.HOST_PARAM_ANNOTATIONS:
                return ep.HOST_PARAM_ANNOTATIONS[resolved]
    bases = set(model.classes.get(fn.class_name, ())) if fn.class_name is not None and fn.parent is None else set()
    if bases & ep.HOST_HANDLER_BASES_ALL_METHODS and not fn.name.startswith("__"):
        return ep.HANDLER
    return None


def _dotted_annotation(node: object) -> str | None:
    from .nodes import dotted

    return dotted(node)  # type: ignore[arg-type]
