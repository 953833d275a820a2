"""What executes tools: agent runs, tool executions, model calls, and the guards around them.

The retries family (DUP501/502/504/505) asks the same two questions of every call: does it
make tools run (so that running it again runs the tools again), and has the code already
made a second run harmless (an idempotency key, a seen-id set, a ``dupguard.runtime``
helper)? This module answers them from the model; the rule-specific shapes (retry loops,
replays, queue consumers, tool loops) live in ``retries.py``, ``toolcalls.py`` and
``dupguard.rules.retries.queue_without_lease``.

**An agent run** is a call that runs one agent turn, tools included:

- a method in the catalog entry's ``run_methods`` on a receiver that resolves to a catalog
  agent or stateless-but-tool-running object (``agent.achat``, ``user_proxy.initiate_chat``,
  ``crew.kickoff``, ``graph.invoke`` when the file builds a ``ToolNode``,
  ``create_react_agent(...).invoke``), whether the receiver is a local, a module binding,
  ``self.x``, a parameter annotated with the class, a ``Depends(factory)`` parameter or a
  factory call ``get_agent().run(...)``;
- a class-level run: ``Runner.run(agent, ...)`` / ``Runner.run_sync`` (openai-agents), where the
  agent is configuration and the runner executes its tools;
- calling the agent object itself when the entry lists ``__call__`` (Strands ``agent("...")``);
- an unresolved receiver whose name says it is an agent (``agent``, ``assistant``, ``crew``)
  called with a distinctive run method (``achat``, ``initiate_chat``, ``kickoff``…).

LLM clients (``ChatOpenAI``, ``OpenAIChatCompletionClient``) and tool-less chains
(``LLMChain``) are catalogued with run methods but run no tools: they are not agent runs.

**A tool execution** is a call that runs one tool (or a batch of them):

- a function named like one (``execute_tool``, ``run_tool``, ``process_tool_calls``,
  ``handle_tool_call``, ``dispatch_tool``…);
- a dispatch through a name-keyed table: ``TOOLS[name](**args)``, or
  ``fn = available_functions[name]; fn(**args)`` (the raw OpenAI loop), or
  ``getattr(tools, name)(**args)``;
- a tool object invoked: ``tool.invoke(args)``, ``tools_by_name[call["name"]].invoke(...)``;
- a call fed the name and the arguments of a tool call: ``execute(call.function.name,
  json.loads(call.function.arguments))``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .builder import dotted
from .catalog import Entry, Kind
from .model import Binding, Call, Function, Model, _is_name

if TYPE_CHECKING:
    import libcst as cst

# Catalogued objects with run methods that run no tools: a retry around them repeats a model
# call, not a tool call (see catalog_data for the sources of each entry).
LLM_ONLY = {
    "langchain_openai.ChatOpenAI",
    "autogen_ext.models.openai.OpenAIChatCompletionClient",
    "langchain.chains.LLMChain",
    "langchain.chains.ConversationChain",
}
# A compiled LangGraph graph runs tools only when the file builds it with a tool node.
GRAPH_ENTRIES = {"langgraph.graph.StateGraph.compile"}
TOOL_NODE_CALLEES = {
    "langgraph.prebuilt.ToolNode",
    "langgraph.prebuilt.tool_node.ToolNode",
    "langgraph.prebuilt.tools_condition",
    "langgraph.prebuilt.tool_node.tools_condition",
}
# Unresolved receivers: the name must say "agent" and the method must be a run method that
# only agent frameworks use.
AGENT_NAME_RE = re.compile(r"(agent|assistant|crew|swarm)s?$|^(agent|assistant|crew)", re.IGNORECASE)
DISTINCTIVE_RUN_METHODS = {
    "chat",
    "achat",
    "stream_chat",
    "astream_chat",
    "run",
    "arun",
    "run_sync",
    "invoke",
    "ainvoke",
    "initiate_chat",
    "a_initiate_chat",
    "kickoff",
    "kickoff_async",
    "akickoff",
    "invoke_async",
    "run_stream",
    "generate_reply",
    "a_generate_reply",
}

# a function whose name says it runs an agent turn (followed when it is defined in the file)
AGENT_HELPER_RE = re.compile(
    r"^_*a?(run|invoke|execute|call|kickoff|start|ask|chat_with)_(\w+_)?(agent|crew|assistant)s?(_\w+)?$"
)
TOOL_EXEC_RE = re.compile(
    r"^_*a?(?:execute|exec|run|call|invoke|dispatch|process|handle|perform|apply)_"
    r"(?:(?:the|one|single|each|all|pending|parallel)_)?"
    r"(?:tool|tools|tool_call|tool_calls|tool_use|tool_uses|function_call|function_calls)"
    r"(?:_once|_async|_sync|_batch)?$"
)
BATCH_EXEC_RE = re.compile(r"(tools|calls|uses|batch)(_once|_async|_sync|_batch)?$")
DISPATCH_WORDS = ("tool", "function", "func", "handler", "dispatch", "registry", "available", "action", "impl")
TOOL_OBJECT_METHODS = {
    "call",
    "acall",
    "invoke",
    "ainvoke",
    "run",
    "arun",
    "execute",
    "aexecute",
    "forward",
    "__call__",
    "run_json",
    "call_tool",
}
NOT_EXECUTIONS = {
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "put",
    "get",
    "set",
    "setdefault",
    "pop",
    "info",
    "debug",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "log",
    "print",
    "dumps",
    "loads",
    "format",
    "emit",
    "isinstance",
    "str",
    "repr",
    "dict",
    "len",
    "json",
}

# verbs of calls that look at a tool call without executing it
NOT_EXECUTION_RE = re.compile(
    r"^_*(log|record|trace|track|emit|validate|check|verify|parse|format|render|serialize|to_|display|show|"
    r"print|debug|notify|audit|describe|summari[sz]e|count|measure|observe|report|append|add|store|save|cache|"
    r"start_span|span|metric|stat|event|on_|callback|hook|publish|broadcast|stream_|yield_|make_|build_|create_)",
    re.IGNORECASE,
)
# Calls that check or record an idempotency key. Matched on the last name of the callee.
GUARD_CALL_RE = re.compile(
    r"(already|is|was|been|has)_?(been_)?(processed|handled|done|seen|executed|run|completed|applied|delivered)"
    r"|^_*(seen|dedup|dedupe|deduplicate|is_duplicate|check_duplicate|idempot|claim|should_skip|skip_if)",
    re.IGNORECASE,
)
# Names of sets/dicts that remember executed ids: ``if call.id in seen_call_ids: continue``.
SEEN_WORDS = ("seen", "done", "processed", "executed", "handled", "completed", "finished", "ledger", "results", "cache")
# Context managers and decorators that make a body run once per key.
ONCE_WORDS = ("lease", "idempot", "ledger", "dedup", "once", "turn_guard", "exactly")


@dataclass(eq=False)
class Run:
    """A call that makes tools run, seen from the call site that starts it."""

    call: Call  # the call in the code being examined (may be a helper call)
    what: str  # "agent run `agent.achat(...)`", "tool execution `execute_tool_call(...)`"
    kind: str  # "agent" | "tool"
    inner: Call  # the call that actually runs the agent or tool (== call unless via a helper)
    node: cst.CSTNode | None = None  # where to point at it, when not ``inner`` (a decorated executor)


# ----------------------------------------------------------------------------- receivers


def _function_entry(model: Model, fn: Function | None, depth: int = 0) -> Entry | None:
    """The catalog entry a module-local factory returns."""
    if fn is None or depth > 3:
        return None
    for ret in fn.returns:
        call = model.call_for_node(ret)
        if call is None and _is_name(ret):
            b = model.local_binding(ret.value, fn)  # type: ignore[attr-defined]
            call = b.value_call if b else None
        if call is not None:
            _, entry = model.kind_of_expr_call(call)
            if entry is not None:
                return entry
    return None


def _param_entry(model: Model, name: str, fn: Function) -> Entry | None:
    annotation = fn.param_annotations.get(name)
    if annotation is not None:
        text = dotted(annotation)
        resolved = model.resolve(text) if text else None
        entry = model.catalog.lookup(resolved) if resolved else None
        if entry is not None:
            return entry
    default = fn.param_defaults.get(name)
    call = model.call_for_node(default) if default is not None else None
    if call is not None and call.callee in ("fastapi.Depends", "fastapi.params.Depends") and call.args:
        factory = model.function_named(call.args[0].dotted or "")
        return _function_entry(model, factory)
    return None


def _binding_of(model: Model, text: str, fn: Function | None) -> Binding | None:
    if text.startswith("self.") and fn is not None and fn.class_name:
        found = None
        for b in model.bindings:
            if b.target == text and b.class_name == fn.class_name:
                found = b
        return found
    if "." in text or "(" in text or "[" in text:
        return None
    return model.local_binding(text, fn)


def receiver_entry(model: Model, text: str | None, fn: Function | None) -> tuple[Entry | None, bool]:
    """(catalog entry of the object ``text`` names, whether ``text`` resolved to anything).

    The second value is True when the name is bound to something we can see (a catalog
    object or not), so an unresolved-name heuristic does not override real knowledge.
    """
    if not text:
        return None, False
    if text.endswith("()") and "(" not in text[:-2] and "[" not in text:
        factory = model.function_named(text[:-2]) if "." not in text else None
        if factory is not None:
            return _function_entry(model, factory), True
        resolved = model.resolve(text[:-2])
        return (model.catalog.lookup(resolved) if resolved else None), resolved is not None
    if fn is not None and "." not in text and text in fn.params:
        return _param_entry(model, text, fn), fn.param_annotations.get(text) is not None
    binding = _binding_of(model, text, fn)
    if binding is not None:
        if binding.value_call is None:
            return None, True
        _, entry = model.kind_of_expr_call(binding.value_call)
        if entry is None and binding.value_call.method == "bind_tools":
            return None, True
        return entry, True
    resolved = model.resolve(text)
    if resolved is not None:
        return model.catalog.lookup(resolved), True
    return None, False


def _runs_tools(model: Model, entry: Entry) -> bool:
    if entry.kind not in (Kind.AGENT, Kind.STATELESS) or not entry.run_methods:
        return False
    if entry.names[0] in LLM_ONLY:
        return False
    if entry.names[0] in GRAPH_ENTRIES:
        return _file_has_tool_node(model)
    return True


def _file_has_tool_node(model: Model) -> bool:
    cached = getattr(model, "_dup5_tool_node", None)
    if cached is None:
        cached = any(c.callee in TOOL_NODE_CALLEES or c.method == "bind_tools" for c in model.calls)
        model._dup5_tool_node = cached  # type: ignore[attr-defined]
    return cached


def agent_run(model: Model, call: Call) -> str | None:
    """``"agent.achat"`` when ``call`` runs an agent turn (tools included), else None."""
    cache: dict[int, str | None] = model.__dict__.setdefault("_dup5_agent_run", {})
    key = id(call)
    if key not in cache:
        cache[key] = _agent_run(model, call)
    return cache[key]


def _agent_run(model: Model, call: Call) -> str | None:
    fn = call.function
    if call.method and call.receiver:
        entry, known = receiver_entry(model, call.receiver, fn)
        if entry is not None:
            if call.method in entry.run_methods and _runs_tools(model, entry):
                return f"{call.receiver}.{call.method}".replace("[]", "[...]")
            return None
        last = call.receiver.rsplit(".", 1)[-1]
        if call.method in DISTINCTIVE_RUN_METHODS and AGENT_NAME_RE.search(last) and not _llm_like(model, call, known):
            return f"{call.receiver}.{call.method}".replace("[]", "[...]")
        return None
    if (
        call.func
        and "." not in call.func
        and "[" not in call.func
        and AGENT_HELPER_RE.match(call.func)
        and model.called_function(call) is None
    ):
        return call.func  # ``run_support_agent(ticket)`` imported from the project's agent module
    if call.func and "." not in call.func and "[" not in call.func:
        if call.callee is not None:
            return None  # ``Agent(...)``: constructing the class, not calling an instance
        entry, _ = receiver_entry(model, call.func, fn)
        if entry is not None and "__call__" in entry.run_methods and _runs_tools(model, entry):
            return call.func
    return None


def _llm_like(model: Model, call: Call, known: bool) -> bool:
    """A name that says agent but is bound to something that is not one (an HTTP client, a
    ``dupguard.runtime`` wrapper whose runs are guarded, …)."""
    if not known:
        return False
    binding = _binding_of(model, call.receiver or "", call.function)
    if binding is None or binding.value_call is None:
        return False
    root = (binding.value_call.callee or "").split(".")[0]
    return root in NON_AGENT_ROOTS


NON_AGENT_ROOTS = {
    "httpx",
    "requests",
    "aiohttp",
    "urllib3",
    "docker",
    "paramiko",
    "subprocess",
    "boto3",
    "fake_useragent",
    "dupguard",
    "openai",
    "anthropic",
    "litellm",
    "ollama",
    "mistralai",
}


# ----------------------------------------------------------------------------- tool executions


def _last(text: str | None) -> str:
    return (text or "").replace("[]", "").replace("()", "").rsplit(".", 1)[-1]


def _is_dispatch_table(text: str | None) -> bool:
    lowered = (text or "").lower()
    return any(word in lowered for word in DISPATCH_WORDS)


def _subscript_base(node: cst.CSTNode) -> str | None:
    """``TOOLS`` for ``TOOLS[name]``, ``registry`` for ``registry.get(name)``."""
    if type(node).__name__ == "Subscript":
        return dotted(node.value) or ""  # type: ignore[attr-defined]
    return None


def _mentions_name_key(node: cst.CSTNode) -> bool:
    """Is a subscript keyed by something that mentions a name (``call.function.name``)?"""
    return "name" in _text(node).lower()


def _text(node: cst.CSTNode, limit: int = 60) -> str:
    """Names, attributes and string literals of a small expression (``call "function" "name"``),
    for word checks only. Follows subscripts, calls and their arguments; nothing else."""
    out: list[str] = []
    stack = [node]
    while stack and len(out) < limit:
        n = stack.pop()
        kind = type(n).__name__
        if kind == "Name" or kind == "SimpleString":
            out.append(n.value)  # type: ignore[attr-defined]
        elif kind == "Attribute":
            out.append("." + n.attr.value)  # type: ignore[attr-defined]
            stack.append(n.value)  # type: ignore[attr-defined]
        elif kind == "Subscript":
            stack.extend(e.slice.value for e in n.slice if hasattr(e.slice, "value"))  # type: ignore[attr-defined]
            stack.append(n.value)  # type: ignore[attr-defined]
        elif kind == "Call":
            stack.extend(a.value for a in n.args)  # type: ignore[attr-defined]
            stack.append(n.func)  # type: ignore[attr-defined]
        elif kind == "UnaryOperation" or kind == "Await":
            stack.append(n.expression)  # type: ignore[attr-defined]
        elif kind == "BooleanOperation":
            stack.extend((n.right, n.left))  # type: ignore[attr-defined]
        elif kind == "Comparison":
            stack.extend(t.comparator for t in n.comparisons)  # type: ignore[attr-defined]
            stack.append(n.left)  # type: ignore[attr-defined]
    return " ".join(out)


def names_in(node: cst.CSTNode) -> set[str]:
    """Plain names an expression reads (the heads of attribute chains included)."""
    found: set[str] = set()

    def walk(n: cst.CSTNode) -> None:
        kind = type(n).__name__
        if kind == "Name":
            found.add(n.value)  # type: ignore[attr-defined]
            return
        if kind == "Attribute":
            walk(n.value)  # type: ignore[attr-defined]
            return
        if kind in ("Lambda", "FunctionDef"):
            return
        for child in n.children:
            walk(child)

    walk(node)
    return found


def tool_execution(model: Model, call: Call) -> str | None:
    """``"execute_tool_call"`` / ``"TOOLS[...]"`` when ``call`` executes a tool, else None."""
    cache: dict[int, str | None] = model.__dict__.setdefault("_dup5_tool_exec", {})
    key = id(call)
    if key not in cache:
        cache[key] = _tool_execution(model, call)
    return cache[key]


def _tool_execution(model: Model, call: Call) -> str | None:
    if (call.callee or "").startswith("dupguard."):
        return None
    name = _last(call.method or call.func)
    if name and TOOL_EXEC_RE.match(name):
        return (call.func or name).replace("[]", "[...]")
    func = call.func or ""
    # TOOLS[name](**args)
    if func.endswith("[]") and _is_dispatch_table(func[:-2].rsplit(".", 1)[-1]):
        return func[:-2] + "[...]"
    # fn = TOOL_MAP[call["function"]["name"]]; fn(**args)   /   fn = registry.get(name)
    if (
        func
        and "." not in func
        and "(" not in func
        and "[" not in func
        and call.callee is None
        and call.function is not None
        and func in call.function.local_names
    ):
        binding = model.local_binding(func, call.function)
        if binding is not None and binding.function is call.function:
            base = _subscript_base(binding.value)
            if base is not None and (_is_dispatch_table(base) or _mentions_name_key(binding.value)):
                return f"{func}|{base}[...]"
            vc = binding.value_call
            if vc is not None and vc.method == "get" and _is_dispatch_table(vc.receiver) and vc.args:
                return f"{func}|{vc.receiver}.get(...)"
    # getattr(tools, name)(**args)
    if func == "getattr()":
        inner = model.call_for_node(call.node.func)
        if inner is not None and inner.args and _is_dispatch_table(inner.args[0].dotted):
            return f"getattr({inner.args[0].dotted}, ...)"
    # tool.invoke(args), tools_by_name[name].invoke(args)
    if call.method in TOOL_OBJECT_METHODS and call.receiver:
        last = call.receiver.rsplit(".", 1)[-1].lower()
        if "tool" in last and not any(w in last for w in ("llm", "model", "client", "chat", "schema", "spec")):
            entry, _ = receiver_entry(model, call.receiver, call.function)
            if entry is None or entry.kind is Kind.TOOL:
                return f"{call.receiver}.{call.method}".replace("[]", "[...]")
    # execute(call) for call in msg.tool_calls
    if name and GENERIC_EXEC_RE.match(name) and _fed_a_tool_call_object(call):
        return (call.func or name).replace("[]", "[...]")
    # execute(call.function.name, json.loads(call.function.arguments))
    if (
        name
        and name not in NOT_EXECUTIONS
        and not NOT_EXECUTION_RE.match(name)
        and len(call.args) >= 2
        and _fed_a_tool_call(model, call)
    ):
        return (call.func or name).replace("[]", "[...]")
    return None


GENERIC_EXEC_RE = re.compile(
    r"^_*a?(execute|exec|run|call|invoke|dispatch|handle|process|perform)"
    r"(_(one|single|each|call|it|tool\w*|function\w*))?$"
)
TOOL_CALLS_ITERABLE_RE = re.compile(r"tool_?calls?|tool_?uses?|function_?calls?", re.IGNORECASE)


def _fed_a_tool_call_object(call: Call) -> bool:
    """A positional argument is the variable of a loop over a response's tool calls."""
    names = {a.dotted for a in call.args if a.keyword is None and a.dotted and "." not in a.dotted}
    if not names:
        return False
    for loop in call.loops:
        node = loop.node
        kind = type(node).__name__
        if kind == "For":
            target, iterable = node.target, node.iter  # type: ignore[attr-defined]
        elif kind in ("ListComp", "SetComp", "GeneratorExp", "DictComp"):
            target, iterable = node.for_in.target, node.for_in.iter  # type: ignore[attr-defined]
        else:
            continue
        if (dotted(target) or "") in names and TOOL_CALLS_ITERABLE_RE.search(_text(iterable)):
            return True
    return False


