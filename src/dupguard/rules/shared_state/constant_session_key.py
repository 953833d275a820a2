"""DUP103 constant-session-key: a ``thread_id`` / ``session_id`` that is the same for every
request, reached from per-request code.

A checkpointer or session store keyed by a constant is one conversation for every user: the
graph resumes the previous user's pending tool calls. The key is constant when it is

* a literal written at the key (``thread_id="default"``, ``{"thread_id": "1"}``);
* a name or attribute that holds one: a module constant (``SESSION_ID = "default"``), one
  imported from a config module, a literal attribute of a config class or of its module-level
  instance (``settings.THREAD_ID``); the project index (``dupguard.project``) knows the other
  modules' constants;
* an f-string with no per-request part (``f"{APP_NAME}-session"``);
* ``self.SESSION_ID`` when ``__init__`` sets it to one literal and the class's instance is made at
  module level (one helper, one key, for every caller);
* the literal default of a helper's parameter, when per-request code calls the helper without it.

It counts in a handler or worker, in a module-level config dict that a handler passes to a
call, and in a Streamlit script's session code when the graph or store it keys comes from
another module (imported modules are loaded once per process; the script's own objects are
rebuilt for every session, so a constant there selects a history that is already per session).

A parameterless process-wide cached factory (``@st.cache_resource``) that reads ``st.session_state``
and keys a conversation is reported too: it runs once, in the first visitor's session, and hands
that visitor's key to every later session (``cached_session_keys``).

Not flagged: a key whose store lives only for the request: a graph compiled in the handler with
no checkpointer, or with an in-memory one made there (nothing outlives the run). The model
records the keys (``Model.constant_keys``, ``Model.key_values``); this module decides which of
them are constant and which per-request code reaches.

A key of a memory built without a store it could share (the catalog's ``store_kwargs``: a
LlamaIndex ``Memory`` or ``ChatMemoryBuffer`` without ``chat_store=``/``async_database_uri=``, an
OpenAI Agents ``SQLiteSession`` without a file) names a conversation no other request can reach,
and is not reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import libcst as cst

from ...semantic import entrypoints as ep
from ...semantic.hosts import reruns_per_session
from ...semantic.model import Call, ConstantKey, Function, Model, is_literal, string_value
from ..registry import Finding, RuleContext, rule

# checkpointers that live in the process's memory: made inside a handler, they die with it
_IN_MEMORY_SAVERS = frozenset({"langgraph.checkpoint.memory.MemorySaver", "langgraph.checkpoint.memory.InMemorySaver"})


def constant_session_keys(model: Model) -> Iterator[tuple[ConstantKey, Call | None]]:
    """(constant key, the per-request call that uses it, when it is not where the key is)."""
    module_configs: dict[str, ConstantKey] = {}
    by_statement: dict[int, list[str]] | None = None  # id of a module-level statement → its targets
    for key in [*model.constant_keys, *_resolved_keys(model)]:
        if key.in_main and not reruns_per_session(model):
            continue
        if private_store(model, key.call) or _unkeyed_run_kwarg(model, key):
            continue
        if _streamlit_shared(model, key):
            yield key, None
            continue
        if key.function is not None:
            if (
                model.is_concurrent_context(key.function)
                and not _per_run_store(model, key)
                and not _handed_to_another_module(model, key)
            ):
                yield key, None
            continue
        if key.in_main:
            continue
        if by_statement is None:  # one pass over the bindings, not one per key
            by_statement = {}
            for b in model.bindings:
                if b.scope == "module":
                    by_statement.setdefault(id(b.statement), []).append(b.target)
        for target in by_statement.get(id(key.statement), ()):
            module_configs.setdefault(target, key)
    yield from _positional_keys(model)
    yield from _default_parameters(model)
    if not module_configs:
        return
    reported: set[int] = set()
    for call in model.calls:
        if not model.is_concurrent_context(call.function, call.in_main):
            continue
        for arg in call.args:
            config = module_configs.get(arg.dotted or "")
            if config is None or id(config) in reported:
                continue
            binding = model.local_binding(arg.dotted or "", call.function)
            if binding is not None and binding.scope == "module":
                reported.add(id(config))
                yield config, call


# ---------------------------------------------------------------------- constants by another name


def _resolved_keys(model: Model) -> Iterator[ConstantKey]:
    """The key values that are not literals where they are written but are constants all the same."""
    for key in model.key_values:
        found = constant_value(model, key.value, key.function)
        if found is not None:
            text, how = found
            yield ConstantKey(
                key=key.key,
                value=key.value,
                function=key.function,
                statement=key.statement,
                call=key.call,
                in_main=key.in_main,
                source=f"{text} ({how})",
            )


def constant_value(
    model: Model, node: cst.BaseExpression, fn: Function | None, depth: int = 0
) -> tuple[str, str] | None:
    """(the literal, how it gets here) when ``node`` has the same value on every call, else None."""
    if depth > 4:
        return None
    if is_literal(node):
        return _code(node), "a literal"
    if type(node) is cst.FormattedString:
        parts = [p for p in node.parts if type(p) is cst.FormattedStringExpression]
        if all(constant_value(model, p.expression, fn, depth + 1) is not None for p in parts):
            return _code(node), "an f-string with no per-request part"
        return None
    if type(node) is cst.ConcatenatedString:  # ``f"{APP}" "-chat"``: constant when every piece is
        pieces = (node.left, node.right)
        if all(constant_value(model, piece, fn, depth + 1) is not None for piece in pieces):
            return _code(node), "an f-string with no per-request part"
        return None
    if type(node) is cst.Name:
        return _name_value(model, node.value, fn, depth)
    if type(node) is cst.Attribute:
        return _attribute_value(model, node, fn)
    return None


def _name_value(model: Model, name: str, fn: Function | None, depth: int) -> tuple[str, str] | None:
    scope = fn
    while scope is not None:  # a parameter is per call (its default: ``_default_parameters``)
        if name in scope.params:
            return None
        scope = scope.parent
    binding = model.local_binding(name, fn)
    if binding is not None:
        if binding.scope == "module" and is_literal(binding.value):
            return _code(binding.value), f"the module constant `{name}`"
        if binding.function is not None and binding.function is fn:
            found = constant_value(model, binding.value, fn, depth + 1)
            return (found[0], f"`{name}`, {found[1]}") if found is not None else None
        return None
    fact = model.fact(model.resolve(name))
    if fact is not None and fact.role == "key":
        return fact.value, f"`{name}`, a constant from {fact.where}"
    return None


def _attribute_value(model: Model, node: cst.Attribute, fn: Function | None) -> tuple[str, str] | None:
    """``config.SESSION_ID`` (a module), ``settings.THREAD_ID`` (an instance of a config class),
    ``Config.THREAD_ID``: here or in another module of the project."""
    from ...semantic.nodes import dotted

    text = dotted(node)
    if text is None or text.count(".") != 1:
        return None
    head, attr = text.split(".")
    if head == "self":
        return _shared_instance_constant(model, text, fn)
    if head == "cls":
        return None
    fact = model.fact(model.resolve(text))
    if fact is not None and fact.role == "key":
        return fact.value, f"`{text}`, a constant from {fact.where}"
    if fn is not None and model.local_binding(head, fn) is not model.module_binding(head):
        return None
    binding = model.module_binding(head)
    owner = head if head in model.classes else None
    if owner is None and binding is not None and binding.value_call is not None:
        owner = binding.value_call.func if binding.value_call.func in model.classes else None
    if owner is None:
        return None
    for member in model.member_bindings(owner, attr):
        if member.scope == "class" and is_literal(member.value):
            return _code(member.value), f"`{text}`, a literal attribute of `{owner}`"
    return None


def _shared_instance_constant(model: Model, text: str, fn: Function | None) -> tuple[str, str] | None:
    """``self.SESSION_ID`` that ``__init__`` sets to one literal (and nothing else rebinds), on a class
    whose one instance is made at module level (``helper = Helper()``): every caller of that instance
    gets the same key. A class built per user or per request (``ChatAgent()`` in a factory) has a key
    per instance, its store is per instance as well, and is not reported."""
    if fn is None or fn.class_name is None:
        return None
    members = model.member_bindings(fn.class_name, text)
    if not members or any(
        m.function is None or m.function.name != "__init__" or not is_literal(m.value) for m in members
    ):
        return None
    values = {_code(m.value) for m in members}
    if len(values) != 1:
        return None
    instance = next(
        (
            b.target
            for b in model.bindings
            if b.scope == "module" and b.value_call is not None and b.value_call.func == fn.class_name
        ),
        None,
    )
    if instance is None:
        return None
    how = f"`{text}`, set in `{fn.class_name}.__init__` of the module-level instance `{instance}`"
    return values.pop(), how


def _code(node: cst.CSTNode) -> str:
    value = string_value(node)
    if isinstance(value, str):
        return f'"{value}"'
    return cst.Module(body=()).code_for_node(node)


def _default_parameters(model: Model) -> Iterator[tuple[ConstantKey, Call | None]]:
    """``def run(msg, thread_id="default"): graph.invoke(..., {"configurable": {"thread_id":
    thread_id}})`` called from a handler without ``thread_id``: every request gets the default.
    Reported at that call. (A handler's own parameter with a default is a request field.)"""
    for key in model.key_values:
        fn = key.function
        if fn is None or type(key.value) is not cst.Name or fn.contexts & {ep.HANDLER, ep.WORKER}:
            continue
        name = key.value.value
        default = fn.param_defaults.get(name)
        if default is None or not is_literal(default):
            continue
        for caller in model.callers(fn):
            if not model.is_concurrent_context(caller.function, caller.in_main) or _passes(caller, fn, name):
                continue
            yield (
                ConstantKey(
                    key=key.key,
                    value=caller.node,  # type: ignore[arg-type]
                    function=caller.function,
                    statement=caller.statement,
                    call=caller,
                    in_main=False,
                    source=f"{_code(default)} (the default of `{fn.name}`'s parameter `{name}`, not passed here)",
                ),
                None,
            )


def _passes(call: Call, fn: Function, name: str) -> bool:
    if any(arg.star for arg in call.args) or call.kw(name) is not None:
        return True
    params = list(fn.params)
    if fn.class_name is not None and params[:1] in (["self"], ["cls"]) and call.receiver is not None:
        params = params[1:]
    positional = [a for a in call.args if a.keyword is None]
    return name in params and params.index(name) < len(positional)


# ---------------------------------------------------------------------- where the key goes


def _consumers(model: Model, key: ConstantKey) -> list[Call]:
    """The calls the key is handed to: the calls around it, and the calls in the same scope
    that take the name the key's dict is bound to (``config = {...}; graph.invoke(x, config)``)."""
    out: list[Call] = []
    if key.call is not None:
        out.extend(reversed((*key.call.outer, key.call)))
    for b in model.bindings:
        if b.statement is key.statement and b.function is key.function and "." not in b.target:
            for call in key.function.calls if key.function is not None else model.calls:
                if call.function is key.function and any(arg.dotted == b.target for arg in call.args):
                    out.append(call)
    return out


def _handed_to_another_module(model: Model, key: ConstantKey) -> bool:
    """A config helper: the key is given to no call here (the function returns or stores the
    config) and the function runs per request only because another module's per-request code
    calls it (the project index's ``@called`` fact). Whether the key is shared depends on the
    store that caller hands it to, which this file cannot see: a checkpointer the caller opens for
    one run (``with SqliteSaver.from_conn_string(":memory:")``) keys nothing another request
    reaches (lenaar/financial-ai-agent memory.py ``get_thread_config``, 63389a3). Not reported."""
    fn = key.function
    if fn is None or model.project is None or model.project.called(fn.name) is None:
        return False
    if fn.decorators or fn.reached_from & {ep.HANDLER, ep.WORKER}:
        return False  # per request on this file's own evidence too
    return not _consumers(model, key)


def _per_run_store(model: Model, key: ConstantKey) -> bool:
    """Is every graph the key is given to built in this function with no checkpointer, or with
    an in-memory one made here? Then nothing keyed by it outlives the request."""
    fn = key.function
    found = False
    for call in _consumers(model, key):
        if call.receiver is None or "." in call.receiver or "(" in call.receiver:
            continue
        binding = model.local_binding(call.receiver, fn)
        built = binding.value_call if binding is not None and binding.function is fn else None
        if built is None or not (built.method == "compile" or (built.callee or "").endswith("create_react_agent")):
            return False
        checkpointer = built.kw("checkpointer")
        if checkpointer is not None and not _in_memory(model, checkpointer.node, fn):
            return False
        found = True
    return found


def _in_memory(model: Model, node: cst.BaseExpression, fn: Function | None) -> bool:
    call = model.call_for_node(node)
    if call is None and type(node) is cst.Name:
        binding = model.local_binding(node.value, fn)
        call = binding.value_call if binding is not None and binding.function is fn else None
    return call is not None and call.callee in _IN_MEMORY_SAVERS


def _streamlit_shared(model: Model, key: ConstantKey) -> bool:
    """A key in a Streamlit script's session code given to an object another module builds
    (process-wide), such as ``from graph_module import app; app.invoke(..., {"configurable":
    {"thread_id": "web"}})``: every visitor continues one thread."""
    if model.project is None or not reruns_per_session(model):
        return False
    fn = key.function
    if fn is not None and not (fn.contexts | fn.reached_from) & {"streamlit", ep.SCRIPT}:
        return False
    for call in _consumers(model, key):
        head = (call.receiver or "").split(".")[0]
        if not head or model.local_binding(head, fn) is not None:
            continue
        fact = model.fact(model.resolve(call.receiver))
        if fact is not None and fact.role == "object":
            return True
    return False


def _unkeyed_run_kwarg(model: Model, key: ConstantKey) -> bool:
    """Is the key a keyword of an agent run that the framework passes on as per-call data rather
    than use as a conversation key (the catalog's ``unkeyed_run_kwargs``: Strands
    ``agent(prompt, session_id="web")``)?"""
    from ...semantic.runs import receiver_entry

    call = key.call
    if call is None or not any(arg.keyword == key.key and arg.node is key.value for arg in call.args):
        return False
    if call.method and call.receiver:
        entry, _ = receiver_entry(model, call.receiver, call.function)
        method = call.method
    else:
        entry, _ = receiver_entry(model, call.func, call.function)
        method = "__call__"
    return entry is not None and method in entry.run_methods and key.key in entry.unkeyed_run_kwargs


def private_store(model: Model, call: Call | None) -> bool:
    """Is ``call`` the construction of a memory whose store is its own: none of the catalog's
    ``store_kwargs`` passed, or only an in-memory SQLite (``":memory:"``)?"""
    entry = model.entry_for_call(call)
    if call is None or entry is None or not entry.store_kwargs:
        return False
    for name in entry.store_kwargs:
        arg = call.arg(name)
        if arg is None:
            continue
        value = string_value(arg.node) if isinstance(arg.node, cst.SimpleString) else None
        if not (isinstance(value, str) and value.endswith(":memory:")):
            return False
    return True


def _positional_keys(model: Model) -> Iterator[tuple[ConstantKey, Call | None]]:
    """A literal passed where the catalog says a constructor takes its key positionally
    (``session_kwargs`` holding an index: ``SQLiteSession("whatsapp", "chats.db")``)."""
    for call in model.calls:
        entry = model.entry_for_call(call)
        if entry is None or call.in_main or not model.is_concurrent_context(call.function):
            continue
        if private_store(model, call):
            continue
        names = [k for k in entry.session_kwargs if not k.isdigit()] or ["session key"]
        for key in (k for k in entry.session_kwargs if k.isdigit()):
            arg = call.arg(key)
            if arg is not None and isinstance(arg.node, (cst.SimpleString, cst.Integer)):
                yield (
                    ConstantKey(
                        key=names[0],
                        value=arg.node,
                        function=call.function,
                        statement=call.statement,
                        call=call,
                        in_main=False,
                    ),
                    None,
                )


def cached_session_keys(model: Model) -> Iterator[tuple[Function, str]]:
    """A process-wide cached factory (``@st.cache_resource`` without ``scope="session"``) with no
    parameters that reads ``st.session_state`` and keys a conversation: its body runs once, in
    the first visitor's session, and every later session gets that visitor's key back from the
    cache (ketangoogle/google_adk_streamlit_chat_app services/adk_service.py, 3783017)."""
    from ...semantic.hosts import process_cache
    from ...semantic.nodes import dotted

    for fn in model.functions:
        if fn.params or not any(process_cache(d) for d in fn.decorators):
            continue
        keys = [k for k in (*model.key_values, *model.constant_keys) if k.function is fn]
        if not keys:
            continue
        reads = any(
            type(node) is cst.Attribute and model.resolve(dotted(node) or "") == "streamlit.session_state"
            for node in _walk(fn.node.body)
        )
        if reads:
            yield fn, keys[0].key


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


@rule("DUP103", name="constant-session-key")
def constant_session_key(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for cached, name in cached_session_keys(model):
        yield Finding(
            cached.node.name,
            f"`{cached.name}` is cached for the whole process but reads `st.session_state` and keys a conversation "
            f"(`{name}`): it runs once, in the first visitor's session, and every later session gets that "
            f"visitor's `{name}` from the cache; keep the id in `st.session_state` outside the cached function "
            '(or cache with `scope="session"`)',
        )
    for key, use in constant_session_keys(model):
        fn = use.function if use is not None else key.function
        streamlit = fn is None and reruns_per_session(model)
        where = f"`{fn.name}`" if fn else ("the Streamlit script" if streamlit else "`module code`")
        if use is not None:
            where += f", line {ctx.line(use.node)}"
        value = key.source or getattr(key.value, "value", "string")
        runs = "code that runs for every Streamlit session" if streamlit else "code that runs per request"
        yield Finding(
            key.value,
            f"`{key.key}` is the constant {value} in {runs} ({where}): every user shares one conversation "
            f"and replays its tool calls; derive `{key.key}` from the request (user or session id)",
        )
