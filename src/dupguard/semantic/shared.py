"""Shared objects: stateful agents and memories that outlive one request, and their uses.

The questions behind DUP101/DUP102 (and the fan-out rules): which agent or memory is bound
where every request reaches it (module, class, ``app.state``, a cached factory, an instance
created once), and which unguarded calls run or mutate it from per-request code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from .catalog import USER_RUN_METHODS, Entry, Kind
from .catalog_data import DEPENDS
from .entrypoints import AGENT_RUNNERS
from .guards import serialised
from .hosts import isolated, module_state, process_cache, reruns_per_session
from .lifetimes import module_instances
from .model import Arg, Binding, Call, Function, Model, analysis, fact_entry
from .nodes import descendants, dotted, token_text

if TYPE_CHECKING:
    from ..project import Fact


@dataclass(eq=False)
class Shared:
    """An object that outlives one request: what it is, where it is bound, how it is reached."""

    label: str  # how the user refers to it: "agent", "app.state.agent", "get_agent()"
    report_node: cst.CSTNode | None  # where a finding about it is reported (None: where it is used)
    kind: Kind
    entry: Entry | None
    binding: Binding | None = None
    factory: Function | None = None  # a cached factory that returns it
    owner_class: str | None = None  # a class whose module-level instance holds it (self.x)
    # built in another module of the project (the project index): what it is and where, and the
    # name this file reaches it by ("agent", "agents.agent", "get_agent" for ``get_agent()``,
    # "app.state.agent"); ``binding`` is this file's own name for it when it has one
    fact: Fact | None = None
    name: str = ""
    through: str = ""  # a memory reached through the agent built with it (``fact.holds``)
    # the shared instance of a project class whose method set ``binding`` (``self.agent = ...``):
    # the object is reached from outside the class as ``<holder>.agent``
    holder: Binding | None = None

    @property
    def factory_name(self) -> str | None:
        """The name a call of which returns the object: a cached factory here or imported."""
        if self.factory is not None:
            return self.factory.name
        if self.fact is not None and self.fact.role == "shared-factory":
            return self.name
        return None


def shared_objects(model: Model) -> Iterator[Shared]:
    """Every stateful object (agent or memory) that outlives a request in this file."""
    stateful = (Kind.AGENT, Kind.MEMORY)
    if module_state(model) == "session":
        return  # the whole process belongs to one session (hosts.py: Bedrock AgentCore)
    instantiated_once = module_instances(model)
    per_session = reruns_per_session(model)
    shared_bindings: set[int] = set()
    for b in model.bindings:
        if b.in_main or b.value_call is None:
            continue
        kind, entry = model.kind_of_expr_call(b.value_call)
        if kind is Kind.STATELESS and entry is not None and entry.member_of and b.scope == "module":
            if not per_session:  # stateless alone; shared run state inside per-request containers
                shared_bindings.add(id(b))
                yield Shared(b.target, b.statement, Kind.AGENT, entry, binding=b)
            continue
        if kind not in stateful:
            if b.scope == "module" and not per_session and b.value_call.func in model.classes:
                wrapper = run_state_entry(model, b.value_call.func)
                if wrapper is not None:
                    shared_bindings.add(id(b))
                    yield Shared(b.target, b.statement, Kind.AGENT, wrapper, binding=b)
            continue
        if b.scope == "module" and not per_session:
            shared_bindings.add(id(b))
            yield Shared(b.target, b.statement, kind, entry, binding=b)
        elif b.scope == "class":
            yield Shared(f"{b.class_name}.{b.target}", b.statement, kind, entry, binding=b)
        elif (
            b.scope == "function"
            and ".state." in f".{b.target}"
            and b.function
            and (b.function.contexts & {"startup"} or b.function.name in ("lifespan", "startup", "on_startup"))
        ):
            yield Shared(b.target, b.statement, kind, entry, binding=b)
        elif (
            b.scope == "function"
            and b.target.startswith("self.")
            and b.function is not None
            and b.function.name == "__init__"
            and b.class_name in instantiated_once
        ):
            yield Shared(b.target, b.statement, kind, entry, binding=b, owner_class=b.class_name)
        elif b.scope == "function" and "." not in b.target and _closed_over_by_handlers(model, b):
            yield Shared(b.target, b.statement, kind, entry, binding=b)
    yield from _held_by_shared_instances(model, per_session)
    for fn in model.functions:
        if not any(process_cache(d) for d in fn.decorators):
            continue
        for ret in fn.returns:
            call = model.returned_call(ret, fn)
            kind, entry = model.kind_of_expr_call(call)
            if kind not in stateful and call is not None and call.func in model.classes:
                entry = run_state_entry(model, call.func)
                kind = Kind.AGENT if entry is not None else kind
            if kind in stateful:
                yield Shared(f"{fn.name}()", ret, kind, entry, factory=fn)
                break
    if model.project is not None:
        yield from _from_project(model, shared_bindings)


def _held_by_shared_instances(model: Model, per_session: bool) -> Iterator[Shared]:
    """``client.agent`` where ``client = Client()`` (a class of this file) is bound once, at module
    level or by a builder whose handlers close over it, and a method of ``Client`` sets
    ``self.agent`` to a stateful agent or memory (juliensimon/smolagents-mcp-demo: the Blocks
    builder's ``MultiServerMCPClient`` builds its ``ToolCallingAgent`` in ``setup_agent``). Reported
    where the attribute is set; used as ``client.agent`` from per-request code."""
    held: dict[str, list[tuple[Binding, Kind, Entry | None]]] = {}
    for b in model.bindings:
        if b.scope != "function" or b.value_call is None or not b.class_name or b.function is None:
            continue
        if b.function.class_name != b.class_name or b.target.count(".") != 1 or not b.target.startswith("self."):
            continue
        kind, entry = model.kind_of_expr_call(b.value_call)
        if kind in (Kind.AGENT, Kind.MEMORY):
            held.setdefault(b.class_name, []).append((b, kind, entry))
    if not held:
        return
    for b in model.bindings:
        if b.value_call is None or b.value_call.func not in held or "." in b.target or b.in_main:
            continue
        once = (b.scope == "module" and not per_session) or (
            b.scope == "function" and _closed_over_by_handlers(model, b)
        )
        if not once:
            continue
        for attr, kind, entry in held[b.value_call.func]:
            label = f"{b.target}.{attr.target.partition('.')[2]}"
            yield Shared(label, attr.statement, kind, entry, binding=attr, holder=b)


def _closed_over_by_handlers(model: Model, b: Binding) -> bool:
    """A local of a function that runs once (not per request: a Gradio Blocks builder, an app
    factory) that functions defined inside it, run per request, close over: every run of those
    handlers uses the one object (hosts.py, Gradio: "objects the event functions close over")."""
    owner = b.function
    if owner is None or model.is_concurrent_context(owner) or owner.contexts:
        return False
    return any(b.target not in fn.local_names for fn in _concurrent_children(model).get(owner, ()))


@analysis
def _concurrent_children(model: Model) -> dict[Function, list[Function]]:
    """Function → the functions defined directly in it that run per request (one pass)."""
    out: dict[Function, list[Function]] = {}
    for fn in model.functions:
        if fn.parent is not None and model.is_concurrent_context(fn):
            out.setdefault(fn.parent, []).append(fn)
    return out


# In-place changes of a list-like attribute (``self.messages.append(turn)``): the run's state
# kept on the object. Keyed containers (``self.sessions[sid]``, ``setdefault(sid, ...)``) keep one
# entry per session and are not counted.
_GROW_METHODS = frozenset({"append", "extend", "insert", "__iadd__"})


@dataclass
class _ClassParts:
    methods: list[Function]
    init_values: list[Call]  # what ``__init__`` binds to ``self.<x>``
    rebinding: set[Function]  # methods that rebind ``self.<x>``
    augmented: dict[Function, list[Call]]  # ``self.x += ...`` by method


@analysis
def _class_parts(model: Model) -> dict[str, _ClassParts]:
    """Methods, ``__init__`` values, self rebinds and augmented assignments of every class of the
    file, in one pass (``run_state_entry`` asks per class: linear in the file, not per class)."""
    parts: dict[str, _ClassParts] = {}
    for fn in model.functions:
        if fn.class_name is not None and fn.parent is None:
            parts.setdefault(fn.class_name, _ClassParts([], [], set(), {})).methods.append(fn)
    for b in model.bindings:
        owner = b.function
        entry = parts.get(b.class_name or "") if owner is not None and owner.parent is None else None
        if entry is None or owner is None or not b.target.startswith("self.") or b.target.count(".") != 1:
            continue
        if owner.name == "__init__":
            if b.value_call is not None:
                entry.init_values.append(b.value_call)
        else:
            entry.rebinding.add(owner)
    for call in model.augmented:
        owner = call.function
        entry = parts.get(owner.class_name or "") if owner is not None and owner.parent is None else None
        if entry is not None and owner is not None:
            entry.augmented.setdefault(owner, []).append(call)
    return parts


@analysis
def run_state_entry(model: Model, class_name: str) -> Entry | None:
    """A class of this module that wraps an agent and keeps each run's state on the instance:
    a method that runs an agent (``runs.agent_run``: ``Runner.run(self.agent, ...)``,
    ``self.agent.run(...)``) also rebinds an attribute (``self.messages = result.to_input_list()``,
    ``self.report = await ...``) or grows one (``self.messages.append(...)``). The agent inside
    may be stateless configuration (an OpenAI Agents SDK ``Agent``); the wrapper is not: one
    instance shared by every request is one conversation, and two runs at once overwrite each
    other's state between their awaits. Returned as a catalog entry whose run methods are those
    methods and the methods that call them through ``self``; None for any other class."""
    from .lifetimes import _function_runs_agent

    parts = _class_parts(model).get(class_name)
    if parts is None:
        return None
    if any(model.kind_of_expr_call(call)[0] in (Kind.AGENT, Kind.MEMORY) for call in parts.init_values):
        return None  # it holds a stateful agent or memory: that object is the finding
    methods = parts.methods
    # methods that run an agent, themselves or through ``self.<method>()`` (a run that plans,
    # searches and writes in helper methods: agentika/agentize examples/research_agents.py)
    running = {fn.name for fn in methods if _function_runs_agent(model, fn)}
    grew = True
    while grew:
        grew = False
        for fn in methods:
            if fn.name not in running and any(c.receiver == "self" and c.method in running for c in fn.calls):
                running.add(fn.name)
                grew = True
    stateful: set[str] = set()
    for fn in methods:
        if fn.name.startswith("__") or fn.name not in running:
            continue
        grows = any(
            (c.receiver or "").startswith("self.") and (c.receiver or "").count(".") == 1 and c.method in _GROW_METHODS
            for c in (*fn.calls, *parts.augmented.get(fn, ()))
        )
        if fn in parts.rebinding or grows:
            stateful.add(fn.name)
    if not stateful:
        return None
    grew = True
    while grew:  # ``self.run(...)`` from another method runs the same state
        grew = False
        for fn in methods:
            calls_run = any(c.receiver == "self" and c.method in stateful for c in fn.calls)
            if fn.name not in stateful and not fn.name.startswith("__") and calls_run:
                stateful.add(fn.name)
                grew = True
    return Entry(
        names=(class_name,),
        kind=Kind.AGENT,
        framework="project",
        version="",
        source=class_name,
        why=f"`{class_name}` keeps each run's state on the instance",
        run_methods=tuple(sorted(stateful)),
    )


def _from_project(model: Model, shared_bindings: set[int]) -> Iterator[Shared]:
    """Stateful objects another module of the project builds and this file reaches: imported
    by name (``from .agent import agent``, ``import app.agents as agents``), through an imported
    cached factory or a function that runs one (``get_response()``), stored on ``app.state`` by
    a startup hook elsewhere, or assigned at startup to one of this module's own names
    (``routes.agent = Coordinator()``). Reported where this file uses them."""
    from ..project import OBJECT, RUNNER, SHARED_FACTORY, STATE, STATEFUL

    assert model.project is not None
    module = model.project.module
    facts = model.project.facts
    own = {b.target: b for b in model.bindings if b.scope == "module" and not b.in_main}
    seen: set[str] = set()
    for qualified, fact in facts.items():
        if fact.kind not in STATEFUL or qualified in seen:
            continue
        kind = Kind(fact.kind)
        entry = fact_entry(model, qualified)
        if qualified.startswith(STATE):
            if fact.role == OBJECT:
                yield Shared(f"app.state.{qualified[len(STATE) :]}", None, kind, entry, fact=fact, name=qualified)
            continue
        if module and qualified.startswith(module + ".") and qualified[len(module) + 1 :] in own:
            target = qualified[len(module) + 1 :]
            binding = own[target]
            if id(binding) not in shared_bindings:
                yield Shared(target, binding.statement, kind, entry, binding=binding, fact=fact, name=target)
            continue
        label = _label(model, qualified)
        if label is None or fact.role not in (OBJECT, SHARED_FACTORY, RUNNER):
            continue
        seen.add(qualified)
        shown = label if fact.role == OBJECT else f"{label}()"
        yield Shared(shown, None, kind, entry, fact=fact, name=label)
        if fact.holds:  # the memory the agent was built with runs with it (DUP102, as in one file)
            held = Shared(fact.holds, None, Kind.MEMORY, entry, fact=fact, name=label, through=shown)
            yield held


def _label(model: Model, qualified: str) -> str | None:
    """This file's text for a qualified name: its import alias, or alias + the rest of the path
    for a module import (``agents.agent`` after ``import app.agents as agents``)."""
    best = None
    for local, target in model.imports.items():
        if qualified == target:
            return local
        if qualified.startswith(target + ".") and (best is None or len(target) > len(best[1])):
            best = (local, target)
    if best is None:
        return None
    return best[0] + qualified[len(best[1]) :]


def _unshadowed(model: Model, fn: Function | None, head: str) -> bool:
    """Does ``head`` in ``fn`` still mean the module's import (no local or module rebinding)?"""
    while fn is not None:
        if head in fn.global_names:
            break
        if head in fn.local_names:
            return False
        fn = fn.parent
    return model.module_binding(head) is None


def _member_texts(model: Model, call: Call) -> list[str]:
    """The names among ``call``'s arguments, list and tuple elements included
    (``Crew(agents=[planner, writer])``), and the objects a pick from a local table may be
    (``Crew(agents=[by_intent[intent]])``: every value of ``by_intent``)."""
    texts = []
    for arg in call.args:
        if arg.dotted:
            texts.append(arg.dotted)
        elif type(arg.node) is cst.List or type(arg.node) is cst.Tuple:
            for element in arg.node.elements:
                if text := dotted(element.value):
                    texts.append(text)
                texts.extend(_picked_from_table(model, call.function, element.value))
        texts.extend(_picked_from_table(model, call.function, arg.node))
    return texts


def _picked_from_table(model: Model, fn: Function | None, node: cst.CSTNode) -> list[str]:
    """``agents[intent]`` where ``agents`` is a dict literal bound in the same function (or the
    module): the names of its values, any of which the pick may be. Taught by
    feng20000308-stack/crewai-customer-service@0de1087fd4 customer_service.py:852-919 (four
    module-level CrewAI agents picked per request by intent into a new Task and Crew)."""
    if type(node) is not cst.Subscript or type(node.value) is not cst.Name:
        return []
    binding = model.local_binding(node.value.value, fn)
    if binding is None or type(binding.value) is not cst.Dict:
        return []
    return [text for e in binding.value.elements if type(e) is cst.DictElement and (text := dotted(e.value))]


def _texts(model: Model, call: Call, shared: Shared) -> list[str]:
    """The expressions in ``call`` that could be the shared object being run or mutated."""
    entry = shared.entry
    if entry is not None and entry.member_of:
        # handed to a container that runs it (the catalog's ``member_of``): building the container
        # per request is the use; an object stateless on its own has no other
        members = _member_texts(model, call) if call.callee in entry.member_of else []
        if entry.kind is Kind.STATELESS:
            return members
    else:
        members = []
    run_methods = set(entry.run_methods) if entry is not None else set(USER_RUN_METHODS)
    texts = members
    runner = AGENT_RUNNERS.get(call.callee or "")
    if runner is not None:  # ``stream_to_gradio(agent, task=...)`` runs ``agent``
        handed = call.kw(runner[0]) or call.arg(str(runner[1]))
        if handed is not None and handed.dotted:
            texts.append(handed.dotted)
    if call.receiver and (shared.kind is Kind.MEMORY or call.method in run_methods):
        texts.append(call.receiver)
    if call.func and "__call__" in run_methods:
        texts.append(call.func)
    for arg in call.args:
        if not arg.dotted:
            continue
        if shared.kind is Kind.MEMORY or call.method in run_methods:
            # a memory passed anywhere, or an agent handed to another agent's run
            # (``user_proxy.initiate_chat(assistant, ...)`` runs both)
            texts.append(arg.dotted)
        else:
            head, _, method = arg.dotted.rpartition(".")
            if head and method in run_methods:
                texts.append(head)
    return texts


def _refers(model: Model, call: Call, shared: Shared, text: str) -> bool:
    fn = call.function
    if fn is not None and "." not in text and "(" not in text:
        # a local alias: ``agent = request.app.state.agent`` or ``bot = self.agent``
        alias = model.local_binding(text, fn)
        if alias is not None and alias.function is fn and alias.value_dotted:
            text = alias.value_dotted
    b = shared.binding
    if shared.holder is not None:
        holder = shared.holder
        return text == shared.label and model.local_binding(holder.target, fn) is holder
    factory = shared.factory_name
    if factory is not None:
        return _through_factory(model, fn, text, factory)
    if any(_through_factory(model, fn, text, name) for name in _accessors(model, shared)):
        return True
    if b is None:
        return _refers_elsewhere(model, fn, shared, text)
    if shared.owner_class is not None:
        return text == b.target and fn is not None and fn.class_name == shared.owner_class
    if b.scope == "class":
        return text == f"{b.class_name}.{b.target}" or (
            text == f"self.{b.target}" and fn is not None and fn.class_name == b.class_name
        )
    if ".state." in f".{b.target}":
        suffix = "state." + b.target.rpartition("state.")[2]
        return text == b.target or text.endswith("." + suffix)
    if text != b.target:
        return False
    if fn is None:
        return True
    seen = model.local_binding(text, fn)
    if seen is b:
        return True
    # ``global manager`` in a setup function that builds the agent: which module binding is
    # live when a handler runs depends on the order of calls, not of the source
    return b.scope == "module" and b.function is not None and seen is not None and seen.scope == "module"


def _through_factory(model: Model, fn: Function | None, text: str, factory: str) -> bool:
    """Is ``text`` the object a call of ``factory`` returns: ``factory()`` itself, a name bound
    from it, or a parameter with ``Depends(factory)``?"""
    if text == f"{factory}()":
        return True
    if "." in text or "(" in text:
        return False
    local = model.local_binding(text, fn)  # module level too: ``agent = load_agent()`` in Streamlit
    if local is not None and local.value_call is not None and local.value_call.func == factory:
        return True
    if fn is not None and text in fn.params:
        default = fn.param_defaults.get(text)
        annotation = fn.param_annotations.get(text)
        return any(_depends_on(model, node, factory) for node in (default, annotation) if node is not None)
    return False


def _refers_elsewhere(model: Model, fn: Function | None, shared: Shared, text: str) -> bool:
    """Does ``text`` name an object another module builds: its import, ``app.state.<attr>``."""
    from ..project import STATE

    if shared.name.startswith(STATE):
        suffix = "state." + shared.name[len(STATE) :]
        return text == "app." + suffix or text.endswith("." + suffix)
    return text == shared.name and _unshadowed(model, fn, text.split(".")[0])


@analysis
def _returners(model: Model) -> dict[str, list[Function]]:
    """Name → the plain functions (not methods) whose every ``return`` gives that one name, in
    source order: the candidates of :func:`_accessors`, indexed once per model so that a module
    with thousands of shared objects and functions does not scan every function per object."""
    out: dict[str, list[Function]] = {}
    for fn in model.functions:
        if fn.class_name is not None or not fn.returns:
            continue
        first = fn.returns[0]
        if type(first) is not cst.Name:
            continue
        name = first.value
        if all(type(ret) is cst.Name and ret.value == name for ret in fn.returns):
            out.setdefault(name, []).append(fn)
    return out


@analysis
def _accessors(model: Model, shared: Shared) -> tuple[str, ...]:
    """Local functions that hand out a module-level shared object as it is (``def get_agent():
    return agent``): ``get_agent()`` and ``Depends(get_agent)`` reach that one object too."""
    b = shared.binding
    if b is None or b.scope != "module" or "." in b.target:
        return ()
    return tuple(fn.name for fn in _returners(model).get(b.target, ()) if model.local_binding(b.target, fn) is b)


def _depended_on(model: Model, node: cst.CSTNode) -> list[str]:
    """The factories named by ``Depends(...)`` calls inside ``node`` (a parameter's default or
    annotation: ``Depends(get_agent)``, ``Annotated[Agent, Depends(get_agent)]``)."""
    out = []
    for inner in descendants(node):
        call = model.call_for_node(inner)
        if call is not None and call.callee in DEPENDS and call.args and call.args[0].dotted:
            out.append(call.args[0].dotted)
    return out


def _depends_on(model: Model, node: cst.CSTNode, factory: str) -> bool:
    """``Depends(get_agent)`` or ``Annotated[Agent, Depends(get_agent)]``."""
    return factory in _depended_on(model, node)


# ---------------------------------------------------------------------- uses, by index
#
# ``_refers`` decides whether a text in a call names a shared object. Every way it can say yes
# compares the object's key (its binding's last name, or its cached factory's name) with the
# text's last name, with the factory a plain name is bound from, or with a ``Depends(factory)``
# of a parameter; so the calls are indexed once by those keys, and each shared object is
# checked against the calls filed under its key instead of against every call of the file.


def _key(text: str) -> str:
    return text.rsplit(".", 1)[-1].removesuffix("()")


def _shared_keys(model: Model, shared: Shared) -> list[str]:
    if shared.factory_name is not None:
        return [shared.factory_name]
    if shared.binding is None:  # reached from another module: by its name here
        return [_key(shared.name.rpartition("@state.")[2])]
    return [_key(shared.binding.target), *_accessors(model, shared)]


def _keys(model: Model, call: Call, text: str) -> set[str]:
    """Every key under which ``_refers(model, call, shared, text)`` can hold."""
    fn = call.function
    if fn is not None and "." not in text and "(" not in text:
        alias = model.local_binding(text, fn)
        if alias is not None and alias.function is fn and alias.value_dotted:
            text = alias.value_dotted
    keys = {_key(text)}
    if "." not in text and "(" not in text:
        local = model.local_binding(text, fn)
        if local is not None and local.value_call is not None and local.value_call.func:
            keys.add(local.value_call.func)
        if fn is not None and text in fn.params:
            for node in (fn.param_defaults.get(text), fn.param_annotations.get(text)):
                if node is not None:
                    keys.update(_depended_on(model, node))
    return keys


@analysis
def _uses_by_key(model: Model) -> dict[str, list[Call]]:
    """Key → the unguarded calls of per-request code (and of Streamlit script code) with a text
    that may name an object of that key, in source order."""
    out: dict[str, list[Call]] = {}
    for call in model.calls:
        fn = call.function
        if not (model.is_concurrent_context(fn, call.in_main) or _session_script(model, fn)):
            continue
        if serialised(call) or isolated(model, fn):
            continue
        texts = [t for t in (call.receiver, call.func) if t]
        for arg in call.args:
            if arg.dotted:
                texts.append(arg.dotted)
                head = arg.dotted.rpartition(".")[0]
                if head:
                    texts.append(head)
            elif type(arg.node) is cst.List or type(arg.node) is cst.Tuple:  # ``Crew(agents=[a, b])``
                texts.extend(text for e in arg.node.elements if (text := dotted(e.value)))
                for e in arg.node.elements:
                    texts.extend(_picked_from_table(model, fn, e.value))
            texts.extend(_picked_from_table(model, fn, arg.node))
        keys: set[str] = set()
        for text in texts:
            keys |= _keys(model, call, text)
        for key in keys:
            out.setdefault(key, []).append(call)
    return out


def _session_script(model: Model, fn: Function | None) -> bool:
    """Code of a page script that its host runs once per session, concurrently across sessions:
    the module level of a Streamlit page or a servable Panel app, and the functions it calls
    (hosts.py)."""
    if not reruns_per_session(model):
        return False
    return fn is None or "streamlit" in model.contexts_of(fn)


def uses_in_concurrent_code(model: Model, shared: Shared) -> list[Call]:
    """Unguarded calls that run or mutate ``shared`` from code that runs per request/job."""
    found: list[Call] = []
    index = _uses_by_key(model)
    for key in _shared_keys(model, shared):
        for call in index.get(key, ()):
            if call in found:
                continue
            concurrent = model.is_concurrent_context(call.function, call.in_main) or (
                shared.factory is not None and _session_script(model, call.function)
            )
            # an object another module builds is process-wide, whoever reaches it: a page
            # script's session code too (every module the script imports is loaded once)
            if not concurrent and shared.fact is not None and shared.binding is None:
                concurrent = _session_script(model, call.function)
            if not concurrent:
                continue
            if shared.fact is not None and shared.fact.role == "runner":
                used = call.func == shared.name and _unshadowed(model, call.function, shared.name.split(".")[0])
            else:
                used = any(_refers(model, call, shared, text) for text in _texts(model, call, shared))
            if used:
                found.append(call)
    if found and all(_never_overlaps(model, shared, call) for call in found):
        return []
    if len(found) > 1:
        found.sort(key=model.order)
    return found


# Wrappers that turn a synchronous callable into a coroutine function (``wrap(fn)(...)`` is a
# coroutine) or call it in a worker thread and hand back a coroutine (``to_thread(fn, ...)``).
COROUTINE_WRAPPERS = frozenset(
    {
        "chainlit.make_async",
        "chainlit.sync.make_async",
        "asyncer.asyncify",
        "asgiref.sync.sync_to_async",
        "asyncio.to_thread",
        "anyio.to_thread.run_sync",
    }
)


def _never_overlaps(model: Model, shared: Shared, call: Call) -> bool:
    """A use of ``shared`` that no other run of it can overlap or inherit state from:

    * a complete run of an agent whose run starts by clearing the state it keeps (the catalog's
      ``resetting_run``: smolagents ``run(task)`` resets its memory unless ``reset=False``),
      called synchronously inside an ``async def``: it holds the event loop until it returns, so
      the next request's run starts after it ends and from a clean memory. Taught by
      nick0918964388/smolagent@216cc34e14 chainlit_app.py:49 (a Chainlit ``@cl.on_message``
      coroutine that calls ``manager_agent.run(...)``; bench/real-apps/labels-d.toml, near-miss);
      a streaming run (``stream=True``: a generator iterated across awaits or yields) and a run
      in a thread do overlap, and stay reported;
    * the callable handed to a coroutine wrapper (``make_async(agent.run)(...)``, a coroutine)
      that is the iterable of an ``async for``: ``async for`` needs an async iterator and raises
      TypeError on a coroutine before the wrapped run starts, so that code never runs the agent.
      Taught by nick0918964388/smolagent@216cc34e14 multi-agent/chainlit_app.py:40."""
    if _iterated_coroutine(model, call):
        return True
    entry = shared.entry
    fn = call.function
    if entry is None or not entry.resetting_run or fn is None or not fn.is_async or call.awaited:
        return False
    if call.method not in entry.run_methods or any(_hands_off(c) for c in call.outer):
        return False  # not a run, or one inside ``to_thread(lambda: agent.run(...))``: in a thread
    if sum(1 for a in call.args if a.keyword is None) > 1 or any(a.star for a in call.args):
        return False  # ``run(task, True)``: a streaming or a continued run, said positionally
    reset, stream = entry.resetting_run
    kept = call.kw(reset)
    if kept is not None and token_text(kept.node) != "True":
        return False  # ``reset=False`` (or a value decided at run time): it continues the last run
    streamed = call.kw(stream)
    return streamed is None or token_text(streamed.node) == "False"


def _hands_off(call: Call) -> bool:
    """A call that runs its argument somewhere else (a thread, an executor, a task)."""
    last = (call.method or call.func or "").rsplit(".", 1)[-1]
    return call.callee in COROUTINE_WRAPPERS or last in HAND_OFF_CALLS


HAND_OFF_CALLS = frozenset(
    {"run_in_executor", "submit", "map", "to_thread", "run_sync", "Thread", "Process", "create_task", "ensure_future"}
)


def _iterated_coroutine(model: Model, call: Call) -> bool:
    """``async for x in make_async(agent.run)(...)``: ``call`` is the wrapper call whose result,
    called, is the ``async for`` iterable (a coroutine, which ``async for`` refuses)."""
    if call.callee not in COROUTINE_WRAPPERS or type(call.node) is not cst.Call:
        return False
    parent = next((c for c in reversed(call.outer) if type(c.node) is cst.Call and c.node.func is call.node), None)
    if parent is None:
        return False
    for loop in parent.loops:
        node = loop.node
        if type(node) is cst.For and node.asynchronous is not None and node.iter is parent.node:
            return True
    return False


def uses_through_history_getter(model: Model, memory: Shared) -> tuple[list[Call], str]:
    """Per-request runs of a runnable whose session-history getter returns ``memory`` whatever
    the session id (``RunnableWithMessageHistory(chain, lambda session_id: history)``): the
    wrapper is shared by design, but every session then reads and writes that one history.
    Returns the runs and the wrapper's name, for the message."""
    if memory.binding is None or memory.binding.scope != "module" or memory.owner_class is not None:
        return [], ""
    for wrapper, call, entry, getter in _history_wrappers(model):
        if not _always_returns(model, getter.node, memory.binding, call.function):
            continue
        found = uses_in_concurrent_code(
            model, Shared(wrapper.target, wrapper.statement, entry.kind, entry, binding=wrapper)
        )
        if found:
            return found, wrapper.target
    return [], ""


@analysis
def _history_wrappers(model: Model) -> list[tuple[Binding, Call, Entry, Arg]]:
    """Bindings of runnables built with a session-history getter (``RunnableWithMessageHistory``):
    (binding, constructor call, catalog entry, the getter argument), in source order."""
    out = []
    for wrapper in model.bindings:
        call = wrapper.value_call
        entry = model.entry_for_call(call)
        if call is None or entry is None or not entry.history_getters or wrapper.in_main:
            continue
        getter = next((arg for key in entry.history_getters if (arg := call.arg(key)) is not None), None)
        if getter is not None:
            out.append((wrapper, call, entry, getter))
    return out


def _always_returns(model: Model, getter: cst.BaseExpression, memory: Binding, where: Function | None) -> bool:
    """Does the getter (a lambda, or the name of a function defined here) return ``memory``
    on every return, without looking at its arguments?"""
    if type(getter) is cst.Lambda:
        params = getter.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                names.add(star.name.value)
        body = getter.body
        return type(body) is cst.Name and body.value not in names and model.local_binding(body.value, where) is memory
    if type(getter) is not cst.Name:
        return False
    fn = model.function_named(getter.value, within=where)
    return (
        fn is not None
        and bool(fn.returns)
        and all(type(ret) is cst.Name and model.local_binding(ret.value, fn) is memory for ret in fn.returns)
    )