def _fed_a_tool_call(model: Model, call: Call) -> bool:
    """The call receives a tool call's name and its arguments: ``call.function.name`` with
    ``json.loads(call.function.arguments)``, ``block.name`` with ``block.input``."""
    name_heads: set[str] = set()
    arg_heads: set[str] = set()
    for arg in call.args:
        text = arg.dotted or ""
        kind = type(arg.node).__name__
        node_text = _text(arg.node)
        if text.endswith((".function.name", ".tool_name")) or (
            kind == "Subscript" and "function" in node_text and "name" in node_text
        ):
            name_heads.add("*")
        elif text.endswith(".name"):
            name_heads.add(text[:-5])
        if text.endswith((".function.arguments", ".tool_input")) or (
            kind in ("Call", "Subscript") and "arguments" in node_text
        ):
            arg_heads.add("*")
        elif text.endswith(".input"):
            arg_heads.add(text[:-6])
    if "*" in name_heads and "*" in arg_heads:
        return True
    return bool(name_heads & arg_heads - {"*"})


# ----------------------------------------------------------------------------- guards


def _comparison_parts(node: cst.CSTNode) -> Iterator[tuple[str, cst.CSTNode, cst.CSTNode]]:
    """(operator, left, right) of every comparison in a test (through not/and/or)."""
    kind = type(node).__name__
    if kind == "Comparison":
        left = node.left  # type: ignore[attr-defined]
        for target in node.comparisons:  # type: ignore[attr-defined]
            yield type(target.operator).__name__, left, target.comparator
            left = target.comparator
    elif kind == "UnaryOperation":
        yield from _comparison_parts(node.expression)  # type: ignore[attr-defined]
    elif kind == "BooleanOperation":
        yield from _comparison_parts(node.left)  # type: ignore[attr-defined]
        yield from _comparison_parts(node.right)  # type: ignore[attr-defined]


def is_seen_test(test: cst.CSTNode) -> bool:
    """``call.id in seen``, ``block.id not in done``, ``key in processed_ids``."""
    for op, left, right in _comparison_parts(test):
        if op not in ("In", "NotIn"):
            continue
        container = _text(right).lower()
        item = _text(left).lower()
        if any(w in container for w in SEEN_WORDS) or re.search(r"(\bid\b|_id\b|\.id\b|'id'|\"id\")", item):
            return True
    return False


IDEMPOTENCY_WORDS = ("processed", "already", "seen", "duplicate", "dedup", "idempot", "handled", "claimed")


def is_idempotency_test(test: cst.CSTNode) -> bool:
    """The test of an early exit that checks a key: ``if record.processed: return``,
    ``if Event.objects.filter(id=eid).exists(): return``, ``if not created: return``
    (``get_or_create``), ``if not cache.add(key, 1): return`` and ``if not r.sadd("seen", key)``
    (atomic claims)."""
    tokens = set(_text(test).lower().split())
    if any(word in token for token in tokens for word in IDEMPOTENCY_WORDS):
        return True
    if "created" in tokens or ".setnx" in tokens or ".sadd" in tokens or ".set_if_absent" in tokens:
        return True
    if ".exists" in tokens and (".filter" in tokens or ".objects" in tokens):
        return True
    return ".add" in tokens and any("cache" in token for token in tokens)


def is_guard_call(model: Model, call: Call) -> bool:
    """An idempotency check or claim: ``already_processed(key)``, ``redis.set(k, v, nx=True)``,
    a ``dupguard.runtime`` helper, or a user guard from ``extend-idempotency-guards``."""
    callee = call.callee or ""
    func = call.func or ""
    if callee.startswith("dupguard.runtime") or _runtime_receiver(model, call):
        return True
    guards = model.idempotency_guards
    if guards and (
        callee in guards
        or func in guards
        or ("." not in func and call.callee is None and any(g.rsplit(".", 1)[-1] == func for g in guards))
    ):
        return True
    if GUARD_CALL_RE.search(_last(func)):
        return True
    nx = call.kw("nx")
    return nx is not None and getattr(nx.node, "value", None) == "True"


def _runtime_receiver(model: Model, call: Call) -> bool:
    """A method called on an object built from ``dupguard.runtime`` (``ledger.begin(...)``)."""
    if not call.receiver:
        return False
    binding = _binding_of(model, call.receiver, call.function)
    vc = binding.value_call if binding is not None else None
    return vc is not None and (vc.callee or "").startswith("dupguard.runtime")


def once_context(call: Call) -> bool:
    """Inside ``with turn_lease(...)`` / ``with ledger...`` / a function decorated ``@idempotent``."""
    if any(any(w in text.lower() for w in ONCE_WORDS) for text in call.withs):
        return True
    fn = call.function
    while fn is not None:
        for dec in fn.decorators:
            text = f"{dec.dotted or ''} {dec.callee or ''}".lower()
            if "idempot" in text or "dupguard.runtime" in text or "once" in text:
                return True
        fn = fn.parent
    return False


def guarded_in(model: Model, fn: Function | None, before: Call | None = None) -> bool:
    """Does ``fn`` (or a function it is nested in) check an idempotency key or a seen-id set
    before ``before`` (anywhere when ``before`` is None)?"""
    limit = _index(model, before) if before is not None else None
    while fn is not None:
        for test in fn.exit_tests:
            if is_seen_test(test) or is_idempotency_test(test):
                return True
        for call in fn.calls:
            if limit is not None and _index(model, call) >= limit:
                continue
            if is_guard_call(model, call):
                return True
        fn = fn.parent
    return False


def call_guarded(model: Model, call: Call) -> bool:
    """Is this particular run made safe to repeat: under a seen-id condition, inside a
    once-context, or after an idempotency check in its function?"""
    if once_context(call):
        return True
    if any(is_seen_test(t) or _guard_in_test(model, call, t) for t in call.conditions):
        return True
    return guarded_in(model, call.function, call)


def _guard_in_test(model: Model, call: Call, test: cst.CSTNode) -> bool:
    """A guard call inside the test of an enclosing ``if`` (``if not first_time(key):``)."""
    fn = call.function
    calls = fn.calls if fn is not None else model.calls
    return any(getattr(c.statement, "test", None) is test and is_guard_call(model, c) for c in calls)


def _index(model: Model, call: Call) -> int:
    index = getattr(model, "_dup5_index", None)
    if index is None:
        index = {id(c): i for i, c in enumerate(model.calls)}
        model._dup5_index = index  # type: ignore[attr-defined]
    return index.get(id(call), -1)


def call_index(model: Model, call: Call) -> int:
    """Source order of a call among all calls of the file."""
    return _index(model, call)


# ----------------------------------------------------------------------------- runs through helpers


def direct_run(model: Model, call: Call) -> Run | None:
    what = agent_run(model, call)
    if what is not None:
        return Run(call, f"agent run `{what}(...)`", "agent", call)
    what = tool_execution(model, call)
    if what is not None:
        name, _, source = what.partition("|")
        label = f"tool execution `{name}(...)`" + (f" (picked from `{source}`)" if source else "")
        return Run(call, label, "tool", call)
    return None


def helper_runs(model: Model, fn: Function) -> list[Run]:
    """Unguarded agent runs / tool executions inside a module-local function, and inside the
    module-local functions it calls (memoised per function; a call cycle contributes nothing)."""
    cache: dict[int, list[Run] | None] = model.__dict__.setdefault("_dup5_helper_runs", {})
    key = id(fn)
    if key in cache:
        return cache[key] or []
    cache[key] = None  # in progress: a recursive call sees no runs
    out: list[Run] = []
    for call in fn.calls:
        if call.function is not fn:
            continue
        run = run_at(model, call)
        if run is not None and not call_guarded(model, run.call):
            out.append(run)
    cache[key] = out
    return out


def run_at(model: Model, call: Call) -> Run | None:
    """The run a call starts: itself, or the first unguarded run inside the helper it calls."""
    run = direct_run(model, call)
    if run is not None:
        return run
    helper = model.called_function(call)
    if helper is None or helper is call.function:
        return None
    inner = helper_runs(model, helper)
    if inner:
        first = inner[0]
        return Run(call, f"{first.what} inside `{helper.name}()`", first.kind, first.inner, first.node)
    return None


def is_model_call(model: Model, call: Call) -> bool:
    """A chat-model request that can answer with tool calls."""
    receiver = call.receiver or ""
    last = receiver.rsplit(".", 1)[-1]
    if call.method in ("create", "acreate", "parse", "stream") and last in ("completions", "messages", "responses"):
        return True
    if call.callee in MODEL_CALLEES or call.method in ("generate_content", "generate_content_async"):
        return True
    if call.method in ("complete", "complete_async") and last == "chat":
        return True
    if call.kw("tools") is not None and call.kw("messages") is not None:
        return True
    if call.method in ("invoke", "ainvoke") and receiver:
        entry, _ = receiver_entry(model, receiver, call.function)
        if entry is not None and entry.names[0] == "langchain_openai.ChatOpenAI":
            return True
        binding = _binding_of(model, receiver, call.function)
        if binding is not None and binding.value_call is not None and binding.value_call.method == "bind_tools":
            return True
    return False


MODEL_CALLEES = {
    "litellm.completion",
    "litellm.acompletion",
    "ollama.chat",
    "ollama.AsyncClient.chat",
    "mistralai.Mistral.chat.complete",
}
